/* Slurm's queue as `squeue` prints it in fixed columns, parsed without running anything
 * (tested on captured output, fuzzed): each job's state, size, GRES, nodes and, for a
 * pending job, Slurm's reason (Resources, Priority...). */
#ifndef TUNEDECK_SLURM_QUEUE_H
#define TUNEDECK_SLURM_QUEUE_H

#include <stddef.h>

#include "core/base/error.h"

#define SLURM_SQUEUE_FORMAT "%i|%u|%T|%D|%b|%N|%r|%j"

typedef struct {
    char id[32];
    char user[64];
    char state[24];   /* RUNNING, PENDING, ... */
    int nodes;
    char gres[64];    /* "gres:gpu:2", "N/A" */
    char nodelist[128];          /* one too long ends in "..." (hosts --slurm shows it) */
    unsigned long nodelist_hash; /* of the whole nodelist, to tell a change past the cut */
    char reason[64];  /* pending reason ("Resources", "Priority"), "None" */
    char name[128];
} SlurmQueueJob;

typedef struct {
    SlurmQueueJob *v;
    size_t n;
    /* v's jobs sorted by every field, the id first (slurm_queue_index), or NULL: what
     * slurm_queue_same and slurm_queue_moves_nodes would otherwise sort anew at each call */
    const SlurmQueueJob **sorted;
} SlurmQueue;

/* Parses `squeue -h -o SLURM_SQUEUE_FORMAT`; the job name (last) may hold '|'. A node count
 * that is not a whole number is an error naming the line; a text field too long for its
 * column is kept cut, ending in "...". */
int slurm_queue_parse(const char *text, const char *source, SlurmQueue *out, Error *err);
/* The same for `squeue -h -o SLURM_SQUEUE_FORMAT"|"MARK`: each record ends in "|MARK" at
 * the end of a line, and a name's newlines stay inside its record. Slurm prints a job's
 * name as its owner gave it, newlines too, so without a mark that user could not be told
 * from Slurm: `sbatch -J $'x\n7|ops|COMPLETED|...'` wrote a row of its own (a job of
 * someone else's, ended), and a bare newline made every round fail. MARK is random and new
 * to each round (slurm_watch.c), so no name submitted before that round can hold it. */
int slurm_queue_parse_marked(const char *text, const char *mark, const char *source,
                             SlurmQueue *out, Error *err);
void slurm_queue_clear(SlurmQueue *q);
/* Sorts the queue's index once (q->sorted), for every comparison it is in after: the watch
 * compares each round's queue with the one before, then keeps it as the next round's
 * `before`. 0, or -1 out of memory (the comparisons then sort for themselves, as without). */
int slurm_queue_index(SlurmQueue *q);

/* The two queues hold the same jobs with the same fields, in whatever order (squeue's order
 * moves with priorities): 1, else 0 (also when out of memory, as a change is the safe
 * answer). What the watch compares rounds on: the rows as parsed, the round's mark already
 * off them, so a new mark is never a change. */
int slurm_queue_same(const SlurmQueue *a, const SlurmQueue *b);

/* The queue says some node changed state since `before` (the previous look at it), in a
 * way the node table shows: a job started running (or runs on other nodes now), went back
 * to pending (requeued: a node failed under it, or it was preempted), shows a node failure
 * (NODE_FAIL, BOOT_FAIL, a requeue state), or waits with a new reason about nodes
 * (ReqNodeNotAvail, NodeDown...). A job that ends is not counted: the nodes it frees are
 * shown at the watch's next regular look (remote/slurm/slurm_watch.h). */
int slurm_queue_moves_nodes(const SlurmQueue *before, const SlurmQueue *now);

#endif
