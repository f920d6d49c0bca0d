/* The idle GPUs other users' pending Slurm jobs will take before a job we submit now
 * (remote/live/liverun_slurm.h, docs/scheduler-live.md).
 *
 * A running Slurm job cannot grow: tunedeck grows one by checkpointing it, ending it and
 * submitting a new job at the new size. That new job enters the queue last. With
 * priority/basic it is the youngest, so every job already pending goes first; with
 * priority/multifactor its age factor is 0, so it is behind any job of the same fair share.
 * Fair share or QOS may put it ahead, but slurmctld does not tell us where it would rank
 * before it is submitted. Guessing wrong one way costs a growth not taken; the other way
 * costs a running job turned into a waiting one, the cluster time it held lost. So the rule
 * is conservative: every other user's pending job that Slurm could start now counts, most
 * important first (highest Priority, then oldest id), and takes the GPUs where it will
 * run; the scheduler keeps those of them that are idle in its model out of growth
 * (remote/live/schedlive_nodes.c). A job Slurm cannot start whatever we do (held, waiting
 * for a dependency, a begin time, a limit) takes nothing, unless the backfill scheduler has
 * planned it on nodes (SchedNodeList). A job of another partition counts as well where
 * that partition shares nodes with ours. Its GPUs: --gres=gpu:N and --gpus-per-node=N per
 * node (TresPerNode), --gpus=N for the job (TresPerJob), --gpus-per-task=N times its tasks
 * (TresPerTask, NumTasks). */
#include <stdlib.h>
#include <string.h>

#include "core/model/hostrange.h"
#include "remote/live/liverun_slurm.h"

int liveslurm_pending_may_start(const SlurmJobInfo *j)
{
    return strcmp(j->reason, "Priority") == 0 || strcmp(j->reason, "Resources") == 0 ||
           strcmp(j->reason, "None") == 0;
}

/* Whether the comma list ("t4,debug") includes word. */
static int lists_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == wl && memcmp(p, word, wl) == 0)
            return 1;
        p += l + (p[l] == ',');
    }
    return 0;
}

/* Whether the job's partitions ("t4" or "t4,debug") include `partition`. */
static int lists_partition(const SlurmJobInfo *j, const char *partition)
{
    return lists_word(j->partition, partition);
}

static int by_importance(const void *a, const void *b)
{
    const SlurmJobInfo *x = *(const SlurmJobInfo *const *)a, *y = *(const SlurmJobInfo *const *)b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    long long ix = atoll(x->id), iy = atoll(y->id);
    return ix < iy ? -1 : ix > iy;
}

static int by_name(const void *a, const void *b, void *names)
{
    const char *const *v = names;
    return strcmp(v[*(const size_t *)a], v[*(const size_t *)b]);
}

/* Watched nodes sorted by name, for the planned nodes' look-ups (a partition may have
 * thousands, and so may the queue). */
typedef struct {
    const char *const *names;
    size_t *order, n;
} NodeIndex;

static long find_node(const NodeIndex *ix, const char *name)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ix->names[ix->order[mid]], name);
        if (c == 0)
            return (long)ix->order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

typedef struct {
    int *idle;  /* GPUs no job holds, not yet taken by a more important pending job */
    int *room;  /* GPUs other users' running jobs leave (ours may end), not yet taken */
    int *claim; /* out */
} Pools;

/* The job takes `want` GPUs of node i, as far as others' running jobs and more important
 * pending jobs leave room: idle ones and ours alike (a resize of ours frees those; which
 * of them are idle when the scheduler decides is the model's to say, not this round's). */
static int take(Pools *p, long i, int want)
{
    if (want > p->room[i])
        want = p->room[i];
    p->room[i] -= want;
    p->idle[i] -= want < p->idle[i] ? want : p->idle[i];
    p->claim[i] += want;
    return want;
}

/* Nodes Slurm would place the job on, when it has no plan: those with room for it, the
 * most idle first (where it starts soonest, and where our growth would go). */
