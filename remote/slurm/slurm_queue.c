/* Parsing squeue's fixed columns (remote/slurm/slurm_queue.h). */
#include "remote/slurm/slurm_queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

enum { QUEUE_FIELDS = 8 }; /* SLURM_SQUEUE_FORMAT's */

/* Other users' names, reasons and the rest are printed (hosts --slurm, schedule --live):
 * nothing in them may drive a terminal. One too long for its column ends in "..." so the cut
 * shows: a 200-node list cut silently read as the whole of it. */
static void copy_field(char *dst, size_t cap, const char *src)
{
    char probe[512];
    if (termsafe(probe, sizeof probe, src) < cap || cap < 8) {
        termsafe(dst, cap, src);
        return;
    }
    size_t len = termsafe(dst, cap - 3, src); /* cut at a whole character or placeholder */
    memcpy(dst + len, "...", 4);
}

/* FNV-1a of the whole field, so a change past the shown part of a long nodelist counts. */
static unsigned long field_hash(const char *s)
{
    unsigned long h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* %D: the nodes a job holds, or the fewest a pending one asks for; atoi read "x" as 0. */
static int parse_nodes(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < 0 || v > 1 << 20 || (s[0] < '0' || s[0] > '9'))
        return -1;
    *out = (int)v;
    return 0;
}

/* One record (the name, last, may hold '|' and, between marks, newlines): appended to out.
 * Modifies rec. */
static int parse_record(char *rec, const char *source, size_t lineno, SlurmQueue *out,
                        size_t *cap, Error *err)
{
    char *f[QUEUE_FIELDS];
    char *q = rec;
    int i = 0;
    for (; i < QUEUE_FIELDS; i++) {
        f[i] = q;
        if (i == QUEUE_FIELDS - 1)
            break;
        char *bar = strchr(q, '|');
        if (!bar)
            break;
        *bar = 0;
        q = bar + 1;
    }
    if (i < QUEUE_FIELDS - 1)
        return error_set(err, "%s: line %zu: expected %d fields separated by '|' (%s)", source,
                         lineno, QUEUE_FIELDS, SLURM_SQUEUE_FORMAT);
    int nodes;
    if (parse_nodes(f[3], &nodes) < 0)
        return error_set(err, "%s: line %zu: field 'nodes': expected a node count, found '%.40s'",
                         source, lineno, f[3]);
    if (out->n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        SlurmQueueJob *grown = realloc(out->v, *cap * sizeof *grown);
        if (!grown)
            abort();
        out->v = grown;
    }
    SlurmQueueJob *j = &out->v[out->n++];
    memset(j, 0, sizeof *j);
    j->nodes = nodes;
    copy_field(j->id, sizeof j->id, f[0]);
    copy_field(j->user, sizeof j->user, f[1]);
    copy_field(j->state, sizeof j->state, f[2]);
    copy_field(j->gres, sizeof j->gres, f[4]);
    copy_field(j->nodelist, sizeof j->nodelist, f[5]);
    j->nodelist_hash = field_hash(f[5]);
    copy_field(j->reason, sizeof j->reason, f[6]);
    copy_field(j->name, sizeof j->name, f[7]);
    return 0;
}

/* Where the record starting at p ends: at "|MARK" before a newline or the end, *next after
 * it; NULL when no mark follows. */
static const char *record_end(const char *p, const char *mark, const char **next)
{
    size_t ml = strlen(mark);
    for (const char *bar = strchr(p, '|'); bar; bar = strchr(bar + 1, '|')) {
        if (strncmp(bar + 1, mark, ml) == 0 && (bar[1 + ml] == '\n' || bar[1 + ml] == 0)) {
            *next = bar + 1 + ml + (bar[1 + ml] == '\n');
            return bar;
        }
    }
    return NULL;
}

int slurm_queue_parse_marked(const char *text, const char *mark, const char *source,
                             SlurmQueue *out, Error *err)
{
    out->v = NULL;
    out->n = 0;
    out->sorted = NULL;
    size_t cap = 0, lineno = 1;
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            p++, lineno++;
            continue;
        }
        const char *next = NULL;
        const char *end = mark ? record_end(p, mark, &next) : NULL;
        if (mark && !end) {
            slurm_queue_clear(out);
            return error_set(err, "%s: line %zu: expected a record ending in '|%s' (%s|%s)",
                             source, lineno, mark, SLURM_SQUEUE_FORMAT, mark);
        }
        size_t len = mark ? (size_t)(end - p) : strcspn(p, "\n");
        if (!mark)
            next = p + len + (p[len] == '\n');
        char *rec = strndup(p, len);
        if (!rec)
            abort();
        int rc = parse_record(rec, source, lineno, out, &cap, err);
        free(rec);
        if (rc < 0) {
            slurm_queue_clear(out);
            return -1;
        }
        for (; p < next; p++)
            lineno += *p == '\n';
    }
    return 0;
}

