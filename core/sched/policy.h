/* Scheduling policies as a table chosen by name: each turns the active jobs and the free
 * capacity into a GPU count per job. Pins are applied before the policy runs (the policy
 * allocates around them); paused jobs are never shown to it. Counts only: placement on
 * nodes is core/sched/placement.h's job. */
#ifndef TUNEDECK_POLICY_H
#define TUNEDECK_POLICY_H

#include <stddef.h>

typedef enum {
    POLICY_KNOWS_NOTHING,    /* tiresias, fixed-N: no job model */
    POLICY_KNOWS_ORACLE,     /* optimus-oracle: true throughput, known work */
    POLICY_KNOWS_PRECOMPUTE, /* the fitted model is known at arrival (seed §4) */
    POLICY_KNOWS_EXPLORE,    /* a new job first runs at 1, 2, 4, 8 GPUs to fit its model */
} PolicyKnowledge;

typedef struct {
    double submit_s;
    double attained_gpu_s; /* GPU-seconds held so far */
    int requested_gpus;    /* the owner's ask */
    int cur_gpus;          /* held now */
    int pinned;            /* > 0: must get exactly this many */
    int max_gpus;          /* most GPUs the job can use (batch limits, usable cluster) */
    int explore_gpus;      /* > 0: in its exploration phase, wants exactly this many */
    double remaining;      /* remaining work, in the job's progress units */
    double age_s;          /* since its submission */
    size_t n_restarts;     /* allocations holding GPUs after its first (the artifact's count) */
    int most_gpus_held;    /* the largest allocation it has run on (0: never ran) */
} PolicyJob;

typedef struct {
    const PolicyJob *jobs;
    size_t n;
    int capacity; /* GPUs usable (drained nodes excluded) */
    double now_s, resize_cost_s;
    /* Estimated progress per second of job i on w GPUs (packed), 0 when infeasible. The
     * estimate is whatever the policy's knowledge allows. */
    double (*speed)(void *ud, size_t i, int w);
    void *ud;
    int node_gpus; /* GPUs of the largest node (0: unknown) */
} PolicyInput;

typedef struct {
    const char *name;
    const char *summary;
    PolicyKnowledge knowledge;
    int adaptive_batch; /* the simulator picks each job's batch for its GPU count */
    int fixed_gpus;     /* fixed-N: N, else 0 */
    /* Writes gpus[i] for every job (0 = none); the sum must not exceed capacity. */
    int (*allocate)(const PolicyInput *in, int *gpus);
} Policy;

const Policy *policy_find(const char *name);
const char *const *policy_names(void);
/* The same names joined by ", ", for help and error messages. */
const char *policy_names_joined(void);

/* Runs the policy around pins and exploration phases, then clamps to capacity: the single
 * entry point the simulator uses. No job is shown, pinned, explored or given more than
 * min(its max_gpus, capacity). Returns -1 only on allocation failure. */
int policy_decide(const Policy *p, const PolicyInput *in, int *gpus);

/* Estimated remaining time of job i on w GPUs (+inf when infeasible or w == 0). */
double policy_remaining_s(const PolicyInput *in, size_t i, int w);

extern const Policy POLICY_DOUBLING, POLICY_DOUBLING_EXPLORE, POLICY_DOUBLING_SEED, POLICY_OPTIMUS,
    POLICY_TIRESIAS;
extern const Policy POLICY_POLLUX;
extern const Policy POLICY_FIXED_1, POLICY_FIXED_2, POLICY_FIXED_4, POLICY_FIXED_8;

#endif
