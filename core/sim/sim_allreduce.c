/* The simulator's allreduce ground truth: hierarchical allreduce (NCCL-like: within each node
 * over its GPU link, then across nodes over the slowest participating network link) in the
 * cost forms of core/model/allreduce.c, plus what those forms leave out; and the best-known
 * schedule of an allreduce setting by exhaustive search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/allreduce.h"
#include "core/sim/simcluster_priv.h"

/* Hidden constants: a TCP/socket transport reaches ~85% of the link; per-message latencies
 * of a network hop and an NVLink/PCIe hop; the reduction itself at 400 GB/s on a GPU. */
static const double NIC_EFFICIENCY = 0.85;
static const double ALPHA_INTER_S = 25e-6, ALPHA_INTRA_S = 8e-6;
static const double GAMMA_S_PER_BYTE = 1.0 / 400e9;
/* What the forms do not know: a ring waits for its slowest member, more so the more nodes
 * it spans; every rank adds launch and bucket bookkeeping. */
static const double STRAGGLER_PER_NODE = 0.03, RANK_OVERHEAD_S = 3e-4;

static int loaded_devices(const Cluster *c, const Schedule *sch, size_t m)
{
    const Machine *mc = &c->machines[m];
    int n = 0;
    for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
        n += sch->inputs[mc->first_device + d] > 0;
    return n;
}

double simar_comm_time(const SimCluster *s, const Schedule *sch)
{
    const Cluster *c = s->cluster;
    double bytes = s->net->model_mb * 1e6, intra = 0, min_gbps = INFINITY;
    int nodes = 0, ranks = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        int g = sch->worker[m] ? loaded_devices(c, sch, m) : 0;
        if (!g)
            continue;
        nodes++;
        ranks += g;
        const TypeTruth *t = s->truth_of_type[c->machines[m].type];
        if (g > 1) {
            double link = t->intra_gbytes_s > 0 ? t->intra_gbytes_s : 10.0;
            AllreduceParams p = {ALPHA_INTRA_S, 1.0 / (link * 1e9), GAMMA_S_PER_BYTE, bytes};
            intra = fmax(intra, allreduce_time_s(s->job.collective, g, &p));
        }
        min_gbps = fmin(min_gbps, c->types[c->machines[m].type].bandwidth_gbps);
    }
    double inter = 0;
    if (nodes > 1) {
        AllreduceParams p = {ALPHA_INTER_S, 1.0 / (min_gbps * 0.125e9 * NIC_EFFICIENCY),
                             GAMMA_S_PER_BYTE, bytes};
        inter = allreduce_time_s(s->job.collective, nodes, &p);
    }
    return (intra + inter) * (1.0 + STRAGGLER_PER_NODE * (nodes > 0 ? nodes - 1 : 0)) +
           RANK_OVERHEAD_S * ranks;
}

/* ---- best known: every multiset of per-machine GPU counts per type, exact balance ---- */

typedef struct {
    SimCluster *s;
    int *gpus; /* n_machines: GPUs each machine loads */
    Schedule *scratch;
    Schedule *best;
    double best_s;
    int out_of_memory; /* a balance could not be computed: the search is incomplete */
} Search;

/* Inputs one GPU of a machine loading g of them takes within budget_s. */
static double gpu_capacity(const SimCluster *s, const TypeTruth *t, int g, double budget_s)
{
    double b = budget_s - (g > 1 ? simtruth_aggregation_time(s) : 0);
    double x = b * t->gpu_gops / (s->gop * (g > 1 ? t->interference : 1.0)) - t->gpu_sat;
    double cap = simtruth_gpu_cap(s, t);
    return x < 0 ? 0 : x > cap ? cap : x;
}

