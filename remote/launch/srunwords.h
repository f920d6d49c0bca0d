/* What a Slurm step's lines say of why it failed: Slurm's own end of the step, the task srun
 * names as failed and its last words (by srun --label; by order without labels), and every
 * node's rank fan-out notice (rankfan.h), said in the trial's reason at its end. */
#ifndef TUNEDECK_SRUNWORDS_H
#define TUNEDECK_SRUNWORDS_H

#include "core/model/observation.h"

typedef struct SrunWords SrunWords;

SrunWords *srunwords_new(void);
void srunwords_free(SrunWords *w);
/* A line of standard error, its label stripped: a task's (`task` >= 0), or, -1, srun's own
 * or an unlabeled one. */
void srunwords_stderr(SrunWords *w, long task, const char *line);
/* A line of standard output, its label stripped: a node's fan-out notice is kept. */
void srunwords_stdout(SrunWords *w, const char *line);
/* The step is over and the inner launcher gave `o`: a failed one's reason gains the failed
 * task's words and the other nodes' notices; a step Slurm ended for its own reason is a
 * failed trial in Slurm's words. */
void srunwords_explain(const SrunWords *w, Observation *o);

#endif