int slurm_queue_parse(const char *text, const char *source, SlurmQueue *out, Error *err)
{
    return slurm_queue_parse_marked(text, NULL, source, out, err);
}

static int job_order(const void *pa, const void *pb)
{
    const SlurmQueueJob *a = *(const SlurmQueueJob *const *)pa,
                        *b = *(const SlurmQueueJob *const *)pb;
    int c;
    if ((c = strcmp(a->id, b->id)) || (c = strcmp(a->user, b->user)) ||
        (c = strcmp(a->state, b->state)) || (c = (a->nodes > b->nodes) - (a->nodes < b->nodes)) ||
        (c = strcmp(a->gres, b->gres)) || (c = strcmp(a->nodelist, b->nodelist)) ||
        (c = (a->nodelist_hash > b->nodelist_hash) - (a->nodelist_hash < b->nodelist_hash)) ||
        (c = strcmp(a->reason, b->reason)))
        return c;
    return strcmp(a->name, b->name);
}

/* The queue's jobs, sorted by every field; NULL when out of memory. */
static const SlurmQueueJob **sorted_jobs(const SlurmQueue *q)
{
    const SlurmQueueJob **v = malloc((q->n ? q->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < q->n; i++)
        v[i] = &q->v[i];
    qsort(v, q->n, sizeof *v, job_order);
    return v;
}

int slurm_queue_index(SlurmQueue *q)
{
    free(q->sorted);
    q->sorted = sorted_jobs(q);
    return q->sorted ? 0 : -1;
}

/* The queue's index, or a new one the caller frees (*own) when it has none. */
static const SlurmQueueJob **index_of(const SlurmQueue *q, const SlurmQueueJob ***own)
{
    *own = q->sorted ? NULL : sorted_jobs(q);
    return q->sorted ? q->sorted : *own;
}

int slurm_queue_same(const SlurmQueue *a, const SlurmQueue *b)
{
    if (a->n != b->n)
        return 0;
    const SlurmQueueJob **own_x, **own_y;
    const SlurmQueueJob **x = index_of(a, &own_x), **y = index_of(b, &own_y);
    int same = x && y;
    for (size_t i = 0; same && i < a->n; i++)
        same = job_order(&x[i], &y[i]) == 0;
    free(own_x), free(own_y);
    return same;
}

void slurm_queue_clear(SlurmQueue *q)
{
    free(q->v);
    free(q->sorted);
    q->v = NULL;
    q->sorted = NULL;
    q->n = 0;
}

static int is_running(const SlurmQueueJob *j)
{
    /* CONFIGURING: it holds its nodes while they boot */
    return strcmp(j->state, "RUNNING") == 0 || strcmp(j->state, "CONFIGURING") == 0;
}

static int is_node_failure(const char *state)
{
    static const char *const states[] = {"NODE_FAIL", "BOOT_FAIL", "REQUEUED", "REQUEUE_HOLD",
                                         "REQUEUE_FED"};
    for (size_t i = 0; i < sizeof states / sizeof *states; i++)
        if (strcmp(state, states[i]) == 0)
            return 1;
    return 0;
}

/* Pending reasons that say a node is down, drained or missing ("ReqNodeNotAvail,
 * UnavailableNodes:n4"). */
static int is_node_reason(const char *reason)
{
    static const char *const prefixes[] = {"ReqNodeNotAvail", "NodeDown", "Nodes_required"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(reason, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(const SlurmQueueJob *const *)a)->id, (*(const SlurmQueueJob *const *)b)->id);
}

/* The same job a look before: before's jobs sorted by id (or by every field, the id first:
 * its index), so a long queue costs n log n. */
static const SlurmQueueJob *was(const SlurmQueueJob *const *sorted, size_t n,
                                const SlurmQueueJob *j)
{
    const SlurmQueueJob *key = j;
    const SlurmQueueJob *const *hit = bsearch(&key, sorted, n, sizeof *sorted, by_id);
    return hit ? *hit : NULL;
}

int slurm_queue_moves_nodes(const SlurmQueue *before, const SlurmQueue *now)
{
    const SlurmQueueJob **own;
    const SlurmQueueJob **sorted = index_of(before, &own);
    if (!sorted)
        abort();
    int moved = 0;
    for (size_t i = 0; i < now->n && !moved; i++) {
        const SlurmQueueJob *j = &now->v[i];
        const SlurmQueueJob *b = was(sorted, before->n, j);
        int pending = strcmp(j->state, "PENDING") == 0;
        if (is_running(j))
            moved = !b || !is_running(b) || strcmp(b->nodelist, j->nodelist) != 0 ||
                    b->nodelist_hash != j->nodelist_hash;
        else if (is_node_failure(j->state))
            moved = !b || strcmp(b->state, j->state) != 0;
        else if (pending && b && (is_running(b) || strcmp(b->state, "COMPLETING") == 0))
            moved = 1;
        else if (pending && is_node_reason(j->reason))
            moved = !b || strcmp(b->reason, j->reason) != 0;
    }
    free(own);
    return moved;
}