static size_t pick(const LiveSlurmClaimNode *nodes, size_t n, unsigned char *allowed,
                   const Pools *p, const char *type, int per_node, size_t want, long *out)
{
    /* a job asking for one GPU type is placed only on nodes with GPUs of it (untyped: any) */
    for (size_t i = 0; i < n; i++)
        if (type[0] && nodes[i].gpu_type && nodes[i].gpu_type[0] &&
            !lists_word(nodes[i].gpu_type, type))
            allowed[i] = 0;
    size_t got = 0;
    unsigned char *used = calloc(n ? n : 1, 1);
    if (!used)
        return 0;
    while (got < want) {
        long best = -1;
        for (size_t i = 0; i < n; i++)
            if (!used[i] && allowed[i] && !nodes[i].unusable && nodes[i].gpus > 0 &&
                p->room[i] >= per_node &&
                (best < 0 || p->idle[i] > p->idle[best]))
                best = (long)i;
        if (best < 0)
            break;
        used[best] = 1;
        out[got++] = best;
    }
    free(used);
    return got;
}

/* The job's planned or asked-for nodes among ours; -1 when it names none. */
static long named_nodes(const SlurmJobInfo *j, const NodeIndex *ix, long *out, size_t cap)
{
    const char *list = j->sched_nodes[0] ? j->sched_nodes : j->req_nodes;
    if (!list[0])
        return -1;
    char **v;
    size_t nv;
    Error ignored;
    if (slurm_nodelist_expand(list, &v, &nv, &ignored) < 0)
        return -1; /* unreadable: placed like a job without a plan */
    size_t got = 0;
    for (size_t k = 0; k < nv && got < cap; k++) {
        long i = find_node(ix, v[k]);
        if (i >= 0)
            out[got++] = i;
    }
    hostrange_free(v, nv);
    return (long)got;
}

/* Our nodes each of the other partitions holds (mask k*n + i: partition k has our node i).
 * Each node is looked up in the list's ranges, not the list expanded: a partition may have
 * more nodes than any job. A list that does not read holds none of them (the sinfo round
 * says so, liverun_slurm_parts.c). */
static unsigned char *partition_masks(const LiveSlurmPartition *parts, size_t n_parts,
                                      const NodeIndex *ix)
{
    size_t cells = n_parts * ix->n;
    unsigned char *m = calloc(cells ? cells : 1, 1);
    for (size_t k = 0; m && k < n_parts; k++) {
        Error ignored;
        if (!parts[k].nodes[0] || slurm_nodelist_contains(parts[k].nodes, "", &ignored) < 0)
            continue; /* no nodes, or unreadable */
        for (size_t i = 0; i < ix->n; i++)
            m[k * ix->n + i] = slurm_nodelist_contains(parts[k].nodes, ix->names[i], &ignored) > 0;
    }
    return m;
}

/* The nodes of ours the job may be placed on when it has no plan: all of them for a job in
 * our partition (or with none given); for one in another partition only, those its
 * partitions share with ours. 0 when none. */
static int allowed_nodes(const SlurmJobInfo *j, const char *partition,
                         const LiveSlurmPartition *parts, size_t n_parts,
                         const unsigned char *masks, size_t n, unsigned char *allowed)
{
    if (!partition || !partition[0] || lists_partition(j, partition)) {
        memset(allowed, 1, n ? n : 1);
        return n > 0;
    }
    memset(allowed, 0, n ? n : 1);
    int any = 0;
    for (size_t k = 0; k < n_parts; k++)
        if (lists_partition(j, parts[k].name))
            for (size_t i = 0; i < n; i++)
                if (masks[k * n + i])
                    allowed[i] = 1, any = 1;
    return any;
}

static int asks_gpus(const SlurmJobInfo *j)
{
    return j->gpus_per_node > 0 || j->gpus_per_job > 0 || j->gpus_per_task > 0;
}

