/* A job's ceiling (sched_set_ceiling): the most GPUs it may be given, learnt from outside the
 * model (Slurm refused its job at a larger size), and the fall back under it of a job that
 * holds more: it keeps part of its own GPUs rather than wait for the next decision; its lift
 * (the live driver's back-off passed), and the GPUs a limit on nodes leaves a job. */
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
 * fewest nodes, as a placement would take them), the lower node on a tie. */
static void kept_per_slot(const SJob *j, int keep, int *kept)
{
    memset(kept, 0, j->n_slots * sizeof *kept);
    while (keep > 0) {
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
    if (j->gpus <= ceiling)
        return 0;
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

int sched_most_gpus_on_nodes(const SchedState *s, int nodes)
{
    /* The largest nodes first, as placement_take fills whole nodes: a selection of `nodes`
     * maxima, each pass taking the largest not yet taken (a few nodes, a few passes). */
    int total = 0, n = s->cfg.nodes;
    unsigned char *taken = calloc(n > 0 ? (size_t)n : 1, 1);
    if (!taken)
        return 0; /* the caller's GPU rule then (a ceiling one GPU under the refused size) */
    for (int k = 0; k < nodes; k++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && !s->drained[i] && (best < 0 || s->node_gpus[i] > s->node_gpus[best]))
                best = i;
        if (best < 0)
            break;
        taken[best] = 1;
        total += s->node_gpus[best];
    }
    free(taken);
    return total;
}
