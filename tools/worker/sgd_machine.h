/* Everything one machine of a schedule does in a parameter-server SGD run: its PS shard (in
 * a thread) when it is a PS, its worker loop when it is a worker. */
#ifndef TUNEDECK_SGD_MACHINE_H
#define TUNEDECK_SGD_MACHINE_H

#include "tools/worker/ps_shard.h"
#include "tools/worker/sgd_worker.h"

typedef struct {
    const SgdPlan *plan;
    const Schedule *schedule;
    size_t machine;
    int ps_listen_fd;          /* bound by the caller when the machine is a PS; else -1 */
    char (*ps_host)[256];      /* per shard */
    const int *ps_port;        /* per shard */
    const double *slowdown;    /* per device of this machine; NULL = none */
    const double *init_params; /* the full starting vector; NULL = fresh from data_seed */
    uint64_t first_step;       /* steps already taken (resume) */
    uint64_t steps;            /* 0 = until the PS's on_step asks to stop */
    uint64_t examples_base;    /* data position of the first step */
    double connect_timeout_s;
    const unsigned char *secret; /* the job's SECRET_BYTES (tools/worker/psauth.h) */
    PsLogFn log;                 /* PS side: peers refused at the handshake; may be NULL */
    void *log_userdata;
    PsStepFn on_step; /* PS side */
    void *step_userdata;
    SgdIterationFn on_iteration; /* worker side */
    void *userdata;
} SgdMachineConfig;

int sgd_machine_run(const SgdMachineConfig *cfg, Error *err);

#endif
