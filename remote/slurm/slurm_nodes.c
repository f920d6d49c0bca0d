/* Parsing sinfo's fixed columns and building the inventory (remote/slurm/slurm_nodes.h). */
#include "remote/slurm/slurm_nodes.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

enum { N_FIELDS = 10 }; /* SLURM_SINFO_FORMAT's */

static const char *const STATE_NAMES[] = {"idle", "mixed", "alloc", "drain", "down", "other"};

const char *slurm_node_state_name(SlurmNodeState s)
{
    return s <= SLURM_NODE_OTHER ? STATE_NAMES[s] : "other";
}

/* sinfo's long state with its flag suffixes ('*' not responding, '~' powered off, ...). */
static SlurmNodeState parse_state(const char *raw)
{
    char base[32];
    size_t n = 0;
    while (raw[n] && (isalpha((unsigned char)raw[n]) || raw[n] == '_') && n < sizeof base - 1) {
        base[n] = (char)tolower((unsigned char)raw[n]);
        n++;
    }
    base[n] = 0;
    if (strchr(raw + n, '*')) /* the controller has not heard from it */
        return SLURM_NODE_DOWN;
    if (strncmp(base, "drain", 5) == 0)
        return SLURM_NODE_DRAIN;
    if (!strcmp(base, "down") || !strncmp(base, "fail", 4) || !strcmp(base, "unknown") ||
        !strcmp(base, "inval") || !strcmp(base, "not_responding"))
        return SLURM_NODE_DOWN;
    if (!strcmp(base, "idle"))
        return strchr(raw + n, '~') ? SLURM_NODE_OTHER : SLURM_NODE_IDLE;
    if (!strcmp(base, "mixed"))
        return SLURM_NODE_MIXED;
    if (!strncmp(base, "alloc", 5) || !strcmp(base, "completing"))
        return SLURM_NODE_ALLOC;
    return SLURM_NODE_OTHER;
}

int slurm_node_name_ok(const char *name, size_t cap)
{
    char safe[256];
    size_t n = strlen(name);
    if (!n || n >= cap || n >= sizeof safe || strpbrk(name, " \t"))
        return 0;
    termsafe(safe, sizeof safe, name);
    return strcmp(safe, name) == 0;
}

/* The next GRES item of a comma list into item ("gpu:t4:2(S:0-1)" whole); returns where the
 * one after starts. Parentheses hold socket or index lists, which may contain commas of
 * their own. */
static const char *gres_next_item(const char *p, char *item, size_t cap)
{
    const char *end = p + strcspn(p, ",");
    const char *paren = memchr(p, '(', (size_t)(end - p));
    if (paren) {
        const char *close = strchr(paren, ')');
        end = close ? close + 1 + strcspn(close + 1, ",") : p + strlen(p);
    }
    size_t len = (size_t)(end - p) < cap ? (size_t)(end - p) : cap - 1;
    memcpy(item, p, len);
    item[len] = 0;
    return *end ? end + 1 : end;
}

int slurm_gres_gpus(const char *gres, char *type, size_t type_cap)
{
    if (type_cap)
        type[0] = 0;
    int total = 0;
    for (const char *p = gres; *p;) {
        char item[128];
        p = gres_next_item(p, item, sizeof item);
        size_t head = strcspn(item, "(");
        /* a GPU item cut before its count would read as another count */
        if (head == sizeof item - 1 && strncmp(item, "gpu:", 4) == 0)
            return -1;
        item[head] = 0; /* "(S:0-1)", "(IDX:0,2)": where, not how many */
        /* name[:type]:count, or name alone (one) */
        char *first = strchr(item, ':');
        if (strncmp(item, "gpu", 3) == 0 && (item[3] == ':' || item[3] == 0)) {
            char *last = strrchr(item, ':');
            char *tail = NULL;
            long count = last ? strtol(last + 1, &tail, 10) : 1;
            if (last && (tail == last + 1 || *tail)) /* "gpu:t4" alone: one of that type */
                count = 1, last = NULL;
            if (count < 0) /* "gpu:t4:-2": a wrong answer, not no GPU */
                return -1;
            if (count > 0) /* saturates: the caller refuses more than SLURM_MAX_GPUS */
                total = count > SLURM_MAX_GPUS || total + count > SLURM_MAX_GPUS
                            ? SLURM_MAX_GPUS + 1
                            : total + (int)count;
            /* the type sits between the first ':' and the count's (when they differ) */
            if (type_cap && !type[0] && first && last != first) {
                char *tend = last ? last : item + strlen(item);
                /* the type is printed: nothing in it may drive a terminal */
                termsafe_n(type, type_cap, first + 1, (size_t)(tend - first - 1));
            }
        }
    }
    return total;
}

