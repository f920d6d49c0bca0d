/* Pollux (Qiao et al., OSDI 2021, §4.2) as the artifact's simulator runs it
 * (petuum/adaptdl, branch osdi21-artifact, simulator/pollux.py): each job's speedup is its
 * goodput — throughput × statistical efficiency at its best batch — on w GPUs over its
 * goodput at the fair share ceil(GPUs / jobs); the allocation maximizes the power mean of
 * the speedups with p = −1, a job's speedup discounted by the restart factor
 * max(age − restarts·δ, 0) / (age + δ) when its allocation changes (δ = the resize stall).
 * A job that never ran is assumed to scale linearly and gets at most one GPU; one that ran
 * on at most r GPUs gets at most max(2r, 1), and never more than 64: Pollux explores sizes
 * as it learns its throughput model.
 *
 * Search: the paper uses a genetic algorithm (NSGA-II, 100 × 100) because its objective
 * also places replicas on nodes. Here placement is core/sched/placement.c's job and the
 * objective Σ 1/(speedup_j + ε) is separable over jobs under one capacity constraint, so an
 * exact dynamic program over jobs × GPUs finds the optimum: cost[j][g] = the least sum over
 * the first j jobs using at most g GPUs. O(jobs × GPUs × 64) time, jobs × GPUs bytes. */
#include <math.h>
#include <stdlib.h>

#include "core/sched/policy.h"

#define POLLUX_P_EPS 1e-3      /* the artifact's ε in (speedup + ε)^p */
#define POLLUX_MAX_REPLICAS 64 /* the artifact's simulator caps every job there */

/* Most GPUs the search may give job i now. */
static int search_cap(const PolicyInput *in, size_t i)
{
    const PolicyJob *j = &in->jobs[i];
    int cap = j->most_gpus_held > 0 ? 2 * j->most_gpus_held : 1;
    if (cap > POLLUX_MAX_REPLICAS)
        cap = POLLUX_MAX_REPLICAS;
    if (cap > j->max_gpus)
        cap = j->max_gpus;
    if (cap > in->capacity)
        cap = in->capacity;
    return cap < 0 ? 0 : cap;
}

/* 1 / (scaled speedup + ε) for w = 0..cap: what job i adds to the objective's sum. */
static void job_costs(const PolicyInput *in, size_t i, int fair, int cap, double *cost)
{
    const PolicyJob *j = &in->jobs[i];
    /* The artifact scales every speedup by (nodes × dominant share) = 1 / GPUs per node so
     * that a node's worth counts as 1; it only matters against ε. */
    double scale = in->node_gpus > 0 ? 1.0 / in->node_gpus : 1.0;
    double base = 0;
    if (j->most_gpus_held > 0) {
        int wf = fair < j->max_gpus ? fair : j->max_gpus;
        base = in->speed(in->ud, i, wf > 0 ? wf : 1);
    }
    double delay = in->resize_cost_s;
    double restart = j->age_s + delay > 0
                         ? fmax(j->age_s - (double)j->n_restarts * delay, 0.0) / (j->age_s + delay)
                         : 1.0;
    for (int w = 0; w <= cap; w++) {
        double speedup;
        if (w == 0)
            speedup = 0;
        else if (!(base > 0)) /* no throughput model yet: linear, as the artifact assumes */
            speedup = (double)w / fair;
        else
            speedup = in->speed(in->ud, i, w) / base;
        if (w != j->cur_gpus)
            speedup *= restart;
        cost[w] = 1.0 / (scale * speedup + POLLUX_P_EPS);
    }
}

static int pollux_allocate(const PolicyInput *in, int *gpus)
{
    size_t n = in->n;
    int C = in->capacity;
    if (n == 0)
        return 0;
    int fair = (C + (int)n - 1) / (int)n;
    if (fair < 1)
        fair = 1;
    size_t row = (size_t)C + 1;
    double *best = malloc(row * sizeof *best), *next = malloc(row * sizeof *next);
    double *cost = malloc((POLLUX_MAX_REPLICAS + 1) * sizeof *cost);
    unsigned char *choice = malloc(n * row);
    if (!best || !next || !cost || !choice) {
        free(best), free(next), free(cost), free(choice);
        return -1;
    }
    for (size_t g = 0; g < row; g++)
        best[g] = 0;
    for (size_t i = 0; i < n; i++) {
        int cap = search_cap(in, i);
        job_costs(in, i, fair, cap, cost);
        unsigned char *ch = choice + i * row;
        for (int g = 0; g <= C; g++) {
            double b = best[g] + cost[0];
            int bw = 0;
            for (int w = 1; w <= cap && w <= g; w++) {
                double v = best[g - w] + cost[w];
                if (v < b) /* strict: on a tie the smaller allocation */
                    b = v, bw = w;
            }
            next[g] = b;
            ch[g] = (unsigned char)bw;
        }
        double *t = best;
        best = next;
        next = t;
    }
    int g = C;
    for (size_t i = n; i-- > 0;) {
        gpus[i] = choice[i * row + (size_t)g];
        g -= gpus[i];
    }
    free(best), free(next), free(cost), free(choice);
    return 0;
}

const Policy POLICY_POLLUX = {
    .name = "pollux",
    .summary = "Pollux (OSDI'21): goodput speedups, power mean p=-1, restart penalty; exact DP",
    .knowledge = POLICY_KNOWS_PRECOMPUTE,
    .adaptive_batch = 1,
    .allocate = pollux_allocate,
};
