/* The live driver's nodes as its backend reads them (Slurm: drained, down, or not responding
 * nodes, and GPUs other users' jobs hold), turned into the model's drains and holds, so the
 * scheduler moves its runs off a node Slurm took out and places none where it would only
 * pend; and a node the backend found since (added to the partition) added to the model
 * (remote/live/schedlive_priv.h). Also which node of a run it calls unusable, for the run's
 * end. */
#include <stdio.h>
#include <stdlib.h>

#include "core/base/plural.h"
#include "remote/live/schedlive_priv.h"

int schedlive_watch_nodes(SchedLive *l, Error *err)
{
    if (!l->ops->watch || !l->ops->nodes)
        return 0;
    size_t n = (size_t)sched_node_count(l->s);
    const char **names = calloc(n ? n : 1, sizeof *names);
    l->node_unusable = calloc(n ? n : 1, sizeof *l->node_unusable);
    l->node_held = calloc(n ? n : 1, sizeof *l->node_held);
    l->node_kept = calloc(n ? n : 1, sizeof *l->node_kept);
    if (!names || !l->node_unusable || !l->node_held || !l->node_kept) {
        free(names);
        return error_set(err, "live: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = schedlive_machine(l, (int)i);
        /* drained before the watch (schedule --live drains a host it could not reach at
         * the start): the backend's first "down" is no news, its "usable" is */
        l->node_unusable[i] = sched_node_drained_by(l->s, (int)i, SCHED_DRAIN_BACKEND);
    }
    int rc = l->ops->watch(l->ops_ctx, names, l->node_unusable, n, err);
    free(names);
    return rc;
}

/* GPUs of the node runs of ours hold in the model. */
static int ours_on(const SchedLive *l, int node)
{
    enum { MAX_GPUS = 1024 };
    int owners[MAX_GPUS], n = sched_node_gpu_count(l->s, node), ours = 0;
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    if (sched_node_gpus(l->s, node, owners, n) < 0)
        return 0;
    for (int g = 0; g < n; g++)
        ours += owners[g] >= 0;
    return ours;
}

static int runs_on(const SchedLive *l, int node)
{
    return ours_on(l, node) > 0;
}

/* Hold changes (and nodes joining) said one by one in a look; the rest in one line. */
enum { HOLDS_SAID = 4 };

/* Returns 1 when the GPUs others hold there changed. */
static int sync_node(SchedLive *l, int i, const LiveNodeState *v, int say_hold)
{
    const char *name = schedlive_machine(l, i);
    Error err;
    if ((v->unusable != 0) != (l->node_unusable[i] != 0)) {
        /* The backend's drain is its own (SCHED_DRAIN_BACKEND): its word undoes only that one,
         * so a node the operator drained (:drain), before the backend lost it or while it was
         * gone, stays drained when it comes back. */
        if (sched_drain_node_by(l->s, i, SCHED_DRAIN_BACKEND, v->unusable, &err) < 0) {
            schedlive_log(l, "%s: %s", name, err.msg);
            return 0;
        }
        if (v->unusable)
            schedlive_log(l, "%s is %s: %s", name, v->why,
                          runs_on(l, i) ? "its runs move" : "nothing is placed there");
        else if (sched_node_drained(l->s, i))
            schedlive_log(l, "%s answers again (%s): it stays drained, as the operator drained "
                             "it (:undrain %s to use it)",
                          name, v->why, name);
        else
            schedlive_log(l, "%s is usable again (%s)", name, v->why);
        l->node_unusable[i] = v->unusable != 0;
    }
    int gpus = sched_node_gpu_count(l->s, i);
    int held = v->held_gpus < gpus ? v->held_gpus : gpus;
    /* Other users' pending jobs take only GPUs no run of ours holds in the model (as it
     * plans: a run being resized holds its new GPUs): shrinking or keeping a size never
     * waits on them, growing never goes where they would start first. */
    int idle = gpus - held - ours_on(l, i);
    int kept = v->pending_gpus < idle ? v->pending_gpus : idle > 0 ? idle : 0;
    if ((held == l->node_held[i] && kept == l->node_kept[i]) ||
        sched_hold_gpus(l->s, i, held + kept, &err) < 0)
        return 0;
    int held_moved = held != l->node_held[i];
    l->node_held[i] = held;
    l->node_kept[i] = kept;
    if (say_hold && held_moved) {
        if (held)
            schedlive_log(l,
                          "%s: %d of its %d GPUs are held by other users' jobs: the scheduler "
                          "places around them",
                          name, held, gpus);
        else
            schedlive_log(l, "%s: other users' jobs hold none of its GPUs now", name);
    }
    return held_moved;
}

/* Adds the backend's node i (one it found after watch) to the model, said once when `say`;
 * 0, or -1 when it could not (said once; the next look tries again). */
static int join_node(SchedLive *l, int i, const LiveNodeState *v, int say)
{
    int *unusable = realloc(l->node_unusable, (size_t)(i + 1) * sizeof *unusable);
    if (unusable)
        l->node_unusable = unusable;
    int *held = unusable ? realloc(l->node_held, (size_t)(i + 1) * sizeof *held) : NULL;
    if (held)
        l->node_held = held;
    int *kept = held ? realloc(l->node_kept, (size_t)(i + 1) * sizeof *kept) : NULL;
    if (kept)
        l->node_kept = kept;
    held = kept ? held : NULL;
    Error err;
    if (!held) {
        error_set(&err, "live: out of memory");
    } else if (sched_add_node(l->s, v->name, v->gpus, v->gpu_type, 1.0, &err) == i) {
        l->node_unusable[i] = l->node_held[i] = l->node_kept[i] = 0;
        l->join_failed = 0;
        if (say)
            schedlive_log(l, "%s joined (%d %s%sGPUs, %s): the scheduler may place there", v->name,
                          v->gpus, v->gpu_type, v->gpu_type[0] ? " " : "", v->why);
        return 0;
    }
    if (!l->join_failed)
        schedlive_log(l, "%s: not added to the scheduler: %s", v->name, err.msg);
    l->join_failed = 1;
    return -1;
}

/* The idle GPUs kept for other users' pending jobs, said once a change of their total. */
static void say_kept(SchedLive *l, int kept, int nodes)
{
    /* Not once the run is ending: no decision will use it, and the round that confirms a
     * stop's end (liverun_slurm.c) sees other users' jobs start on the GPUs ours free. */
    if (kept == l->kept_said || l->stopping_all)
        return;
    if (!kept) {
        schedlive_log(l, "other users' pending jobs hold back no idle GPU now");
    } else {
        char where[256] = "";
        size_t len = 0;
        for (int i = 0; i < sched_node_count(l->s) && len < sizeof where; i++)
            if (l->node_kept[i])
                len += (size_t)snprintf(where + len, sizeof where - len, "%s%s:%d",
                                        len ? ", " : "", schedlive_machine(l, i),
                                        l->node_kept[i]);
        schedlive_log(l,
                      "other users' pending jobs hold back %d idle GPU%s on %d node%s (%s): "
                      "Slurm would start them before a resized job of ours, so the scheduler "
                      "does not grow into them",
                      kept, plural_s(kept), nodes, plural_s(nodes), where);
    }
    l->kept_said = kept;
}

int schedlive_sync_nodes(SchedLive *l)
{
    if (!l->node_unusable)
        return 1; /* a backend that does not watch nodes: the model's are as configured */
    long looks;
    size_t n;
    const LiveNodeState *v = l->ops->nodes(l->ops_ctx, &n, &looks);
    if (!v)
        return 0;
    /* the share kept for pending jobs follows the model's own runs too: looked at again
     * while any pending job claims GPUs */
    if (l->nodes_known && looks == l->node_looks && !l->join_failed && !l->any_pending)
        return 1;
    l->nodes_known = 1;
    l->node_looks = looks;
    /* appended in the backend's order, so its index i stays the model's node i; many at once
     * (a partition grown by a rack): a few said, then one line */
    int first = sched_node_count(l->s), joined = 0;
    for (int i = first; (size_t)i < n && join_node(l, i, &v[i], joined < HOLDS_SAID) == 0; i++)
        joined++;
    if (joined > HOLDS_SAID)
        schedlive_log(l, "and %d more node%s joined: the scheduler has %d nodes now",
                      joined - HOLDS_SAID, plural_s(joined - HOLDS_SAID), sched_node_count(l->s));
    /* a busy partition changes many nodes' holds at once: a few said, then one line */
    int changed = 0, held_nodes = 0, held_gpus = 0, kept = 0, kept_nodes = 0;
    l->any_pending = 0;
    for (int i = 0; i < sched_node_count(l->s); i++) {
        changed += sync_node(l, i, &v[i], changed < HOLDS_SAID);
        held_nodes += l->node_held[i] > 0;
        held_gpus += l->node_held[i];
        kept += l->node_kept[i];
        kept_nodes += l->node_kept[i] > 0;
        l->any_pending |= v[i].pending_gpus > 0;
    }
    say_kept(l, kept, kept_nodes);
    if (changed > HOLDS_SAID)
        schedlive_log(l,
                      "and %d more node%s held GPUs changed: other users' jobs hold %d GPU%s "
                      "on %d node%s now",
                      changed - HOLDS_SAID, plural_of(changed - HOLDS_SAID, "'s", "s'"), held_gpus,
                      plural_s(held_gpus), held_nodes, plural_s(held_nodes));
    return 1;
}

int schedlive_node_kept(const SchedLive *l, int node)
{
    return l->node_kept && node >= 0 && node < sched_node_count(l->s) ? l->node_kept[node] : 0;
}

/* A node of the job's run that the backend now calls unusable (its host down over SSH,
 * drained or down in Slurm), or -1. */
int schedlive_run_on_unusable(const SchedLive *l, const LiveJob *j)
{
    for (size_t h = 0; l->node_unusable && h < j->n_run_nodes; h++) {
        int node = j->run_nodes[h];
        if (node >= 0 && node < sched_node_count(l->s) && l->node_unusable[node])
            return node;
    }
    return -1;
}
