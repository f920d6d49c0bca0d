/* Policies without job knowledge: fixed-N (each job gets N GPUs, first come first served,
 * the seed's fixed strategies) and Tiresias (Gu et al., NSDI 2019) two-dimensional
 * least-attained service: two queues split at a GPU-time threshold, first come first served
 * inside a queue, each job exactly the GPUs its owner asked for, preempting lower-priority
 * jobs and backfilling around the ones that do not fit. A job that asks for more than the job
 * can use or the cluster has usable (the caller's max_gpus) gets that much: waiting for an ask
 * the cluster cannot meet would never end. */
#include <stdlib.h>

#include "core/sched/policy.h"

/* Tiresias' queue threshold in GPU-seconds (the Pollux artifact's 2-queue setting). */
#define TIRESIAS_THRESHOLD_GPU_S (3600.0 * 16)

static int fill_in_order(const PolicyInput *in, const size_t *order, int fixed_n, int *gpus)
{
    int cap = in->capacity;
    for (size_t k = 0; k < in->n; k++) {
        size_t i = order[k];
        const PolicyJob *j = &in->jobs[i];
        int want = fixed_n ? fixed_n : j->requested_gpus;
        if (want > j->max_gpus)
            want = j->max_gpus;
        if (want < 1)
            want = 1;
        if (want <= cap) {
            gpus[i] = want;
            cap -= want;
        } else {
            gpus[i] = 0;
        }
    }
    return 0;
}

static int fixed_allocate(const PolicyInput *in, int n_per_job, int *gpus)
{
    size_t *order = malloc((in->n ? in->n : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < in->n; i++)
        order[i] = i; /* the input is in submission order */
    int rc = fill_in_order(in, order, n_per_job, gpus);
    free(order);
    return rc;
}

static int fixed1(const PolicyInput *in, int *g)
{
    return fixed_allocate(in, 1, g);
}
static int fixed2(const PolicyInput *in, int *g)
{
    return fixed_allocate(in, 2, g);
}
static int fixed4(const PolicyInput *in, int *g)
{
    return fixed_allocate(in, 4, g);
}
static int fixed8(const PolicyInput *in, int *g)
{
    return fixed_allocate(in, 8, g);
}

static int tiresias_allocate(const PolicyInput *in, int *gpus)
{
    size_t *order = malloc((in->n ? in->n : 1) * sizeof *order);
    if (!order)
        return -1;
    size_t k = 0;
    for (int q = 0; q < 2; q++)
        for (size_t i = 0; i < in->n; i++) {
            int demoted = in->jobs[i].attained_gpu_s >= TIRESIAS_THRESHOLD_GPU_S;
            if (demoted == q)
                order[k++] = i;
        }
    int rc = fill_in_order(in, order, 0, gpus);
    free(order);
    return rc;
}

#define FIXED(N)                                                                                   \
    const Policy POLICY_FIXED_##N = {.name = "fixed-" #N,                                          \
                                     .summary = "every job gets " #N " GPU(s), FIFO",              \
                                     .knowledge = POLICY_KNOWS_NOTHING,                            \
                                     .fixed_gpus = N,                                              \
                                     .allocate = fixed##N}
FIXED(1);
FIXED(2);
FIXED(4);
FIXED(8);

const Policy POLICY_TIRESIAS = {
    .name = "tiresias",
    .summary = "2D least-attained service, owners' GPU counts and batches, no job model",
    .knowledge = POLICY_KNOWS_NOTHING,
    .allocate = tiresias_allocate,
};
