/* A node joins a running scheduler (sched_add_node): the live driver on Slurm finds one added
 * to its partition, or one that was down at the start and came back. It is appended, so
 * every node index, GPU offset and job placement already made stays as it was; decisions
 * size their scratch arrays from the node count each time, so the next one sees it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/sched_priv.h"

/* Grows the array at *p to n elements of `size`; 0, or -1 with *p untouched. */
static int grow(void *p, size_t n, size_t size)
{
    void *bigger = realloc(*(void **)p, n * size);
    if (!bigger)
        return -1;
    *(void **)p = bigger;
    return 0;
}

/* The node group of a new node: one of the same GPU type, size and speed, or a new one. */
static int group_of(SchedState *s, const char *type, int gpus, double speed)
{
    for (int i = 0; i < s->cfg.nodes; i++) {
        int g = s->node_group[i];
        if (s->node_gpus[i] == gpus && s->node_speed[i] == speed &&
            strcmp(s->group_types[g], type) == 0)
            return g;
    }
    char *copy = strdup(type);
    if (!copy || grow(&s->group_types, s->n_groups + 1, sizeof *s->group_types) < 0) {
        free(copy);
        return -1;
    }
    s->group_types[s->n_groups] = copy;
    return (int)s->n_groups++;
}

/* The speed class of a new node: its speed's, or a new rank with the slower ones after it. */
static int class_of(SchedState *s, double speed)
{
    int rank = 0;
    for (int c = 0; c < s->n_classes; c++) {
        if (s->class_speed[c] == speed)
            return c;
        rank += s->class_speed[c] > speed;
    }
    if (grow(&s->class_speed, (size_t)s->n_classes + 1, sizeof *s->class_speed) < 0)
        return -1;
    memmove(&s->class_speed[rank + 1], &s->class_speed[rank],
            (size_t)(s->n_classes - rank) * sizeof *s->class_speed);
    s->class_speed[rank] = speed;
    s->n_classes++;
    for (int i = 0; i < s->cfg.nodes; i++)
        s->node_class[i] += s->node_class[i] >= rank;
    return rank;
}

int sched_add_node(SchedState *s, const char *name, int gpus, const char *type, double speed,
                   Error *err)
{
    if (!name || !name[0])
        return error_set(err, "add node: expected a node name, found none");
    if (gpus < 1 || gpus > 64)
        return error_set(err, "add node %s: expected 1..64 GPUs, found %d", name, gpus);
    if (!(speed > 0) || !isfinite(speed))
        return error_set(err, "add node %s: expected a speed > 0, found %g", name, speed);
    if (s->cfg.nodes >= 1 << 20)
        return error_set(err, "add node %s: expected at most 1048576 nodes", name);
    for (int i = 0; i < s->cfg.nodes; i++)
        if (strcmp(s->node_names[i], name) == 0)
            return error_set(err, "add node %s: the scheduler has it already (node %d)", name, i);
    size_t n = (size_t)s->cfg.nodes + 1, off = (size_t)s->total_gpus;
    char *copy = strdup(name);
    /* Each array grows in turn; one that fails leaves the others longer, never shorter, so
     * the state stays whole and the node is simply not added. */
    if (!copy || grow(&s->node_names, n, sizeof *s->node_names) < 0 ||
        grow(&s->drained, n, sizeof *s->drained) < 0 || grow(&s->held, n, sizeof *s->held) < 0 ||
        grow(&s->node_gpus, n, sizeof *s->node_gpus) < 0 ||
        grow(&s->node_off, n, sizeof *s->node_off) < 0 ||
        grow(&s->node_free, n, sizeof *s->node_free) < 0 ||
        grow(&s->node_speed, n, sizeof *s->node_speed) < 0 ||
        grow(&s->node_group, n, sizeof *s->node_group) < 0 ||
        grow(&s->node_class, n, sizeof *s->node_class) < 0 ||
        grow(&s->owner, off + (size_t)gpus, sizeof *s->owner) < 0) {
        free(copy);
        return error_no_memory(err, "scheduler");
    }
    int group = group_of(s, type ? type : "", gpus, speed), cls = class_of(s, speed);
    if (group < 0 || cls < 0 || sched_set_usable(s, s->usable_gpus + gpus, err) < 0) {
        free(copy);
        return error_no_memory(err, "scheduler");
    }
    int i = s->cfg.nodes;
    s->node_names[i] = copy;
    s->drained[i] = s->held[i] = 0;
    s->node_gpus[i] = s->node_free[i] = gpus;
    s->node_off[i] = off;
    s->node_speed[i] = speed;
    s->node_group[i] = group;
    s->node_class[i] = cls;
    for (int g = 0; g < gpus; g++)
        s->owner[off + (size_t)g] = -1;
    s->total_gpus += gpus;
    if (gpus > s->max_node_gpus)
        s->max_node_gpus = gpus;
    s->cfg.nodes++;
    return i;
}
