/* A node-capped job asked more than its node ceiling lets it have falls back to what it holds:
 * it keeps the very GPU numbers its process runs on, and the jobs placed beside it in the same
 * decision take other numbers first, so that no restart is made for nothing. */
#include "core/sched/sched_keep.h"

/* The one rule of who may keep its place, shared by the numbers kept free for it
 * (sched_forget_unkept) and the keeping (sched_keep_old_place): a job within a node ceiling,
 * released here while holding GPUs on no more nodes than its ceiling, asked more (it falls
 * back to what it holds only then: one that shrinks, stops or must move restarts whatever
 * placement gives it) and not forced off its nodes (a drain, others' holds). */
static int may_keep_place(const SchedState *s, const Decision *d, size_t k)
{
    const SJob *j = &s->jobs[d->active[k]];
    return j->ceiling_nodes > 0 && !d->move[k] && j->gpus > 0 && d->target[k] > j->gpus &&
           d->was_slots[k] > 0 && d->was_slots[k] <= (size_t)j->ceiling_nodes;
}

/* 0, one no other job held before the decision (fewer GPU numbers change); 1, also one a job
 * without a node ceiling held (the numbers of a node-capped job placed later stay free for it
 * to keep: sched_keep_old_place); 2, any. */
int sched_keep_free_for(const SchedState *s, size_t ji, int before, int pass)
{
    return pass == 2 || before < 0 || before == (int)ji ||
           (pass == 1 && s->jobs[before].ceiling_nodes < 1);
}

/* A node-capped job released here that restarts whatever placement gives it has no GPU numbers
 * to keep: they read as never held (as those of jobs released before the copy), so the jobs
 * placed in this decision take them before the numbers of a capped job that may keep its
 * place, whose process would otherwise restart for nothing. */
void sched_forget_unkept(const SchedState *s, Decision *d)
{
    for (size_t k = 0; k < d->m && d->was_owner; k++) {
        size_t i = d->active[k];
        const SJob *j = &s->jobs[i];
        if (j->ceiling_nodes < 1 || d->was_slots[k] < 1 || may_keep_place(s, d, k))
            continue;
        for (size_t q = 0; q < d->was_slots[k]; q++) {
            int *was = d->was_owner + s->node_off[j->slots[q].node];
            for (int g = 0; g < s->node_gpus[j->slots[q].node]; g++)
                if (was[g] == (int)i)
                    was[g] = -1;
        }
    }
}

/* Its placement could only fall back to exactly what it holds (our other jobs fill the nodes
 * its limit counted free): it keeps its old GPUs when those very GPUs are still free and
 * may_keep_place says it may. Placing it again would be a restart for nothing, at every
 * decision while the policy asks more. The same count elsewhere on its nodes will not do: its
 * process runs on those GPU numbers, and a job placed before it in this decision may have
 * needed them (occupy takes them last), which the live driver would start beside it on the
 * same GPUs. */
int sched_keep_old_place(SchedState *s, Decision *d, PlacementPool *pool, size_t k, int ns)
{
    size_t ji = d->active[k];
    SJob *j = &s->jobs[ji];
    size_t n_old = d->was_slots[k];
    if (!d->was_owner || !may_keep_place(s, d, k))
        return 0;
    for (size_t q = 0; q < n_old; q++) {
        int node = j->slots[q].node, back = 0;
        for (int t = 0; t < ns; t++)
            back += d->nodes[t] == node ? d->gp[t] : 0;
        if (pool->free[node] + back < j->slots[q].gpus)
            return 0;
        const int *was = d->was_owner + s->node_off[node], *now = s->owner + s->node_off[node];
        for (int g = 0; g < s->node_gpus[node]; g++)
            if (was[g] == (int)ji && now[g] >= 0)
                return 0;
    }
    for (int t = 0; t < ns; t++)
        placement_give(pool, d->nodes[t], d->gp[t]);
    j->n_slots = n_old;
    for (size_t q = 0; q < n_old; q++) {
        int node = j->slots[q].node;
        int *row = s->owner + s->node_off[node];
        const int *was = d->was_owner + s->node_off[node];
        placement_take_on(pool, node, j->slots[q].gpus);
        for (int g = 0; g < s->node_gpus[node]; g++)
            if (was[g] == (int)ji)
                row[g] = (int)ji;
        s->node_free[node] -= j->slots[q].gpus;
    }
    return 1;
}
