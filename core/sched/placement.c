/* Fewest-nodes placement over a pool of free GPUs per node (see placement.h). */
#include "core/sched/placement.h"

#include <stdlib.h>
#include <string.h>

int placement_pool_init(PlacementPool *p, int n_nodes, int gpus_per_node, const int *free_gpus)
{
    p->n_nodes = n_nodes;
    p->gpus_per_node = gpus_per_node;
    p->cls = NULL;
    p->free = malloc((size_t)n_nodes * sizeof *p->free);
    p->bucket_cnt = calloc((size_t)gpus_per_node + 1, sizeof *p->bucket_cnt);
    if (!p->free || !p->bucket_cnt) {
        placement_pool_free(p);
        return -1;
    }
    memcpy(p->free, free_gpus, (size_t)n_nodes * sizeof *p->free);
    for (int i = 0; i < n_nodes; i++)
        p->bucket_cnt[p->free[i]]++;
    return 0;
}

int placement_pool_set_classes(PlacementPool *p, const int *node_class)
{
    free(p->cls);
    p->cls = NULL;
    if (!node_class)
        return 0;
    p->cls = malloc((size_t)p->n_nodes * sizeof *p->cls);
    if (!p->cls)
        return -1;
    memcpy(p->cls, node_class, (size_t)p->n_nodes * sizeof *p->cls);
    return 0;
}

void placement_pool_free(PlacementPool *p)
{
    free(p->free);
    free(p->bucket_cnt);
    free(p->cls);
    p->free = p->bucket_cnt = p->cls = NULL;
}

int placement_pool_total(const PlacementPool *p)
{
    int t = 0;
    for (int f = 1; f <= p->gpus_per_node; f++)
        t += f * p->bucket_cnt[f];
    return t;
}

int placement_class_total(const PlacementPool *p, int cls)
{
    if (!p->cls)
        return placement_pool_total(p);
    int t = 0;
    for (int i = 0; i < p->n_nodes; i++)
        t += p->cls[i] == cls ? p->free[i] : 0;
    return t;
}

int placement_min_nodes(int w, int g)
{
    return (w + g - 1) / g;
}

static void take_from(PlacementPool *p, int node, int k)
{
    p->bucket_cnt[p->free[node]]--;
    p->free[node] -= k;
    p->bucket_cnt[p->free[node]]++;
}

void placement_give(PlacementPool *p, int node, int k)
{
    take_from(p, node, -k);
}

void placement_take_on(PlacementPool *p, int node, int k)
{
    take_from(p, node, k);
}

/* Lowest-numbered node with exactly `f` free GPUs (the bucket counts say one exists). */
static int node_with(const PlacementPool *p, int f)
{
    for (int i = 0; i < p->n_nodes; i++)
        if (p->free[i] == f)
            return i;
    return -1;
}

/* The node a job's next slot goes on, among all nodes (buckets) or one class (a scan):
 * best fit when the rest fits in one node, else the largest free block; lowest index on
 * ties. -1 when none has a free GPU. */
static int pick_node(const PlacementPool *p, int cls, int want)
{
    int g = p->gpus_per_node;
    if (cls < 0) {
        int pick = -1;
        if (want < g)
            for (int f = want; f <= g && pick < 0; f++)
                if (p->bucket_cnt[f])
                    pick = f;
        if (pick < 0)
            for (int f = g; f >= 1 && pick < 0; f--)
                if (p->bucket_cnt[f])
                    pick = f;
        return pick < 0 ? -1 : node_with(p, pick);
    }
    int fit = -1, big = -1;
    for (int i = 0; i < p->n_nodes; i++) {
        int f = p->free[i];
        if (p->cls[i] != cls || f < 1)
            continue;
        if (f >= want && (fit < 0 || f < p->free[fit]))
            fit = i;
        if (big < 0 || f > p->free[big])
            big = i;
    }
    return fit >= 0 && want < g ? fit : big;
}

static int take(PlacementPool *p, int cls, int want, int *nodes_out, int *gpus_out, int max_slots)
{
    if (want <= 0)
        return 0;
    if ((cls < 0 ? placement_pool_total(p) : placement_class_total(p, cls)) < want)
        return -1;
    int n = 0;
    while (want > 0 && n < max_slots) {
        int node = pick_node(p, cls, want);
        if (node < 0)
            return -1;
        int k = p->free[node] < want ? p->free[node] : want;
        take_from(p, node, k);
        nodes_out[n] = node;
        gpus_out[n] = k;
        n++;
        want -= k;
    }
    return want == 0 ? n : -1;
}

int placement_take(PlacementPool *p, int want, int *nodes_out, int *gpus_out, int max_slots)
{
    return take(p, -1, want, nodes_out, gpus_out, max_slots);
}

int placement_take_class(PlacementPool *p, int cls, int want, int *nodes_out, int *gpus_out,
                         int max_slots)
{
    return take(p, p->cls ? cls : -1, want, nodes_out, gpus_out, max_slots);
}
