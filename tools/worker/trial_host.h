/* One machine of a per-host trial: this process is the schedule's machine NAME, its PS shard
 * (if it is a PS) listening on port_base + its index among the schedule's machines, its
 * workers reaching every shard at its machine's "host" on the same rule. */
#ifndef TUNEDECK_TRIAL_HOST_H
#define TUNEDECK_TRIAL_HOST_H

#include "tools/worker/sgd_machine.h"

/* base gives plan, schedule, steps, connect_timeout_s, secret and log; the rest is this
 * machine's, `from` naming where name came from ("--machine", "$TUNEDECK_MACHINE"). slowdown is per
 * flat device of the cluster (NULL = none). Prints this machine's protocol iteration lines, then a
 * done line from its own post-warmup times, on standard output. A machine that is neither worker
 * nor PS returns 0 at once. */
int trial_host_run(const SgdMachineConfig *base, const char *name, const char *from, int port_base,
                   const double *slowdown, Error *err);

#endif
