/* What a Slurm step's lines say of why it failed: Slurm's own end of the step, the task srun
 * names as failed and its last words (by srun --label; by order without labels), and every
 * node's rank fan-out notice (rankfan.h), said in the trial's reason at its end. */
#ifndef TUNEDECK_SRUNWORDS_H
#define TUNEDECK_SRUNWORDS_H

#include "core/model/observation.h"

typedef struct SrunWords SrunWords;

/* What every task of a step says first on standard error: its node ("tunedeck-node n3"). In
 * one step over several components of a heterogeneous allocation, srun labels each task
 * with its number in the whole step, but its own word of a failure numbers it within its
 * component ("srun: error: n3: task 0: Exited ..." of the step's task 2): the node it names
 * is what says which task failed. */
#define SRUNWORDS_NODE_MARK "tunedeck-node "

SrunWords *srunwords_new(void);
void srunwords_free(SrunWords *w);
/* Whether `line` (a task's standard error, its label stripped) is the node mark: 0 when
 * not, 2 when it gave a labeled task its node, 1 for another (the first mark of a task is
 * kept: a trial that prints one cannot move its task later). A mark is neither a task's
 * words nor a line for the log as it stands. */
int srunwords_node(SrunWords *w, long task, const char *line);
/* The node of `task` as its mark said, or NULL. */
const char *srunwords_node_of(const SrunWords *w, long task);
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
