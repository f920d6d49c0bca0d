/* What the live Slurm backend reads of the driver's nodes: their states, one `sinfo -h -N -o
 * '%N|%T|%G|%E' [-p P]` of the whole partition every node_poll_s (a drained, down or not
 * responding node is one the scheduler must leave, and so is one with fewer GPUs than it had;
 * one no longer listed has left the partition, unless none is; a usable one with GPUs that
 * the driver does not have joined it, or came back from down, and is appended for the
 * driver to add; one without GPUs, or with more than a node may have, is said once), and
 * the GPUs other users' running jobs
 * hold on them, counted from each scontrol round (remote/live/liverun_slurm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm_priv.h"
#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_nodestate.h"

static int by_name(const void *a, const void *b, void *names)
{
    char **v = names;
    return strcmp(v[*(const size_t *)a], v[*(const size_t *)b]);
}

/* Node index of a name; -1 when it is not one of the driver's. */
static long node_index(const LiveSlurm *s, const char *name)
{
    size_t lo = 0, hi = s->n_names;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->names[s->by_name[mid]], name);
        if (c == 0)
            return (long)s->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void liveslurm_nodes_free(LiveSlurm *s)
{
    slurm_call_free(s->node_round);
    s->node_round = NULL;
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i]);
    free(s->names);
    free(s->by_name);
    free(s->nodes);
    strlist_free(&s->left_out);
    s->names = NULL;
    s->by_name = NULL;
    s->nodes = NULL;
    s->n_names = 0;
}

int liveslurm_watch(void *ctx, const char *const *names, const int *unusable, size_t n,
                    Error *err)
{
    LiveSlurm *s = ctx;
    (void)unusable; /* Slurm's own states say it: read before any decision */
    liveslurm_nodes_free(s);
    s->have_states = s->have_holds = 0;
    s->names = calloc(n ? n : 1, sizeof *s->names);
    s->by_name = malloc((n ? n : 1) * sizeof *s->by_name);
    s->nodes = calloc(n ? n : 1, sizeof *s->nodes);
    if (!s->names || !s->by_name || !s->nodes) {
        liveslurm_nodes_free(s);
        return error_set(err, "slurm: out of memory");
    }
    s->n_names = n;
    for (size_t i = 0; i < n; i++) {
        if (!(s->names[i] = strdup(names[i]))) {
            liveslurm_nodes_free(s);
            return error_set(err, "slurm: out of memory");
        }
        s->by_name[i] = i;
        snprintf(s->nodes[i].name, sizeof s->nodes[i].name, "%s", names[i]);
    }
    qsort_r(s->by_name, n, sizeof *s->by_name, by_name, s->names);
    return 0;
}

const LiveNodeState *liveslurm_nodes(void *ctx, size_t *n, long *looks)
{
    LiveSlurm *s = ctx;
    *looks = s->looks;
    *n = s->n_names;
    return s->names && s->have_states && s->have_holds ? s->nodes : NULL;
}

void liveslurm_look_at_nodes(LiveSlurm *s)
{
    s->look_now = 1;
}

/* GPUs of each node held by running jobs that are not ours, and the idle ones other users'
 * pending jobs will take first (liveslurm_pending_claims), from the last scontrol round. */
void liveslurm_count_holds(LiveSlurm *s)
{
    if (!s->names)
        return;
    size_t n = s->n_names ? s->n_names : 1;
    int *held = calloc(n, sizeof *held), *claims = calloc(n, sizeof *claims);
    LiveSlurmClaimNode *cn = calloc(n, sizeof *cn);
    unsigned char *foreign = calloc(s->jobs.n ? s->jobs.n : 1, 1);
    if (!held || !claims || !cn || !foreign) {
        free(held), free(claims), free(cn), free(foreign);
        return; /* the next round tries again */
    }
    for (size_t k = 0; k < s->jobs.n; k++) {
        const SlurmJobInfo *j = &s->jobs.v[k];
        foreign[k] = (unsigned char)liveslurm_is_foreign(s, j);
        if (strcmp(j->state, "RUNNING") != 0)
            continue;
        for (size_t d = 0; d < j->n_nodes; d++) {
            long i = node_index(s, j->nodes[d].node);
            int g = __builtin_popcountll(j->nodes[d].gpu_idx);
            if (i < 0)
                continue;
            cn[i].busy += g;
            if (foreign[k])
                held[i] += g;
        }
    }
    for (size_t i = 0; i < s->n_names; i++) {
        cn[i].gpus = s->nodes[i].gpus;
        cn[i].others = held[i];
        cn[i].unusable = s->nodes[i].unusable;
        cn[i].gpu_type = s->nodes[i].gpu_type;
    }
    liveslurm_pending_claims(&s->jobs, foreign, s->o.partition, s->parts, s->n_parts,
                             (const char *const *)s->names, cn, s->n_names, claims);
    int changed = !s->have_holds;
    for (size_t i = 0; i < s->n_names; i++) {
        changed |= s->nodes[i].held_gpus != held[i] || s->nodes[i].pending_gpus != claims[i];
        s->nodes[i].held_gpus = held[i];
        s->nodes[i].pending_gpus = claims[i];
    }
    free(held), free(claims), free(cn), free(foreign);
    s->have_holds = 1;
    s->looks += changed;
}