void slurm_gres_gpu_types(const char *gres, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = 0;
    size_t used = 0;
    for (const char *p = gres; *p;) {
        char item[128], type[64];
        p = gres_next_item(p, item, sizeof item);
        if (slurm_gres_gpus(item, type, sizeof type) > 0 && type[0]) {
            size_t tl = strlen(type);
            int seen = 0;
            for (const char *q = out; *q && !seen;) {
                size_t l = strcspn(q, ",");
                seen = l == tl && memcmp(q, type, tl) == 0;
                q += l + (q[l] == ',');
            }
            if (!seen && used + (used > 0) + tl >= cap) {
                out[0] = 0; /* too many to keep: unknown, any type fits */
                return;
            }
            if (!seen)
                used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "," : "", type);
        }
    }
}

/* The GPUs of each type, in the GRES's order: "gpu:t4:2,gpu:v100:2" is two T4s and two
 * V100s, not four of the first type (what reading one type a node made of it). The total
 * is checked by the caller (slurm_gres_gpus); this only splits it. */
static int gres_kinds(const char *gres, SlurmGpuKind *kinds, int *n_kinds)
{
    *n_kinds = 0;
    for (const char *p = gres; *p;) {
        char item[128], type[sizeof kinds->type];
        p = gres_next_item(p, item, sizeof item);
        int count = slurm_gres_gpus(item, type, sizeof type);
        if (count <= 0)
            continue;
        int k = 0;
        while (k < *n_kinds && strcmp(kinds[k].type, type) != 0)
            k++;
        if (k == SLURM_MAX_GPU_KINDS)
            return -1;
        if (k == *n_kinds) {
            snprintf(kinds[k].type, sizeof kinds[k].type, "%s", type);
            kinds[k].count = 0;
            (*n_kinds)++;
        }
        kinds[k].count += count; /* both at most the total, which is at most SLURM_MAX_GPUS */
    }
    return 0;
}

void slurm_node_gpus_label(const SlurmNode *n, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = 0;
    size_t used = 0;
    for (int k = 0; k < n->n_gpu_kinds && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s:%d", k ? "," : "",
                                 n->gpu_kinds[k].type[0] ? n->gpu_kinds[k].type : "gpu",
                                 n->gpu_kinds[k].count);
    if (!n->n_gpu_kinds)
        snprintf(out, cap, "-");
}

