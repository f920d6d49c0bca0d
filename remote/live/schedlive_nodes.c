/* The live driver's nodes as its backend reads them (Slurm: drained, down, or not responding
 * nodes, and GPUs other users' jobs hold), turned into the model's drains and holds, so the
 * scheduler moves its runs off a node Slurm took out and places none where it would only
 * pend; and a node the backend found since (added to the partition) added to the model
 * (remote/live/schedlive_priv.h). */
#include <stdlib.h>

#include "remote/live/schedlive_priv.h"

int schedlive_watch_nodes(SchedLive *l, Error *err)
{
    if (!l->ops->watch || !l->ops->nodes)
        return 0;
    size_t n = (size_t)sched_node_count(l->s);
    const char **names = calloc(n ? n : 1, sizeof *names);
    l->node_unusable = calloc(n ? n : 1, sizeof *l->node_unusable);
    l->node_held = calloc(n ? n : 1, sizeof *l->node_held);
    if (!names || !l->node_unusable || !l->node_held) {
        free(names);
        return error_set(err, "live: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        names[i] = schedlive_machine(l, (int)i);
    int rc = l->ops->watch(l->ops_ctx, names, n, err);
    free(names);
    return rc;
}

/* A run of ours is on the node in the model (it holds some of its GPUs). */
static int runs_on(const SchedLive *l, int node)
{
    enum { MAX_GPUS = 1024 };
    int owners[MAX_GPUS], n = sched_node_gpu_count(l->s, node);
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    if (sched_node_gpus(l->s, node, owners, n) < 0)
        return 0;
    for (int g = 0; g < n; g++)
        if (owners[g] >= 0)
            return 1;
    return 0;
}

/* Hold changes (and nodes joining) said one by one in a look; the rest in one line. */
enum { HOLDS_SAID = 4 };

/* Returns 1 when the GPUs others hold there changed. */
static int sync_node(SchedLive *l, int i, const LiveNodeState *v, int say_hold)
{
    const char *name = schedlive_machine(l, i);
    Error err;
    if (v->unusable != l->node_unusable[i]) {
        if (sched_drain_node(l->s, i, v->unusable, &err) < 0) {
            schedlive_log(l, "%s: %s", name, err.msg);
            return 0;
        }
        l->node_unusable[i] = v->unusable;
        if (v->unusable)
            schedlive_log(l, "%s is %s: %s", name, v->why,
                          runs_on(l, i) ? "its runs move" : "nothing is placed there");
        else
            schedlive_log(l, "%s is usable again (%s)", name, v->why);
    }
    int gpus = sched_node_gpu_count(l->s, i);
    int held = v->held_gpus < gpus ? v->held_gpus : gpus;
    if (held == l->node_held[i] || sched_hold_gpus(l->s, i, held, &err) < 0)
        return 0;
    l->node_held[i] = held;
    if (say_hold) {
        if (held)
            schedlive_log(l,
                          "%s: %d of its %d GPUs are held by other users' jobs: the scheduler "
                          "places around them",
                          name, held, gpus);
        else
            schedlive_log(l, "%s: other users' jobs hold none of its GPUs now", name);
    }
    return 1;
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
    Error err;
    if (!held) {
        error_set(&err, "live: out of memory");
    } else if (sched_add_node(l->s, v->name, v->gpus, v->gpu_type, 1.0, &err) == i) {
        l->node_unusable[i] = l->node_held[i] = 0;
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

int schedlive_sync_nodes(SchedLive *l)
{
    if (!l->node_unusable)
        return 1; /* a backend that does not watch nodes: the model's are as configured */
    long looks;
    size_t n;
    const LiveNodeState *v = l->ops->nodes(l->ops_ctx, &n, &looks);
    if (!v)
        return 0;
    if (l->nodes_known && looks == l->node_looks && !l->join_failed)
        return 1;
    l->nodes_known = 1;
    l->node_looks = looks;
    /* appended in the backend's order, so its index i stays the model's node i; many at once
     * (a partition grown by a rack): a few said, then one line */
    int first = sched_node_count(l->s), joined = 0;
    for (int i = first; (size_t)i < n && join_node(l, i, &v[i], joined < HOLDS_SAID) == 0; i++)
        joined++;
    if (joined > HOLDS_SAID)
        schedlive_log(l, "and %d more nodes joined: the scheduler has %d nodes now",
                      joined - HOLDS_SAID, sched_node_count(l->s));
    /* a busy partition changes many nodes' holds at once: a few said, then one line */
    int changed = 0, held_nodes = 0, held_gpus = 0;
    for (int i = 0; i < sched_node_count(l->s); i++) {
        changed += sync_node(l, i, &v[i], changed < HOLDS_SAID);
        held_nodes += l->node_held[i] > 0;
        held_gpus += l->node_held[i];
    }
    if (changed > HOLDS_SAID)
        schedlive_log(l,
                      "and %d more nodes' held GPUs changed: other users' jobs hold %d GPUs on "
                      "%d nodes now",
                      changed - HOLDS_SAID, held_gpus, held_nodes);
    return 1;
}