static void state_words(const LiveSlurm *s, const SlurmNodeStatus *st, LiveNodeState *out)
{
    if (!st) {
        out->unusable = 1;
        if (s->o.partition && s->o.partition[0])
            snprintf(out->why, sizeof out->why, "no longer in partition %s (sinfo)",
                     s->o.partition);
        else
            snprintf(out->why, sizeof out->why, "no longer listed by Slurm (sinfo)");
        return;
    }
    out->unusable = st->unusable;
    int silent = strchr(st->state, '*') != NULL;
    size_t n = (size_t)snprintf(out->why, sizeof out->why, "%s in Slurm%s", st->state,
                                silent ? ": not responding" : "");
    if (st->reason[0] && n < sizeof out->why)
        snprintf(out->why + n, sizeof out->why - n, " (reason: %s)", st->reason);
}

enum { MAX_NODE_GPUS = 64 }; /* the most a scheduler node may have (sched_add_node) */

/* A node whose GRES now lists fewer GPUs than the model has (the count its first round read,
 * or the one it joined with): a run placed on them all would be refused by sbatch, and
 * after two such deaths the job is left stopped, so nothing of ours is placed there. */
static void fewer_gpus(const SlurmNodeStatus *st, LiveNodeState *ns)
{
    if (!ns->gpus) {
        if (st->gpus >= 1 && st->gpus <= MAX_NODE_GPUS)
            ns->gpus = st->gpus;
        return;
    }
    if (ns->unusable || st->gpus >= ns->gpus)
        return;
    ns->unusable = 1;
    snprintf(ns->why, sizeof ns->why, "%s in Slurm with %d of the %d GPUs the scheduler has",
             st->state, st->gpus, ns->gpus);
}

size_t liveslurm_joined(const SlurmNodeStatuses *st, const char *const *known, size_t n_known,
                        size_t *out)
{
    unsigned char *watched = calloc(st->n ? st->n : 1, 1);
    if (!watched)
        return 0;
    for (size_t k = 0; k < n_known; k++) {
        const SlurmNodeStatus *v = slurm_nodestate_find(st, known[k]);
        if (v)
            watched[v - st->v] = 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++) /* st->v is in name order */
        if (!watched[i] && !st->v[i].unusable && st->v[i].gpus >= 1 &&
            st->v[i].gpus <= MAX_NODE_GPUS)
            out[n++] = i;
    free(watched);
    return n;
}

/* Appends the nodes of the round that joined (liveslurm_joined), so the driver adds them
 * and they are watched from now on; 1 when there were any. */
static int watch_joined(LiveSlurm *s, const SlurmNodeStatuses *st)
{
    size_t *idx = malloc((st->n ? st->n : 1) * sizeof *idx);
    size_t n = idx ? liveslurm_joined(st, (const char *const *)s->names, s->n_names, idx) : 0;
    size_t total = s->n_names + n, added = 0;
    char **names = n ? realloc(s->names, total * sizeof *names) : NULL;
    if (names)
        s->names = names;
    size_t *order = names ? realloc(s->by_name, total * sizeof *order) : NULL;
    if (order)
        s->by_name = order;
    LiveNodeState *nodes = order ? realloc(s->nodes, total * sizeof *nodes) : NULL;
    if (nodes)
        s->nodes = nodes;
    for (size_t k = 0; nodes && k < n; k++) { /* out of memory: the next round tries again */
        const SlurmNodeStatus *v = &st->v[idx[k]];
        size_t i = s->n_names;
        if (!(s->names[i] = strdup(v->name)))
            break;
        LiveNodeState *ns = &s->nodes[i];
        memset(ns, 0, sizeof *ns);
        state_words(s, v, ns);
        snprintf(ns->name, sizeof ns->name, "%s", v->name);
        snprintf(ns->gpu_type, sizeof ns->gpu_type, "%s", v->gpu_type);
        ns->gpus = v->gpus;
        s->by_name[i] = i;
        s->n_names++;
        added++;
    }
    if (added)
        qsort_r(s->by_name, s->n_names, sizeof *s->by_name, by_name, s->names);
    free(idx);
    return added > 0;
}

/* A usable node of the round that the driver does not watch and cannot add, for its GPUs
 * (none in its GRES, or more than a scheduler node may have): said once a node, or the
 * operator who added it to the partition would wait for a run there that never comes. */