static double total_capacity(const Search *q, double budget_s)
{
    const Cluster *c = q->s->cluster;
    double total = 0;
    for (size_t m = 0; m < c->n_machines; m++)
        if (q->gpus[m])
            total += q->gpus[m] * gpu_capacity(q->s, q->s->truth_of_type[c->machines[m].type],
                                               q->gpus[m], budget_s);
    return total;
}

static void evaluate_counts(Search *q)
{
    SimCluster *s = q->s;
    const Cluster *c = s->cluster;
    Schedule *sch = q->scratch;
    int any = 0;
    for (size_t m = 0; m < c->n_machines; m++)
        any |= q->gpus[m] > 0;
    if (!any)
        return;
    double lo = 0, hi = 1;
    while (total_capacity(q, hi) < s->job.batch && hi < 1e7)
        hi *= 2;
    if (total_capacity(q, hi) < s->job.batch)
        return; /* the chosen GPUs cannot hold the batch */
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (total_capacity(q, mid) >= s->job.batch)
            hi = mid;
        else
            lo = mid;
    }
    double *want = calloc(c->n_devices ? c->n_devices : 1, sizeof *want);
    if (!want) {
        q->out_of_memory = 1;
        return;
    }
    memset(sch->ps, 0, c->n_machines);
    for (size_t m = 0; m < c->n_machines; m++) {
        const Machine *mc = &c->machines[m];
        sch->worker[m] = q->gpus[m] > 0;
        double x = q->gpus[m] ? gpu_capacity(s, s->truth_of_type[mc->type], q->gpus[m], hi) : 0;
        for (int g = 0; g < q->gpus[m]; g++)
            want[mc->first_device + g] = x;
    }
    int ok = schedule_split_integer(want, c->n_devices, s->job.batch, sch->inputs) == 0;
    free(want);
    if (!ok)
        return;
    for (size_t m = 0; m < c->n_machines; m++)
        sch->worker[m] = schedule_machine_inputs(sch, m) > 0;
    double v = simcluster_noiseless_time(s, sch);
    if (v < q->best_s) {
        q->best_s = v;
        schedule_copy_into(q->best, sch);
    }
}

/* Machines of one type are interchangeable: their counts are enumerated as a non-increasing
 * sequence (a multiset), assigned in machine order. */
static void search_type(Search *q, size_t ti, size_t from_machine, int at_most)
{
    const Cluster *c = q->s->cluster;
    if (ti == c->n_types) {
        evaluate_counts(q);
        return;
    }
    size_t m = from_machine;
    while (m < c->n_machines && c->machines[m].type != ti)
        m++;
    if (m == c->n_machines) {
        search_type(q, ti + 1, 0, (int)(ti + 1 < c->n_types ? c->types[ti + 1].n_devices : 0));
        return;
    }
    for (int g = at_most; g >= 0; g--) {
        q->gpus[m] = g;
        search_type(q, ti, m + 1, g);
    }
    q->gpus[m] = 0;
}

double simar_best_known(SimCluster *s, Schedule *best)
{
    const Cluster *c = s->cluster;
    double combos = 1;
    for (size_t ti = 0; ti < c->n_types; ti++) {
        double n = 0, k = (double)c->types[ti].n_devices, ways = 1;
        for (size_t m = 0; m < c->n_machines; m++)
            n += c->machines[m].type == ti;
        for (int i = 1; i <= (int)n; i++) /* multisets: C(n + k, n) */
            ways = ways * (k + i) / i;
        combos *= ways;
    }
    if (combos > 2e5 || !c->n_types)
        return INFINITY;
    Search q = {s, calloc(c->n_machines, sizeof(int)), schedule_new(c, &s->job), best, INFINITY, 0};
    if (q.gpus && q.scratch && best)
        search_type(&q, 0, 0, (int)c->types[0].n_devices);
    free(q.gpus);
    schedule_free(q.scratch);
    /* Out of memory part way, the search did not see every count: no best known. */
    return q.gpus && q.scratch && best && !q.out_of_memory ? q.best_s : INFINITY;
}
