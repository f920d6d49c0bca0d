/* Placing the jobs one decision gave new sizes (after release_moved, core/sched/sched_decide.c):
 * biggest first onto the fewest nodes, fastest GPUs first in a mixed cluster, then running jobs
 * on slower GPUs moved to faster ones where that pays. */
#include <stdlib.h>

#include "core/sched/placement.h"
#include "core/sched/sched_place.h"

static int place_cmp(const void *pa, const void *pb)
{
    const PlaceOrder *a = pa, *b = pb;
    if (a->want != b->want)
        return b->want - a->want;
    return a->job < b->job ? -1 : a->job > b->job;
}

static int slot_cmp(const void *a, const void *b)
{
    return ((const SchedSlot *)a)->node - ((const SchedSlot *)b)->node;
}

/* Marks the job's GPUs on each slot's node as its own, in sched_keep_free_for's order when
 * `was` (Decision.was_owner) says who held them before, else the lowest free. */
static int occupy(SchedState *s, size_t ji, const int *nodes, const int *gp, int ns, const int *was)
{
    SJob *j = &s->jobs[ji];
    if ((size_t)ns > j->cap_slots) {
        SchedSlot *bigger = realloc(j->slots, (size_t)ns * sizeof *bigger);
        if (!bigger)
            return -1;
        j->slots = bigger;
        j->cap_slots = (size_t)ns;
    }
    j->n_slots = (size_t)ns;
    for (int t = 0; t < ns; t++) {
        j->slots[t] = (SchedSlot){nodes[t], gp[t]};
        int *row = s->owner + s->node_off[nodes[t]], left = gp[t];
        const int *before = was ? was + s->node_off[nodes[t]] : NULL;
        for (int pass = before ? 0 : 2; pass < 3; pass++)
            for (int g = 0; g < s->node_gpus[nodes[t]] && left > 0; g++)
                if (row[g] < 0 && (!before || sched_keep_free_for(s, ji, before[g], pass))) {
                    row[g] = (int)ji;
                    left--;
                }
        s->node_free[nodes[t]] -= gp[t];
    }
    qsort(j->slots, j->n_slots, sizeof *j->slots, slot_cmp);
    return 0;
}

/* Takes a job's GPUs within the fastest class that holds it whole, else anywhere. */
static int take_for(const SchedState *s, PlacementPool *pool, int want, Decision *d)
{
    if (s->n_classes > 1)
        for (int c = 0; c < s->n_classes; c++)
            if (placement_class_total(pool, c) >= want)
                return placement_take_class(pool, c, want, d->nodes, d->gp, s->cfg.nodes);
    return placement_take(pool, want, d->nodes, d->gp, s->cfg.nodes);
}

static int slowest_class(const SchedState *s, const SJob *j)
{
    int c = 0;
    for (size_t k = 0; k < j->n_slots; k++)
        if (s->node_class[j->slots[k].node] > c)
            c = s->node_class[j->slots[k].node];
    return c;
}

/* Mixed clusters: a running job on slower GPUs moves, at the same GPU count, to the fastest
 * class that now has room for it whole, when its remaining time there plus the restart
 * stall beats staying. Unmoved jobs are visited in submission order. */
static int move_to_faster(SchedState *s, Decision *d, PlacementPool *pool)
{
    for (size_t k = 0; k < d->m && s->n_classes > 1; k++) {
        size_t ji = d->active[k];
        SJob *j = &s->jobs[ji];
        int cur = slowest_class(s, j);
        /* a node ceiling's job stays: the faster class may need more nodes than it allows */
        if (j->gpus == 0 || j->placed_gen == s->gen || cur == 0 || j->ceiling_nodes > 0)
            continue;
        int c = 0;
        while (c < cur && placement_class_total(pool, c) < j->gpus)
            c++;
        JobConfig conf;
        double rate;
        if (c == cur || sched_job_config(s, j, j->gpus, &conf, &rate) < 0 || !(rate > 0))
            continue;
        double left_s = (app_total_progress(j->app) - j->progress) / rate;
        double stay_s = left_s / s->class_speed[cur];
        double move_s = left_s / s->class_speed[c] + s->cfg.resize_cost_s;
        if (!(move_s < stay_s))
            continue;
        /* what the pool gains on each node: the GPUs it frees beyond others' holds */
        for (size_t q = 0; q < j->n_slots; q++) {
            int node = j->slots[q].node, before = sched_node_available(s, node);
            int after = s->node_free[node] + j->slots[q].gpus - s->held[node];
            if (!s->drained[node] && after > before)
                placement_give(pool, node, after - before);
        }
        sched_release(s, ji);
        int ns = placement_take_class(pool, c, j->gpus, d->nodes, d->gp, s->cfg.nodes);
        if (ns < 0 || occupy(s, ji, d->nodes, d->gp, ns, d->was_owner) < 0)
            return -1; /* the class total said it fits */
        j->conf = conf;
        j->stall_left_s = s->cfg.resize_cost_s;
        j->stall_is_start = 0; /* a move is a resize at the same count */
        d->placed[d->n_placed++] = (PlaceOrder){0, ji};
    }
    return 0;
}