static int parse_int_field(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || (*end && strcmp(end, "+") != 0) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static const char *null_to_empty(const char *s)
{
    return strcmp(s, "(null)") == 0 || strcmp(s, "none") == 0 ? "" : s;
}

static void add_partition(SlurmNode *n, const char *part)
{
    char p[128];
    termsafe(p, sizeof p, part);
    size_t l = strlen(p);
    if (l && p[l - 1] == '*') /* the default partition */
        p[l - 1] = 0;
    if (!p[0])
        return;
    /* Kept sorted: sinfo lists a node's partitions in no fixed order (on the harness one call
     * gave n1's as t4 then debug, the next as debug then t4), so in its order the column
     * flickered between rounds of a watch and hosts --slurm and --json disagreed. */
    size_t pl = strlen(p), at = 0;
    for (const char *q = n->partitions; *q;) {
        size_t ql = strcspn(q, ",");
        int cmp = strncmp(q, p, ql < pl ? ql : pl);
        if (cmp == 0)
            cmp = ql < pl ? -1 : ql > pl ? 1 : 0;
        if (cmp == 0) /* already listed (a node appears once per partition) */
            return;
        if (cmp > 0)
            break;
        q += ql + (q[ql] == ',');
        at = (size_t)(q - n->partitions);
    }
    char rest[sizeof n->partitions];
    snprintf(rest, sizeof rest, "%s", n->partitions + at);
    int last = at && n->partitions[at - 1] != ','; /* after every one listed */
    snprintf(n->partitions + at, sizeof n->partitions - at, "%s%s%s%s", last ? "," : "", p,
             rest[0] ? "," : "", rest);
}

static int parse_line(char *line, const char *ctx, SlurmNode *n, Error *err)
{
    static const char *const NAMES[N_FIELDS] = {"node", "cpus", "memory", "gres", "state",
                                                "features", "partition", "cpu counts", "address",
                                                "reason"};
    char *f[N_FIELDS];
    char *p = line;
    for (int i = 0; i < N_FIELDS; i++) {
        f[i] = p;
        if (i == N_FIELDS - 1)
            break;
        char *bar = strchr(p, '|');
        if (!bar)
            return error_set(err, "%s: expected %d fields separated by '|' (%s), found %d", ctx,
                             N_FIELDS, SLURM_SINFO_FORMAT, i + 1);
        *bar = 0;
        p = bar + 1;
    }
    memset(n, 0, sizeof *n);
    if (!slurm_node_name_ok(f[0], sizeof n->name))
        return error_set(err, "%s: field 'node': expected a node name, found '%s'", ctx, f[0]);
    snprintf(n->name, sizeof n->name, "%s", f[0]);
    long v;
    if (parse_int_field(f[1], 1, 1 << 20, &v) < 0)
        return error_set(err, "%s: field '%s': expected a CPU count, found '%s'", ctx, NAMES[1],
                         f[1]);
    n->cpus = (int)v;
    if (parse_int_field(f[2], 0, 1L << 40, &v) < 0)
        return error_set(err, "%s: field '%s': expected megabytes, found '%s'", ctx, NAMES[2],
                         f[2]);
    n->mem_mb = v;
    char first_type[sizeof n->gpu_type];
    n->gpus = slurm_gres_gpus(null_to_empty(f[3]), first_type, sizeof first_type);
    if (n->gpus < 0)
        return error_set(err,
                         "%s: field 'gres': expected gpu[:TYPE]:COUNT items of at most 127 "
                         "bytes, COUNT at least 0, found '%.200s'",
                         ctx, f[3]);
    if (n->gpus > SLURM_MAX_GPUS)
        return error_set(err, "%s: field 'gres': expected at most %d GPUs a node, found '%s'", ctx,
                         SLURM_MAX_GPUS, f[3]);
    if (gres_kinds(null_to_empty(f[3]), n->gpu_kinds, &n->n_gpu_kinds) < 0)
        return error_set(err, "%s: field 'gres': expected at most %d GPU types a node, found '%s'",
                         ctx, SLURM_MAX_GPU_KINDS, f[3]);
    slurm_gres_gpu_types(null_to_empty(f[3]), n->gpu_type, sizeof n->gpu_type);
    if (!f[4][0])
        return error_set(err, "%s: field 'state': expected a node state, found nothing", ctx);
    termsafe(n->state_raw, sizeof n->state_raw, f[4]);
    n->state = parse_state(f[4]);
    /* Free text anyone with the right may write (features, a drain reason) is printed:
     * nothing in it may drive a terminal. */
    termsafe(n->features, sizeof n->features, null_to_empty(f[5]));
    add_partition(n, f[6]);
    /* alloc/idle/other/total: each a count, and no more allocated than there are */
    long aiot[4];
    char counts[96];
    snprintf(counts, sizeof counts, "%s", f[7]);
    char *cp = strlen(f[7]) < sizeof counts ? counts : NULL;
    int k = 0;
    for (; k < 4 && cp; k++) {
        char *slash = strchr(cp, '/');
        if (slash)
            *slash = 0;
        if ((k < 3) != (slash != NULL) || parse_int_field(cp, 0, 1 << 20, &aiot[k]) < 0)
            break;
        cp = slash ? slash + 1 : NULL;
    }
    if (k < 4)
        return error_set(err, "%s: field '%s': expected A/I/O/T, found '%s'", ctx, NAMES[7], f[7]);
    if (aiot[0] > aiot[3])
        return error_set(err,
                         "%s: field '%s': expected at most the node's %ld CPUs allocated, found "
                         "'%s'",
                         ctx, NAMES[7], aiot[3], f[7]);
    n->cpus_alloc = (int)aiot[0];
    if (strlen(f[8]) >= sizeof n->addr || strpbrk(f[8], " \t'\"\\$`;"))
        return error_set(err, "%s: field '%s': expected a host name or address, found '%s'", ctx,
                         NAMES[8], f[8]);
    snprintf(n->addr, sizeof n->addr, "%s", null_to_empty(f[8]));
    termsafe(n->reason, sizeof n->reason, null_to_empty(f[9]));
    return 0;
}

/* The nodes seen so far by name, so that a node listed once per partition is found in
 * constant time: a scan of every earlier node made a 1,024-node round cost ~500x a 4-node
 * one (bench/slurm_frame). Open addressing; slot = node index + 1, 0 = empty. */
typedef struct {
    size_t *slot;
    size_t cap; /* a power of two, at least twice the nodes */
} NameIndex;

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot where name is, or the empty one where it would go. */
static size_t *index_find(const NameIndex *ix, const SlurmNodes *nodes, const char *name)
{
    size_t i = name_hash(name) & (ix->cap - 1);
    while (ix->slot[i] && strcmp(nodes->v[ix->slot[i] - 1].name, name) != 0)
        i = (i + 1) & (ix->cap - 1);
    return &ix->slot[i];
}

static void index_grow(NameIndex *ix, const SlurmNodes *nodes)
{
    free(ix->slot);
    ix->cap = ix->cap ? ix->cap * 2 : 64;
    ix->slot = calloc(ix->cap, sizeof *ix->slot);
    if (!ix->slot)
        abort();
    for (size_t k = 0; k < nodes->n; k++)
        *index_find(ix, nodes, nodes->v[k].name) = k + 1;
}

int slurm_nodes_parse(const char *text, const char *source, SlurmNodes *out, Error *err)
{
    out->v = NULL;
    out->n = 0;
    size_t cap = 0, lineno = 0;
    NameIndex ix = {0};
    index_grow(&ix, out);
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        lineno++;
        char *line = strndup(p, len);
        p += len + (p[len] == '\n');
        if (!line)
            abort();
        if (len && line[len - 1] == '\r')
            line[len - 1] = 0;
        if (!line[0]) {
            free(line);
            continue;
        }
        char ctx[160];
        snprintf(ctx, sizeof ctx, "%s: line %zu", source, lineno);
        SlurmNode n;
        int rc = parse_line(line, ctx, &n, err);
        free(line);
        if (rc < 0) {
            free(ix.slot);
            slurm_nodes_clear(out);
            return -1;
        }
        size_t *at = index_find(&ix, out, n.name);
        if (*at) {
            add_partition(&out->v[*at - 1], n.partitions);
            continue;
        }
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            SlurmNode *grown = realloc(out->v, cap * sizeof *grown);
            if (!grown)
                abort();
            out->v = grown;
        }
        out->v[out->n++] = n;
        *at = out->n;
        if (out->n * 2 > ix.cap)
            index_grow(&ix, out);
    }
    free(ix.slot);
    return 0;
}

