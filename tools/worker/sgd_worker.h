/* One worker machine of synchronous parameter-server SGD: each iteration its devices compute
 * forward/backward passes over their inputs in parallel, it pushes the gradient slices to
 * every PS shard and pulls the updated parameters back, and reports the timings. */
#ifndef TUNEDECK_SGD_WORKER_H
#define TUNEDECK_SGD_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "tools/worker/sgdplan.h"

typedef struct {
    uint64_t step;     /* 1-based optimizer step this iteration produced */
    double time_s;     /* compute start to the last parameters received */
    double compute_s;  /* this machine: its devices and the gradient aggregation */
    double comm_s;     /* time_s minus the slowest worker's compute (from the PS) */
    double mean_loss;  /* over the whole batch, from the PS */
    uint32_t examples; /* the whole batch, from the PS */
    size_t n_devices;  /* this machine's devices with inputs */
    const char **device_ids;
    const int *device_inputs;
    const double *device_s;
} SgdIteration;

typedef void (*SgdIterationFn)(void *userdata, const SgdIteration *it);

typedef struct {
    const SgdPlan *plan;
    const Schedule *schedule;
    size_t machine;
    char (*ps_host)[256];   /* per shard */
    const int *ps_port;     /* per shard */
    const double *slowdown; /* per device of this machine, >= 1; NULL = none */
    uint64_t examples_base; /* data position of the first step this run takes (resume) */
    double connect_timeout_s;    /* also bounds each shard's handshake */
    const unsigned char *secret; /* the job's SECRET_BYTES, proven to every shard */
    SgdIterationFn on_iteration;
    void *userdata;
} SgdWorkerConfig;

/* Runs until a shard sends STOP. */
int sgd_worker_run(const SgdWorkerConfig *cfg, Error *err);

/* The protocol v1 iteration line (DESIGN §5.1) of one machine's iteration `iter`; caller
 * frees. */
char *sgd_iteration_format(const SgdIteration *it, const char *machine, int iter);

#endif