/* Biggest jobs first onto the fewest nodes (seed §4.3), fastest GPUs first in a mixed
 * cluster; each placed job stalls. Then jobs on slower GPUs may move to faster ones. */
int sched_place_moved(SchedState *s, Decision *d, Error *err)
{
    int *freeg = malloc((size_t)s->cfg.nodes * sizeof *freeg);
    if (!freeg)
        return error_no_memory(err, "scheduler");
    for (int i = 0; i < s->cfg.nodes; i++)
        freeg[i] = sched_node_available(s, i);
    PlacementPool pool;
    int rc = placement_pool_init(&pool, s->cfg.nodes, s->max_node_gpus, freeg);
    free(freeg);
    if (rc == 0 && s->n_classes > 1)
        rc = placement_pool_set_classes(&pool, s->node_class);
    if (rc < 0) {
        placement_pool_free(&pool);
        return error_no_memory(err, "scheduler");
    }
    qsort(d->order, d->n_order, sizeof *d->order, place_cmp);
    for (size_t q = 0; q < d->n_order && rc == 0; q++) {
        size_t ji = d->active[d->order[q].job];
        SJob *j = &s->jobs[ji];
        int from = j->gpus, want = d->order[q].want;
        int ns = j->ceiling_nodes > 0 ? sched_take_node_capped(s, &pool, j, &want, d->nodes, d->gp)
                                      : take_for(s, &pool, want, d);
        /* Exactly what it holds, and less than the policy asked. Below it, with its GPUs
         * free (sched_keep_old_place's count), the fall back began at them or more and came
         * down because its batch no longer runs on that many (validity only falls as GPUs
         * grow; sched_set_policy, adaptive to the owner's batch): it shrinks to a size that
         * runs, not stays on its old batch. */
        if (ns >= 0 && want < d->order[q].want && want == from &&
            sched_keep_old_place(s, d, &pool, d->order[q].job, ns))
            continue; /* its GPUs, size, batch and run unchanged: no event, no stall */
        JobConfig conf;
        double rate;
        if (ns < 0 || sched_job_config(s, j, want, &conf, &rate) < 0) {
            j->gpus = 0; /* cannot happen while policies respect capacity and limits */
            if (from && sched_log_event(s, SCHED_EV_STOP, ji, from, 0) < 0)
                rc = error_no_memory(err, "scheduler");
            continue;
        }
        if (occupy(s, ji, d->nodes, d->gp, ns, d->was_owner) < 0) {
            rc = error_no_memory(err, "scheduler");
            break;
        }
        j->gpus = want;
        if (want > j->most_gpus)
            j->most_gpus = want;
        j->conf = conf;
        j->stall_left_s = s->cfg.resize_cost_s;
        /* a first start's stall is not a resize's; a restart after a stop is (the stop is
         * counted among the resizes) */
        j->stall_is_start = j->start_s < 0;
        j->placed_gen = s->gen;
        if (j->start_s < 0)
            j->start_s = s->now_s;
        d->placed[d->n_placed++] = (PlaceOrder){j->gpus - from, ji};
    }
    if (rc == 0 && move_to_faster(s, d, &pool) < 0)
        rc = error_no_memory(err, "scheduler");
    placement_pool_free(&pool);
    return rc;
}
