/* The parameter-server settings' best-known schedule (simcluster_best_known): exhaustive over
 * how many machines of each type are workers, parameter servers or both, with the exact
 * balance of the batch for each (a deadline found by bisection); allreduce jobs delegate to
 * sim_allreduce.c. The yardstick the benchmarks' ratios divide by. */
#include "core/sim/simcluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim/simcluster_priv.h"

typedef struct {
    int worker_only, ps_only, both;
} RoleCounts;

/* Inputs one worker of truth type t can take within `budget_s`, and how it splits them. */
static double capacity(const SimCluster *s, const TypeTruth *t, double budget_s, double *cpu_x,
                       double *gpu_x)
{
    double cpu_only = budget_s * t->cpu_gops / s->gop - t->cpu_sat;
    cpu_only = cpu_only > 0 ? cpu_only : 0;
    *cpu_x = cpu_only;
    *gpu_x = 0;
    if (!t->n_gpus)
        return cpu_only;
    double cap = simtruth_gpu_cap(s, t);
    double gpu_only = budget_s * t->gpu_gops / s->gop - t->gpu_sat;
    gpu_only = gpu_only < 0 ? 0 : gpu_only > cap ? cap : gpu_only;
    double b2 = budget_s - simtruth_aggregation_time(s);
    double both_g = b2 * t->gpu_gops / (s->gop * t->interference) - t->gpu_sat;
    double both_c = b2 * t->cpu_gops / s->gop - t->cpu_sat;
    both_g = both_g < 0 ? 0 : both_g > cap ? cap : both_g;
    both_c = both_c < 0 ? 0 : both_c;
    double best = cpu_only;
    if (gpu_only > best) {
        best = gpu_only;
        *cpu_x = 0;
        *gpu_x = gpu_only;
    }
    if (both_g > 0 && both_c > 0 && both_g + both_c > best) {
        best = both_g + both_c;
        *cpu_x = both_c;
        *gpu_x = both_g;
    }
    return best;
}

/* Builds the integer schedule for role counts per cluster type and evaluates it. */
static double build_and_time(SimCluster *s, const RoleCounts *rc, Schedule *sch)
{
    const Cluster *c = s->cluster;
    memset(sch->worker, 0, c->n_machines);
    memset(sch->ps, 0, c->n_machines);
    memset(sch->inputs, 0, c->n_devices * sizeof *sch->inputs);
    int workers = 0;
    for (size_t ti = 0; ti < c->n_types; ti++)
        workers += rc[ti].worker_only + rc[ti].both;
    if (!workers)
        return INFINITY;
    /* Bisection on the compute deadline: the smallest one at which workers fit the batch. */
    double lo = 0, hi = 1;
    for (;;) {
        double total = 0, cx, gx;
        for (size_t ti = 0; ti < c->n_types; ti++)
            total += (rc[ti].worker_only + rc[ti].both) *
                     capacity(s, s->truth_of_type[ti], hi, &cx, &gx);
        if (total >= s->job.batch || hi > 1e7)
            break;
        hi *= 2;
    }
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi), total = 0, cx, gx;
        for (size_t ti = 0; ti < c->n_types; ti++)
            total += (rc[ti].worker_only + rc[ti].both) *
                     capacity(s, s->truth_of_type[ti], mid, &cx, &gx);
        if (total >= s->job.batch)
            hi = mid;
        else
            lo = mid;
    }
    /* Assign roles machine by machine within each type, with real-valued loads. */
    double *want = calloc(c->n_devices ? c->n_devices : 1, sizeof *want);
    if (!want)
        return INFINITY; /* out of memory: no best known */
    int used[64] = {0};
    for (size_t m = 0; m < c->n_machines; m++) {
        size_t ti = c->machines[m].type;
        int k = used[ti]++;
        const RoleCounts *r = &rc[ti];
        int is_worker = k < r->worker_only + r->both;
        int is_ps = k >= r->worker_only && k < r->worker_only + r->both + r->ps_only;
        sch->worker[m] = (unsigned char)is_worker;
        sch->ps[m] = (unsigned char)is_ps;
        if (!is_worker)
            continue;
        double cx, gx;
        capacity(s, s->truth_of_type[ti], hi, &cx, &gx);
        want[c->machines[m].first_device] = cx;
        if (c->types[ti].n_devices > 1)
            want[c->machines[m].first_device + 1] = gx;
    }
    double sum = 0;
    for (size_t d = 0; d < c->n_devices; d++)
        sum += want[d];
    int rc_split = sum > 0 ? schedule_split_integer(want, c->n_devices, s->job.batch, sch->inputs)
                           : -1;
    free(want);
    if (rc_split < 0)
        return INFINITY;
    return simcluster_noiseless_time(s, sch);
}

/* Enumerates every (worker-only, ps-only, both) count for each type, recursively. */
static void search(SimCluster *s, RoleCounts *rc, size_t ti, Schedule *scratch, double *best,
                   Schedule *best_sched)
{
    const Cluster *c = s->cluster;
    if (ti == c->n_types) {
        int w = 0, p = 0;
        for (size_t i = 0; i < c->n_types; i++) {
            w += rc[i].worker_only + rc[i].both;
            p += rc[i].ps_only + rc[i].both;
        }
        if (!w || !p)
            return;
        double v = build_and_time(s, rc, scratch);
        if (v < *best) {
            *best = v;
            schedule_copy_into(best_sched, scratch);
        }
        return;
    }
    int n = 0;
    for (size_t m = 0; m < c->n_machines; m++)
        n += c->machines[m].type == ti;
    for (int a = 0; a <= n; a++)
        for (int b = 0; a + b <= n; b++)
            for (int d = 0; a + b + d <= n; d++) {
                rc[ti] = (RoleCounts){a, d, b};
                search(s, rc, ti + 1, scratch, best, best_sched);
            }
}

/* Role-count combinations the search would visit: C(n+3, 3) per type, multiplied. */
static double search_size(const Cluster *c)
{
    double total = 1;
    for (size_t ti = 0; ti < c->n_types; ti++) {
        double n = 0;
        for (size_t m = 0; m < c->n_machines; m++)
            n += c->machines[m].type == ti;
        total *= (n + 3) * (n + 2) * (n + 1) / 6;
    }
    return total;
}

double simcluster_best_known(SimCluster *s, Schedule **best)
{
    if (!s->best_cached) {
        RoleCounts rc[64];
        Schedule *scratch = schedule_new(s->cluster, &s->job);
        s->best = schedule_new(s->cluster, &s->job);
        s->best_s = INFINITY;
        if (s->job.sync == JOB_SYNC_ALLREDUCE)
            s->best_s = simar_best_known(s, s->best); /* INFINITY without s->best */
        else if (scratch && s->best && s->cluster->n_types <= 64 &&
                 search_size(s->cluster) <= 5e6)
            search(s, rc, 0, scratch, &s->best_s, s->best);
        schedule_free(scratch);
        s->best_cached = 1;
    }
    if (best)
        *best = s->best_s < INFINITY ? schedule_copy(s->best) : NULL;
    return s->best_s;
}
