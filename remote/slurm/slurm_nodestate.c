/* Parsing `sinfo -h -N -o '%N|%T|%G|%E'` (remote/slurm/slurm_nodestate.h). */
#include "remote/slurm/slurm_nodestate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"
#include "remote/slurm/slurm_nodes.h"

int slurm_node_unusable(const char *state)
{
    char base[32];
    size_t n = 0;
    while (state[n] && (isalpha((unsigned char)state[n]) || state[n] == '_') &&
           n < sizeof base - 1) {
        base[n] = (char)tolower((unsigned char)state[n]);
        n++;
    }
    base[n] = 0;
    if (strcmp(base, "unknown") == 0)
        return 0;
    if (strchr(state + n, '*')) /* the controller has not heard from it */
        return 1;
    return strncmp(base, "drain", 5) == 0 || strcmp(base, "down") == 0 ||
           strncmp(base, "fail", 4) == 0 || strcmp(base, "not_responding") == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const SlurmNodeStatus *)a)->name, ((const SlurmNodeStatus *)b)->name);
}

static int parse_line(char *line, const char *ctx, SlurmNodeStatus *s, Error *err)
{
    /* the reason is last: a '|' in it stays in it */
    char *bar[3] = {NULL, NULL, NULL};
    int found = 0;
    for (char *p = line; found < 3 && (p = strchr(p, '|')) != NULL; p++)
        bar[found++] = p;
    if (found < 3)
        return error_set(err, "%s: expected 4 fields separated by '|' (%s), found %d", ctx,
                         SLURM_NODESTATE_FORMAT, found + 1);
    *bar[0] = *bar[1] = *bar[2] = 0;
    const char *name = line, *state = bar[0] + 1, *gres = bar[1] + 1, *reason = bar[2] + 1;
    if (!slurm_node_name_ok(name, sizeof s->name))
        return error_set(err, "%s: field 'node': expected a node name, found '%.80s'", ctx, name);
    if (!state[0] || strlen(state) >= sizeof s->state)
        return error_set(err, "%s: field 'state': expected a node state, found '%.80s'", ctx,
                         state);
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    /* free text Slurm's users and admins write, printed in the log */
    termsafe(s->state, sizeof s->state, state);
    termsafe(s->reason, sizeof s->reason, strcmp(reason, "none") ? reason : "");
    s->unusable = slurm_node_unusable(state);
    char type[64];
    s->gpus = slurm_gres_gpus(strcmp(gres, "(null)") ? gres : "", type, sizeof type);
    if (s->gpus < 0) /* "gpu:t4:-2" read as no GPU would hide the node's GPUs */
        return error_set(err,
                         "%s: field 'gres': expected gpu[:TYPE]:COUNT items of at most 127 "
                         "bytes, COUNT at least 0, found '%.80s'",
                         ctx, gres);
    /* all of them: a node of a100 and t4 GPUs takes a gpu:t4 job */
    slurm_gres_gpu_types(strcmp(gres, "(null)") ? gres : "", s->gpu_type, sizeof s->gpu_type);
    return 0;
}

int slurm_nodestate_parse(const char *text, const char *source, SlurmNodeStatuses *out, Error *err)
{
    out->v = NULL;
    out->n = 0;
    size_t cap = 0, lineno = 0;
    const char *p = text ? text : "";
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char line[512];
        if (len >= sizeof line) {
            slurm_nodestate_clear(out);
            return error_set(err, "%s: line %zu: expected at most %zu bytes, found %zu", source,
                             lineno, sizeof line - 1, len);
        }
        memcpy(line, p, len);
        line[len] = 0;
        if (len && line[len - 1] == '\r')
            line[len - 1] = 0;
        p += len + (nl != NULL);
        if (!line[0])
            continue;
        if (out->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            SlurmNodeStatus *grown = realloc(out->v, nc * sizeof *grown);
            if (!grown) {
                slurm_nodestate_clear(out);
                return error_set(err, "%s: out of memory", source);
            }
            out->v = grown;
            cap = nc;
        }
        char ctx[128];
        snprintf(ctx, sizeof ctx, "%s: line %zu", source, lineno);
        if (parse_line(line, ctx, &out->v[out->n], err) < 0) {
            slurm_nodestate_clear(out);
            return -1;
        }
        out->n++;
    }
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    size_t k = 0; /* a node listed once per partition: its first line */
    for (size_t i = 0; i < out->n; i++)
        if (!k || strcmp(out->v[k - 1].name, out->v[i].name) != 0)
            out->v[k++] = out->v[i];
    out->n = k;
    return 0;
}

void slurm_nodestate_clear(SlurmNodeStatuses *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

const SlurmNodeStatus *slurm_nodestate_find(const SlurmNodeStatuses *l, const char *name)
{
    SlurmNodeStatus key = {.name = ""}; /* by_name compares the name alone */
    snprintf(key.name, sizeof key.name, "%s", name);
    return l->n ? bsearch(&key, l->v, l->n, sizeof *l->v, by_name) : NULL;
}
