/* What the slurm launcher's two files share: launch_slurm.c (the run: srun's lines read
 * back, the steps cancelled) and launch_slurm_cmd.c (the srun and scancel command text). */
#ifndef TUNEDECK_LAUNCH_SLURM_PRIV_H
#define TUNEDECK_LAUNCH_SLURM_PRIV_H

#include <stddef.h>
#include <stdint.h>

/* What each step's first task writes to stderr before the step id (launch_slurm_cmd.c's
 * task script); launch_slurm.c reads it back. */
#define STEP_MARK "tunedeck-step "

/* The step ids as scancel's arguments, in `copy` (a copy of steps that argv points into). */
size_t launch_slurm_steps_argv(const char *steps, char *copy, size_t copy_cap,
                               const char **argv, size_t cap);
/* Appends the step ids in piece's first n bytes (a slice of the reported "J.S J.S", which may
 * begin or end at a separating space) to list (cap bytes), one space between each. */
void launch_slurm_steps_join(char *list, size_t cap, const char *piece, size_t n);

/* The step's --time, in Slurm's whole minutes, for a trial timeout of timeout_s: rounded up,
 * at least 1 (Slurm reads 0 as no limit). */
double launch_slurm_limit_min(double timeout_s);

/* Moves a slurm run's backstop (the moment its steps are cancelled whatever srun does) to
 * at_ms, for tests: it is the step's limit, whole minutes, plus 120 s away, longer than any
 * unit test may wait, and what follows it (the scancel, a drop under it) is what is tested. */
void launch_slurm_backstop_move(void *run, int64_t at_ms);

#endif
