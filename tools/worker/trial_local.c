/* Every machine of a trial on this host (see trial_local.h). */
#include "tools/worker/trial_local.h"

#include "tools/worker/sgd_local.h"

int trial_local_run(const SgdMachineConfig *base, const double *slowdown, FILE *out, Error *err)
{
    /* The lines a launcher reads: each machine's iterations, then the done line that the
     * per-host mode leaves to tunedeck's merge. */
    SgdLocalConfig lc = {
        .base = *base, .slowdown = slowdown, .iteration_lines = 1, .print_done = 1};
    return sgd_local_run(&lc, out, err);
}
