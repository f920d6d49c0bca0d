/* Reading a simulated cluster description (see schedcluster.h). */
#include "core/sched/schedcluster.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"

void schedcluster_free(SchedCluster *c)
{
    if (!c)
        return;
    free(c->groups);
    free(c->types);
    free(c);
}

void schedcluster_apply(const SchedCluster *c, SchedConfig *cfg)
{
    cfg->groups = c->groups;
    cfg->n_groups = c->n_groups;
}

/* One node group: {"nodes": N, "gpus_per_node": G, "gpu": TYPE}, TYPE in gpu_speeds. */
static int read_group(const cJSON *g, const char *ctx, const cJSON *speeds, SchedCluster *c,
                      Error *err)
{
    SchedNodeGroup *ng = &c->groups[c->n_groups];
    char *type = c->types[c->n_groups];
    if (!cJSON_IsObject(g))
        return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(g));
    /* A key it does not read ("gpus": 8, "speed": 2 for the group) changed nothing, with
     * nothing said: the cluster simulated was not the one the operator wrote. */
    static const char *const known[] = {"nodes", "gpus_per_node", "gpu", NULL};
    if (jfield_only(g, ctx, known, err) < 0 ||
        jfield_int(g, ctx, "nodes", 1, 1, 1 << 20, &ng->nodes, err) < 0 ||
        jfield_int(g, ctx, "gpus_per_node", 1, 1, 64, &ng->gpus_per_node, err) < 0 ||
        jfield_string(g, ctx, "gpu", 1, type, sizeof c->types[0], err) < 0)
        return -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(speeds, type);
    if (!v) {
        char names[256] = "";
        const cJSON *it;
        cJSON_ArrayForEach(it, speeds)
        {
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", it->string);
        }
        return error_set(err, "%s.gpu: expected one of gpu_speeds (%s), found '%s'", ctx, names,
                         type);
    }
    ng->type = type;
    ng->speed = v->valuedouble;
    c->n_groups++;
    return 0;
}

static int read_speeds(const cJSON *speeds, const char *path, Error *err)
{
    if (!speeds->child) /* else each group's gpu is refused as not one of "()" */
        return error_set(err, "%s: gpu_speeds: expected at least one GPU type and its speed, "
                              "found none",
                         path);
    const cJSON *it;
    cJSON_ArrayForEach(it, speeds)
    {
        if (!cJSON_IsNumber(it))
            return error_set(err, "%s: gpu_speeds.%s: expected a speed in (0, 1000], found %s",
                             path, it->string, jfield_type_name(it));
        if (!(it->valuedouble > 0) || it->valuedouble > 1000)
            return error_set(err, "%s: gpu_speeds.%s: expected a speed in (0, 1000], found %g",
                             path, it->string, it->valuedouble);
        /* "" was taken as a type, and a node group's "gpu": "" ran on it */
        if (!it->string[0] || strlen(it->string) >= 32)
            return error_set(err,
                             "%s: gpu_speeds: expected type names of 1 to 31 characters, "
                             "found '%s'",
                             path, it->string);
    }
    return 0;
}

SchedCluster *schedcluster_load(const char *path, Error *err)
{
    cJSON *root = jfield_parse_file(path, err);
    if (!root)
        return error_mark(err, ERROR_INPUT), NULL;
    SchedCluster *c = NULL;
    const cJSON *speeds, *groups;
    if (!cJSON_IsObject(root)) {
        error_set(err, "%s: expected a JSON object, found %s", path, jfield_type_name(root));
        goto fail;
    }
    static const char *const known[] = {"gpu_speeds", "node_groups", NULL};
    if (jfield_only(root, path, known, err) < 0 || /* a misspelt key changed nothing, unsaid */
        !(speeds = jfield_object(root, path, "gpu_speeds", 1, err)) ||
        read_speeds(speeds, path, err) < 0 ||
        !(groups = jfield_array(root, path, "node_groups", 1, err)))
        goto fail;
    int n = cJSON_GetArraySize(groups);
    if (n < 1) {
        error_set(err, "%s: node_groups: expected at least one group, found none", path);
        goto fail;
    }
    c = calloc(1, sizeof *c);
    if (!c || !(c->groups = calloc((size_t)n, sizeof *c->groups)) ||
        !(c->types = calloc((size_t)n, sizeof *c->types))) {
        error_no_memory(err, "%s", path);
        goto fail;
    }
    long nodes = 0;
    for (int i = 0; i < n; i++) {
        char ctx[600];
        snprintf(ctx, sizeof ctx, "%s: node_groups[%d]", path, i);
        if (read_group(cJSON_GetArrayItem(groups, i), ctx, speeds, c, err) < 0)
            goto fail;
        nodes += c->groups[i].nodes;
    }
    if (nodes > 1 << 20) {
        error_set(err, "%s: node_groups: expected at most 1048576 nodes in all, found %ld", path,
                  nodes);
        goto fail;
    }
    cJSON_Delete(root);
    return c;
fail:
    schedcluster_free(c);
    cJSON_Delete(root);
    error_mark(err, ERROR_INPUT);
    return NULL;
}