void slurm_nodes_clear(SlurmNodes *nodes)
{
    free(nodes->v);
    nodes->v = NULL;
    nodes->n = 0;
}

int slurm_node_shape(const SlurmNode *n, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "%dcpu-%ldmb", n->cpus, n->mem_mb);
    for (int k = 0; k < n->n_gpu_kinds && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "-%sx%d",
                                 n->gpu_kinds[k].type[0] ? n->gpu_kinds[k].type : "gpu",
                                 n->gpu_kinds[k].count);
    return used < cap ? 0 : -1;
}

static long add_shape(Cluster *c, const SlurmNode *n, const char *shape, double bandwidth_gbps,
                      Error *err)
{
    MachineType t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", shape);
    t.bandwidth_gbps = bandwidth_gbps;
    t.n_devices = 1 + (size_t)n->gpus;
    t.devices = calloc(t.n_devices, sizeof *t.devices);
    if (!t.devices)
        abort();
    snprintf(t.devices[0].id, sizeof t.devices[0].id, "cpu");
    t.devices[0].kind = DEVICE_CPU;
    t.devices[0].threads = n->cpus;
    /* each kind's GPUs in turn, each of its own model: gpu0-1 T4, gpu2-3 V100 */
    int g = 0;
    for (int k = 0; k < n->n_gpu_kinds; k++)
        for (int i = 0; i < n->gpu_kinds[k].count && g < n->gpus; i++, g++) {
            DeviceSpec *d = &t.devices[1 + g];
            snprintf(d->id, sizeof d->id, "gpu%d", g);
            d->kind = DEVICE_GPU;
            const char *model = n->gpu_kinds[k].type[0] ? n->gpu_kinds[k].type : "gpu";
            size_t m = 0;
            for (; model[m] && m < sizeof d->model - 1; m++)
                d->model[m] = (char)toupper((unsigned char)model[m]);
            d->model[m] = 0;
        }
    long idx = cluster_add_type(c, &t, err);
    free(t.devices);
    return idx;
}

Cluster *slurm_nodes_cluster(const SlurmNodes *nodes, const char *name, double bandwidth_gbps,
                             Error *err)
{
    if (nodes->n == 0) {
        error_set(err, "slurm: the controller lists no nodes (check the partition)");
        return NULL;
    }
    Cluster *c = cluster_new(name);
    if (!c)
        abort();
    for (size_t i = 0; i < nodes->n; i++) {
        const SlurmNode *n = &nodes->v[i];
        char shape[sizeof((MachineType *)0)->name];
        if (slurm_node_shape(n, shape, sizeof shape) < 0) {
            error_set(err,
                      "slurm: node '%s': expected a shape name of at most %zu bytes for its "
                      "CPUs, memory and GPU types, found '%s...'",
                      n->name, sizeof shape - 1, shape);
            cluster_free(c);
            return NULL;
        }
        long t = cluster_find_type(c, shape);
        if (t < 0)
            t = add_shape(c, n, shape, bandwidth_gbps, err);
        if (t < 0 || cluster_add_machine(c, n->name, n->addr[0] ? n->addr : n->name, (size_t)t,
                                         err) < 0) {
            cluster_free(c);
            return NULL;
        }
    }
    snprintf(c->trial.launch, sizeof c->trial.launch, "slurm");
    cluster_finish(c);
    return c;
}