static void say_left_out(LiveSlurm *s, const SlurmNodeStatuses *st)
{
    for (size_t i = 0; i < st->n; i++) {
        const SlurmNodeStatus *v = &st->v[i];
        if (v->unusable || (v->gpus >= 1 && v->gpus <= MAX_NODE_GPUS) ||
            node_index(s, v->name) >= 0 || strlist_has(&s->left_out, v->name))
            continue;
        if (strlist_add(&s->left_out, v->name) < 0)
            return; /* out of memory: said at a later round */
        char where[160], why[160];
        if (s->o.partition && s->o.partition[0])
            snprintf(where, sizeof where, "is in partition %s", s->o.partition);
        else
            snprintf(where, sizeof where, "is listed by Slurm");
        if (v->gpus < 1)
            snprintf(why, sizeof why, "its GRES lists no GPU");
        else if (v->gpus > SLURM_MAX_GPUS)
            snprintf(why, sizeof why,
                     "its GRES lists more than %d GPUs, the scheduler takes "
                     "at most %d on a node",
                     SLURM_MAX_GPUS, MAX_NODE_GPUS);
        else
            snprintf(why, sizeof why,
                     "its GRES lists %d GPUs, the scheduler takes at most %d "
                     "on a node",
                     v->gpus, MAX_NODE_GPUS);
        liveslurm_say(s, "%s %s (%s in Slurm) but is not added to the schedule: %s", v->name, where,
                      v->state, why);
    }
}

static void collect_nodes(LiveSlurm *s)
{
    if (!liveslurm_call_poll(s->node_round))
        return;
    char *text = NULL;
    Error err;
    SlurmNodeStatuses st;
    int rc = slurm_call_finish(s->node_round, &text, &err);
    s->node_round = NULL;
    if (rc != 0 || slurm_nodestate_parse(text, "sinfo", &st, &err) < 0) {
        free(text);
        liveslurm_controller_lost(s, err.msg);
        s->node_outage++;
        s->last_node_round_ms = clock_now_ms(); /* the wait counts from the failure */
        return;
    }
    free(text);
    liveslurm_controller_back(s);
    s->node_outage = 0;
    s->node_rounds++;
    s->states_asked_ms = s->last_node_round_ms; /* set when this round was asked */
    if (st.n == 0) {
        /* The partition renamed or removed (sinfo -p then answers nothing): that says
         * nothing of the nodes, and draining them all would stop every run. Kept as read. */
        if (!s->none_listed_said)
            liveslurm_say(s,
                          "slurm: sinfo lists no node of partition %s: the nodes' states "
                          "are kept as last read",
                          s->o.partition && s->o.partition[0] ? s->o.partition : "(default)");
        s->none_listed_said = 1;
        return;
    }
    s->none_listed_said = 0;
    int changed = !s->have_states;
    for (size_t i = 0; i < s->n_names; i++) {
        LiveNodeState now = s->nodes[i];
        const SlurmNodeStatus *v = slurm_nodestate_find(&st, s->names[i]);
        state_words(s, v, &now);
        if (v) {
            fewer_gpus(v, &now);
            snprintf(now.gpu_type, sizeof now.gpu_type, "%s", v->gpu_type);
        }
        changed |= now.unusable != s->nodes[i].unusable || strcmp(now.why, s->nodes[i].why) != 0;
        s->nodes[i] = now;
    }
    changed |= watch_joined(s, &st);
    say_left_out(s, &st);
    slurm_nodestate_clear(&st);
    s->have_states = 1;
    s->looks += changed;
}

/* The node-state round: every node_poll_s (sooner after liveslurm_look_at_nodes), backing
 * off like the job rounds while the controller does not answer; none while a call already
 * found it away (the job rounds find when it is back). */
void liveslurm_node_tick(LiveSlurm *s, int64_t now)
{
    if (!s->names)
        return;
    if (s->node_round) {
        collect_nodes(s);
        return;
    }
    double wait_s = liveslurm_backoff_s(s->o.node_poll_s, s->node_outage);
    if ((s->down && s->have_states) ||
        (!s->look_now && s->last_node_round_ms >= 0 && now - s->last_node_round_ms < wait_s * 1000))
        return;
    const char *argv[12] = {"sinfo", "-h", "-N", "-o", SLURM_NODESTATE_FORMAT};
    size_t n = 5;
    if (s->o.partition && s->o.partition[0]) {
        argv[n++] = "-p";
        argv[n++] = s->o.partition;
    }
    argv[n] = NULL;
    Error err;
    s->last_node_round_ms = now;
    s->look_now = 0;
    if (!(s->node_round = slurm_call_start(s->o.ctl, argv, &err))) {
        liveslurm_controller_lost(s, err.msg);
        s->node_outage++;
        return;
    }
    collect_nodes(s); /* a fast controller may have answered already */
}