size_t liveslurm_pending_claims(const SlurmJobInfoList *jobs, const unsigned char *foreign,
                                const char *partition, const LiveSlurmPartition *parts,
                                size_t n_parts, const char *const *names,
                                const LiveSlurmClaimNode *nodes, size_t n, int *claims)
{
    memset(claims, 0, (n ? n : 1) * sizeof *claims);
    const SlurmJobInfo **order = malloc((jobs->n ? jobs->n : 1) * sizeof *order);
    long *where = malloc((n ? n : 1) * sizeof *where);
    unsigned char *allowed = malloc(n ? n : 1), *masks = NULL;
    Pools p = {calloc(n ? n : 1, sizeof(int)), calloc(n ? n : 1, sizeof(int)), claims};
    NodeIndex ix = {names, malloc((n ? n : 1) * sizeof(size_t)), n};
    size_t m = 0, claiming = 0;
    if (!order || !where || !allowed || !p.idle || !p.room || !ix.order)
        goto out; /* out of memory: nothing kept back this round */
    for (size_t i = 0; i < n; i++)
        ix.order[i] = i;
    qsort_r(ix.order, n, sizeof *ix.order, by_name, (void *)names);
    if (!(masks = partition_masks(parts, n_parts, &ix)))
        goto out;
    int all_gpus = 0;
    for (size_t i = 0; i < n; i++) {
        int g = nodes[i].gpus;
        all_gpus += g > 0 ? g : 0;
        p.idle[i] = g - nodes[i].busy > 0 ? g - nodes[i].busy : 0;
        p.room[i] = g - nodes[i].others > 0 ? g - nodes[i].others : 0;
    }
    /* A job of another partition counts too: partitions may share nodes, and one planned
     * or asked for on ours (its plan names only its partition's nodes) or free to go to
     * the nodes its partition shares with ours takes GPUs there all the same. */
    for (size_t k = 0; k < jobs->n; k++) {
        const SlurmJobInfo *j = &jobs->v[k];
        if (foreign[k] && strcmp(j->state, "PENDING") == 0 && asks_gpus(j) &&
            (j->sched_nodes[0] || liveslurm_pending_may_start(j)))
            order[m++] = j;
    }
    qsort(order, m, sizeof *order, by_importance);
    for (size_t k = 0; k < m; k++) {
        const SlurmJobInfo *j = order[k];
        size_t want_nodes = j->num_nodes > 0 ? (size_t)j->num_nodes : 1;
        /* --gpus-per-task: the tasks' GPUs together, spread like --gpus=N (how many tasks
         * go to a node is Slurm's choice) */
        long long tasks = j->num_tasks > 0 ? j->num_tasks : 1;
        long long asked = (long long)j->gpus_per_job + j->gpus_per_task * tasks;
        /* in long long: 40000 GPUs a task times 60000 tasks overflows an int; no job takes
         * more than all our nodes' GPUs */
        int per_node = j->gpus_per_node, left = asked < all_gpus ? (int)asked : all_gpus;
        long named = named_nodes(j, &ix, where, n);
        size_t got;
        if (named >= 0)
            got = (size_t)named;
        else if (allowed_nodes(j, partition, parts, n_parts, masks, n, allowed))
            got = pick(nodes, n, allowed, &p, j->gpu_type, per_node > 0 ? per_node : 1,
                       want_nodes < n ? want_nodes : n, where);
        else
            got = 0; /* its partitions share no node with ours */
        int took = 0;
        for (size_t w = 0; w < got; w++) {
            int want = per_node;
            if (!per_node) { /* --gpus=N: Slurm spreads it; each node takes what it has room for */
                want = left < p.room[where[w]] ? left : p.room[where[w]];
                left -= want;
            }
            took += take(&p, where[w], want);
        }
        claiming += took > 0;
    }
out:
    free(order);
    free(where);
    free(allowed);
    free(masks);
    free(p.idle);
    free(p.room);
    free(ix.order);
    return claiming;
}
