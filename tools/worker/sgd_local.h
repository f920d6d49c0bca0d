/* Plays every machine of a schedule on this box: one child process per machine (its PS shard
 * and/or worker), PS ports picked free on 127.0.0.1, their protocol lines relayed to one
 * output, and the trial's done line formed from the merged iterations. */
#ifndef TUNEDECK_SGD_LOCAL_H
#define TUNEDECK_SGD_LOCAL_H

#include <signal.h>
#include <stdio.h>

#include "tools/worker/sgd_machine.h"

typedef struct {
    /* plan, schedule, init_params, first_step, steps, examples_base, connect_timeout_s and
     * on_step are used as given; machine, ports, hosts, slowdown and on_iteration are set
     * per child. */
    SgdMachineConfig base;
    const double *slowdown;      /* per flat device of the cluster; NULL = none */
    int iteration_lines;         /* workers print protocol iteration lines */
    int print_done;              /* the done line from the merged iterations */
    volatile sig_atomic_t *stop; /* when it becomes non-zero, PS children get SIGTERM */
} SgdLocalConfig;

/* Returns -1 (with the first failing machine named) when any child fails. */
int sgd_local_run(const SgdLocalConfig *cfg, FILE *out, Error *err);

#endif
