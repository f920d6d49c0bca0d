/* A job's ceiling (sched_set_ceiling): the most GPUs it may be given, learnt from outside the
 * model (Slurm refused its job at a larger size), and the fall back under it of a job that
 * holds more: it keeps part of its own GPUs rather than wait for the next decision; its lift
 * (the live driver's back-off passed); the GPUs a limit on nodes leaves a job, and its node
 * ceiling, which placement keeps it within (sched_set_node_ceiling). */
#include <stdlib.h>
#include <string.h>

#include "core/sched/sched_priv.h"

/* Gives back `drop` of the job's GPUs on `node` (the highest indices it holds). */
static void give_back(SchedState *s, size_t job, int node, int drop)
{
    int *row = s->owner + s->node_off[node];
    for (int g = s->node_gpus[node] - 1; g >= 0 && drop > 0; g--)
        if (row[g] == (int)job) {
            row[g] = -1;
            s->node_free[node]++;
            drop--;
        }
}

/* How many GPUs of each slot the job keeps, `keep` in all: its largest slots first (the
 * fewest nodes, as a placement would take them), the lower node on a tie; on its node
 * ceiling's count of slots at most. */
static void kept_per_slot(const SJob *j, int keep, int *kept)
{
    memset(kept, 0, j->n_slots * sizeof *kept);
    for (int slots = 0; keep > 0 && (j->ceiling_nodes < 1 || slots < j->ceiling_nodes);
         slots++) {
        size_t best = j->n_slots;
        for (size_t k = 0; k < j->n_slots; k++)
            if (!kept[k] && (best == j->n_slots || j->slots[k].gpus > j->slots[best].gpus))
                best = k;
        if (best == j->n_slots)
            break;
        kept[best] = j->slots[best].gpus < keep ? j->slots[best].gpus : keep;
        keep -= kept[best];
    }
}

/* The job, holding more than its ceiling, keeps `keep` of its GPUs (logged as a resize) or
 * none (a stop), the event marked with the ceiling. Nothing changes on failure. */
static int fall_back(SchedState *s, size_t job, int keep, Error *err)
{
    SJob *j = &s->jobs[job];
    int from = j->gpus;
    if (keep == 0) { /* the job holds GPUs and is not done: sched_evict logs its stop */
        if (sched_evict(s, job, err) < 0)
            return -1;
        s->events[s->n_events - 1].ceiling_gpus = j->ceiling;
        return 0;
    }
    JobConfig conf;
    double rate;
    if (sched_job_config(s, j, keep, &conf, &rate) < 0)
        return error_set(err, "ceiling '%s': its batch cannot run on %d GPUs", j->name, keep);
    int *kept = malloc(j->n_slots * sizeof *kept);
    SchedSlot *old = malloc(j->n_slots * sizeof *old);
    if (!kept || !old) {
        free(kept), free(old);
        return error_no_memory(err, "scheduler");
    }
    kept_per_slot(j, keep, kept);
    size_t n_old = j->n_slots, n = 0;
    memcpy(old, j->slots, n_old * sizeof *old);
    JobConfig old_conf = j->conf;
    for (size_t k = 0; k < n_old; k++) /* in node order still */
        if (kept[k] > 0)
            j->slots[n++] = (SchedSlot){old[k].node, kept[k]};
    j->n_slots = n;
    j->conf = conf; /* the event's batch */
    if (sched_log_event(s, SCHED_EV_RESIZE, job, from, keep) < 0) {
        memcpy(j->slots, old, n_old * sizeof *old);
        j->n_slots = n_old;
        j->conf = old_conf;
        free(kept), free(old);
        return error_no_memory(err, "scheduler");
    }
    s->events[s->n_events - 1].ceiling_gpus = j->ceiling;
    for (size_t k = 0; k < n_old; k++)
        give_back(s, job, old[k].node, old[k].gpus - kept[k]);
    free(kept), free(old);
    j->gpus = keep;
    j->stall_left_s = s->cfg.resize_cost_s; /* a restart, as every resize */
    j->stall_is_start = 0;
    j->placed_gen = s->gen;
    return 0;
}

int sched_set_ceiling(SchedState *s, size_t job, int gpus, int keep, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "ceiling: no job %zu", job);
    SJob *j = &s->jobs[job];
    if (j->done)
        return error_set(err, "ceiling '%s': expected a job not done, found it done", j->name);
    if (gpus < 1)
        return error_set(err, "ceiling '%s': expected at least 1 GPU, found %d", j->name, gpus);
    int ceiling = j->ceiling > 0 && j->ceiling < gpus ? j->ceiling : gpus;
    if (keep < 0 || keep > ceiling)
        return error_set(err, "ceiling '%s': expected to keep 0..%d GPUs, found %d", j->name,
                         ceiling, keep);
    int was = j->ceiling;
    j->ceiling = ceiling;
    if (j->gpus <= ceiling && (j->ceiling_nodes < 1 || j->n_slots <= (size_t)j->ceiling_nodes))
        return 0;
    /* a node ceiling keeps what its count of the job's largest slots hold, at most; without
     * the memory to count them, keep as asked could leave it over its nodes */
    size_t n_kept = j->n_slots ? j->n_slots : 1;
    int *kept = j->ceiling_nodes > 0 ? malloc(n_kept * sizeof *kept) : NULL;
    if (j->ceiling_nodes > 0 && !kept) {
        j->ceiling = was;
        return error_no_memory(err, "scheduler");
    }
    if (kept) {
        kept_per_slot(j, keep, kept);
        keep = 0;
        for (size_t k = 0; k < j->n_slots; k++)
            keep += kept[k];
        free(kept);
    }
    if (fall_back(s, job, keep, err) < 0) {
        j->ceiling = was;
        return -1;
    }
    return 0;
}

