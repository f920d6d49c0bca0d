/* Task placement for ring-allreduce jobs (seed §4.3): a job's GPUs go on as few nodes as
 * possible — best fit inside one node when it fits, whole free nodes first when it does not.
 * In a mixed cluster each node has a class (its GPU type's rank, 0 = fastest) and a job can
 * be kept within one class, since a ring runs at its slowest GPU's pace.
 * Keeping unchanged jobs where they are is the caller's part (core/sched/sched_decide.c). */
#ifndef TUNEDECK_PLACEMENT_H
#define TUNEDECK_PLACEMENT_H

#include <stddef.h>

typedef struct {
    int n_nodes, gpus_per_node; /* gpus_per_node: the largest node's count */
    int *free;                  /* free GPUs per node (drained nodes: 0) */
    int *bucket_cnt;            /* nodes per free count, 0..gpus_per_node */
    int *cls;                   /* class per node, NULL when all alike */
} PlacementPool;

/* free_gpus (and node_class, which may be NULL) are copied; -1 on allocation failure. */
int placement_pool_init(PlacementPool *p, int n_nodes, int gpus_per_node, const int *free_gpus);
int placement_pool_set_classes(PlacementPool *p, const int *node_class);
void placement_pool_free(PlacementPool *p);
int placement_pool_total(const PlacementPool *p);
/* Free GPUs on the nodes of one class. */
int placement_class_total(const PlacementPool *p, int cls);
/* Takes `want` GPUs on the fewest nodes; writes (node, gpus) pairs into nodes_out/gpus_out
 * (capacity max_slots) and returns how many, or -1 when the pool has fewer than `want`. */
int placement_take(PlacementPool *p, int want, int *nodes_out, int *gpus_out, int max_slots);
/* The same, on the nodes of class `cls` only. */
int placement_take_class(PlacementPool *p, int cls, int want, int *nodes_out, int *gpus_out,
                         int max_slots);
/* Puts k GPUs of a node back into the pool (a job that leaves it). */
void placement_give(PlacementPool *p, int node, int k);
/* Takes k GPUs of one node (a job kept where it was); the caller knows they are free. */
void placement_take_on(PlacementPool *p, int node, int k);
/* Fewest nodes that can hold w GPUs of this size: ceil(w / gpus_per_node). */
int placement_min_nodes(int w, int gpus_per_node);

#endif
