/* Fewest-nodes placement over a pool of free GPUs per node (see placement.h). */
#include "core/sched/placement.h"

#include <stdlib.h>
#include <string.h>

int placement_pool_init(PlacementPool *p, int n_nodes, int gpus_per_node, const int *free_gpus)
{
    p->n_nodes = n_nodes;
    p->gpus_per_node = gpus_per_node;
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

void placement_pool_free(PlacementPool *p)
{
    free(p->free);
    free(p->bucket_cnt);
    p->free = p->bucket_cnt = NULL;
}

int placement_pool_total(const PlacementPool *p)
{
    int t = 0;
    for (int f = 1; f <= p->gpus_per_node; f++)
        t += f * p->bucket_cnt[f];
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

/* Lowest-numbered node with exactly `f` free GPUs (the bucket counts say one exists). */
static int node_with(const PlacementPool *p, int f)
{
    for (int i = 0; i < p->n_nodes; i++)
        if (p->free[i] == f)
            return i;
    return -1;
}

int placement_take(PlacementPool *p, int want, int *nodes_out, int *gpus_out, int max_slots)
{
    if (want <= 0)
        return 0;
    if (placement_pool_total(p) < want)
        return -1;
    int n = 0, g = p->gpus_per_node;
    while (want > 0 && n < max_slots) {
        int pick = -1;
        if (want < g) {
            /* Best fit: the fullest node that still holds the rest. */
            for (int f = want; f <= g && pick < 0; f++)
                if (p->bucket_cnt[f])
                    pick = f;
        }
        if (pick < 0) /* largest free block first */
            for (int f = g; f >= 1 && pick < 0; f--)
                if (p->bucket_cnt[f])
                    pick = f;
        if (pick < 0)
            return -1;
        int node = node_with(p, pick);
        int k = pick < want ? pick : want;
        take_from(p, node, k);
        nodes_out[n] = node;
        gpus_out[n] = k;
        n++;
        want -= k;
    }
    return want == 0 ? n : -1;
}
