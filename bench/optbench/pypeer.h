/* The bridge to a Python peer (bench/generic_peer.py: Optuna's samplers and a numpy GP-EI), a
 * process answering one JSON line per request on its stdin/stdout. Shared by the optimizer
 * benchmarks, bench/optimizer and bench/optimizer_allreduce. */
#ifndef TUNEDECK_BENCH_PYPEER_H
#define TUNEDECK_BENCH_PYPEER_H

#include <cJSON.h>
#include <sys/types.h>

#include "core/base/error.h"
#include "core/base/linebuf.h"
#include "core/model/schedule.h"

typedef struct {
    pid_t pid;
    int to_fd, from_fd;
    LineBuf buf;
} PyPeer;

/* Starts `python script` with one BLAS thread and reads its greeting, which it returns
 * (the caller cJSON_Deletes it); NULL, nothing left running, when it cannot. */
cJSON *pypeer_start(PyPeer *p, const char *python, const char *script, Error *err);
/* Sends one request (NULL: just read) and returns its parsed answer; an answer carrying
 * "error" is an error. */
cJSON *pypeer_call(PyPeer *p, const char *request, Error *err);
/* Asks for the next point of the generic flat space (core/opt/flatsched.h: per machine a role,
 * per device a share) and decodes it for cluster c and job. *undecodable (optional) is set
 * when the peer answered but its point is no schedule. */
Schedule *pypeer_ask(PyPeer *p, const Cluster *c, const JobSpec *job, int *undecodable,
                     Error *err);
/* Ends the process (end of input, then SIGKILL after 2 s); a stopped peer may be stopped
 * again. */
void pypeer_stop(PyPeer *p);

#endif
