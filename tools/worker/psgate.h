/* A shard's door: it accepts connections until every worker rank of the job has one that
 * passed the handshake (tools/worker/psauth.h). A peer that fails it, or stays silent past
 * its time, is dropped with a log line naming its address and why; it neither ends the run
 * nor delays the real workers, whose handshakes go on beside it. */
#ifndef TUNEDECK_PSGATE_H
#define TUNEDECK_PSGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/base/secret.h"

enum { PSGATE_MAX_PENDING = 64 }; /* handshakes at once; past it the least advanced goes */

typedef void (*PsLogFn)(void *userdata, const char *line);

typedef struct {
    int listen_fd; /* borrowed; made non-blocking */
    const unsigned char *secret; /* SECRET_BYTES; borrowed */
    uint32_t shard;
    size_t n_workers;
    double timeout_s;           /* for the next worker to join; restarts when one does */
    double handshake_timeout_s; /* for one peer to finish its handshake */
    PsLogFn log;                /* the refusals; may be NULL */
    void *log_userdata;
} PsGateConfig;

/* Fills conn[rank] (n_workers fds, owned by the caller after) with each worker's
 * authenticated connection. -1 when the time runs out (the message counts the refused
 * peers and names the last) or two connections prove the same rank. */
int psgate_admit(const PsGateConfig *cfg, int *conn, Error *err);

#endif
