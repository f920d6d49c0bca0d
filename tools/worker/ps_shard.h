/* One parameter-server shard of synchronous SGD: it waits for every worker's gradient of an
 * iteration, applies the averaged step to its slice of the parameters and sends the slice
 * back to every worker (the seed's synchronous PS scheme). */
#ifndef TUNEDECK_PS_SHARD_H
#define TUNEDECK_PS_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "tools/worker/psgate.h"

/* Called after every step with the mean loss over the batch and the examples behind it.
 * Returns non-zero to make this the last step (job mode: a stop was requested); negative,
 * with err filled, when the step's own work failed (job mode: its checkpoint could not be
 * written): the workers are told to stop all the same, and the shard fails with err. */
typedef int (*PsStepFn)(void *userdata, uint64_t step, double mean_loss, uint32_t examples,
                        const double *shard, Error *err);

typedef struct {
    int listen_fd; /* borrowed; the shard only accepts on it */
    uint32_t shard;
    size_t n_workers;
    size_t lo, hi;  /* the slice [lo, hi) of the flat parameter vector */
    double *params; /* hi - lo values, updated in place; borrowed */
    double learning_rate;
    uint64_t first_step; /* steps already taken (resume) */
    uint64_t steps;      /* steps to run; 0 = until on_step says stop */
    double connect_timeout_s;
    const unsigned char *secret; /* the job's SECRET_BYTES; every worker must prove it */
    PsLogFn log;                 /* peers refused at the handshake; may be NULL */
    void *log_userdata;
    PsStepFn on_step; /* may be NULL */
    void *userdata;
} PsShardConfig;

/* Admits its workers through the handshake (tools/worker/psgate.h), serves until the last
 * step, then sends STOP with the final parameters. */
int ps_shard_run(const PsShardConfig *cfg, Error *err);

#endif
