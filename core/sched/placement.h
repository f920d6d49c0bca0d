/* Task placement for ring-allreduce jobs (seed §4.3): a job's GPUs go on as few nodes as
 * possible — best fit inside one node when it fits, whole free nodes first when it does not.
 * Keeping unchanged jobs where they are is the caller's part (core/sched/sched.c). */
#ifndef TUNEDECK_PLACEMENT_H
#define TUNEDECK_PLACEMENT_H

#include <stddef.h>

typedef struct {
    int n_nodes, gpus_per_node;
    int *free;       /* free GPUs per node (drained nodes: 0) */
    int *bucket_cnt; /* nodes per free count, 0..gpus_per_node */
} PlacementPool;

/* free_gpus is copied; returns -1 on allocation failure. */
int placement_pool_init(PlacementPool *p, int n_nodes, int gpus_per_node, const int *free_gpus);
void placement_pool_free(PlacementPool *p);
int placement_pool_total(const PlacementPool *p);
/* Takes `want` GPUs on the fewest nodes; writes (node, gpus) pairs into nodes_out/gpus_out
 * (capacity max_slots) and returns how many, or -1 when the pool has fewer than `want`. */
int placement_take(PlacementPool *p, int want, int *nodes_out, int *gpus_out, int max_slots);
/* Fewest nodes that can hold w GPUs of this size: ceil(w / gpus_per_node). */
int placement_min_nodes(int w, int gpus_per_node);

#endif
