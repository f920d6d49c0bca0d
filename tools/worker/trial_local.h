/* Every machine of a trial on this host (--all-local): one child process each, their
 * iteration lines and the trial's done line on one output, as one trial of any launcher. */
#ifndef TUNEDECK_TRIAL_LOCAL_H
#define TUNEDECK_TRIAL_LOCAL_H

#include <stdio.h>

#include "tools/worker/sgd_machine.h"

/* base gives plan, schedule, steps, connect_timeout_s, secret and log; slowdown is per flat
 * device of the cluster (NULL = none). */
int trial_local_run(const SgdMachineConfig *base, const double *slowdown, FILE *out, Error *err);

#endif
