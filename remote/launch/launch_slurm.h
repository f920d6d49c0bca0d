/* The slurm launcher's command lines (remote/launch/launch_slurm.c), built without running
 * anything: the same text runs here or, quoted once more, on the login node. */
#ifndef TUNEDECK_LAUNCH_SLURM_H
#define TUNEDECK_LAUNCH_SLURM_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/model/schedule.h"
#include "remote/launch/launcher.h"

/* The shell command that runs a trial of `s` as srun steps of cfg->slurm_job, every argument
 * quoted; limit_min is the step's --time. Caller frees. */
char *launch_slurm_command(const LaunchConfig *cfg, const Schedule *s, double limit_min,
                           Error *err);
/* `scancel 'J.S' ...` for the steps a trial reported ("J.S J.S ..."), quoted for a remote
 * shell; NULL when there is none (or out of memory). Caller frees. */
char *launch_slurm_scancel_command(const char *steps);
/* The length of the step id ("JOB.STEP") when `line` is a task's step mark for a step of
 * allocation `job`, else 0: any other line, a forged mark for another job or a whole job
 * among them, is the trial's own text. */
size_t launch_slurm_step_mark(const char *line, const char *job);

#endif