int sched_lift_ceiling(SchedState *s, size_t job, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "ceiling: no job %zu", job);
    s->jobs[job].ceiling = 0;
    s->jobs[job].ceiling_nodes = 0;
    return 0;
}

int sched_set_node_ceiling(SchedState *s, size_t job, int nodes, Error *err)
{
    if (job >= s->n_jobs)
        return error_set(err, "node ceiling: no job %zu", job);
    SJob *j = &s->jobs[job];
    if (j->done)
        return error_set(err, "node ceiling '%s': expected a job not done, found it done",
                         j->name);
    if (nodes < 1)
        return error_set(err, "node ceiling '%s': expected at least 1 node, found %d", j->name,
                         nodes);
    if (j->ceiling_nodes < 1 || nodes < j->ceiling_nodes)
        j->ceiling_nodes = nodes;
    return 0;
}

int sched_node_ceiling(const SchedState *s, const int *slot_gpus, size_t nodes)
{
    int gpus = 0, fewest = 0;
    for (size_t i = 0; i < nodes; i++) {
        gpus += slot_gpus[i];
        if (i == 0 || slot_gpus[i] < fewest)
            fewest = slot_gpus[i];
    }
    if (nodes < 2)
        return gpus - 1;
    int under = gpus - fewest;
    int fit = sched_most_gpus_on_nodes(s, (int)nodes - 1);
    return fit >= 1 && fit < under ? fit : under;
}

/* The sum of the `k` largest of n counts (negative ones count 0): a selection of k maxima,
 * each pass taking the largest not yet taken (a few nodes, a few passes). -1 out of memory. */
static int largest_sum(const int *count, int n, int k)
{
    int total = 0;
    unsigned char *taken = calloc(n > 0 ? (size_t)n : 1, 1);
    if (!taken)
        return -1;
    for (int pass = 0; pass < k; pass++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && count[i] > 0 && (best < 0 || count[i] > count[best]))
                best = i;
        if (best < 0)
            break;
        taken[best] = 1;
        total += count[best];
    }
    free(taken);
    return total;
}

int sched_most_gpus_on_nodes(const SchedState *s, int nodes)
{
    /* The largest nodes first, as placement_take fills whole nodes. */
    int n = s->cfg.nodes, *count = malloc((n > 0 ? (size_t)n : 1) * sizeof *count);
    if (!count)
        return 0; /* the caller's GPU rule then (a ceiling one GPU under the refused size) */
    for (int i = 0; i < n; i++)
        count[i] = s->drained[i] ? 0 : s->node_gpus[i];
    int total = largest_sum(count, n, nodes);
    free(count);
    return total < 0 ? 0 : total;
}

int sched_job_node_ceiling_gpus(const SchedState *s, const SJob *j)
{
    /* What Slurm holds free for us, as the live driver's watch reads it (others' jobs held:
     * sched_hold_gpus), not the nodes' sizes: our own jobs are the policy's to share. */
    int n = s->cfg.nodes, *count = malloc((n > 0 ? (size_t)n : 1) * sizeof *count);
    if (!count)
        return 0; /* no size until memory allows one: the job waits, placed nowhere */
    for (int i = 0; i < n; i++)
        count[i] = s->drained[i] ? 0 : s->node_gpus[i] - s->held[i];
    int total = largest_sum(count, n, j->ceiling_nodes);
    free(count);
    return total < 0 ? 0 : total;
}

static void give_slots(PlacementPool *pool, const int *nodes, const int *gp, int ns)
{
    for (int k = 0; k < ns; k++)
        placement_give(pool, nodes[k], gp[k]);
}

/* `want` within class cls (-1: any) on at most `cap` nodes, or -1 with the pool as it was. */
static int take_within(PlacementPool *pool, int cls, int want, int cap, int *nodes, int *gp,
                       int max_slots)
{
    int ns = cls < 0 ? placement_take(pool, want, nodes, gp, max_slots)
                     : placement_take_class(pool, cls, want, nodes, gp, max_slots);
    if (ns > cap) {
        give_slots(pool, nodes, gp, ns);
        return -1;
    }
    return ns;
}

int sched_take_node_capped(const SchedState *s, PlacementPool *pool, SJob *j, int *want,
                           int *nodes, int *gp)
{
    int cap = j->ceiling_nodes, n = s->cfg.nodes;
    /* a ring runs at its slowest GPU's pace: the fastest class that holds it on `cap` nodes */
    for (int c = 0; s->n_classes > 1 && c < s->n_classes; c++)
        if (placement_class_total(pool, c) >= *want) {
            int ns = take_within(pool, c, *want, cap, nodes, gp, n);
            if (ns >= 0)
                return ns;
        }
    if (placement_pool_total(pool) >= *want) {
        int ns = take_within(pool, -1, *want, cap, nodes, gp, n);
        if (ns >= 0)
            return ns;
    }
    /* Placement takes the largest free blocks first, so the `cap` largest hold the most any
     * placement on `cap` nodes can: the job runs at that (or the most its batch splits over
     * below it) rather than ask Slurm for more nodes than it refused. */
    int fit = largest_sum(pool->free, pool->n_nodes, cap);
    JobConfig conf;
    double rate;
    while (fit >= 1 && sched_job_config(s, j, fit, &conf, &rate) < 0)
        fit--;
    if (fit < 1)
        return -1;
    int ns = take_within(pool, -1, fit, cap, nodes, gp, n);
    if (ns >= 0)
        *want = fit;
    return ns;
}
