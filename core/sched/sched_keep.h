/* Internal: one decision's working set (core/sched/sched_decide.c, sched_place.c) and the
 * preference that lets a node-capped job keep the GPU numbers its process runs on
 * (core/sched/sched_keep.c). Not a public API. */
#ifndef TUNEDECK_SCHED_KEEP_H
#define TUNEDECK_SCHED_KEEP_H

#include <stddef.h>

#include "core/sched/placement.h"
#include "core/sched/sched_priv.h"

typedef struct {
    int want;
    size_t job;
} PlaceOrder;

typedef struct {
    size_t m;       /* live, unpaused jobs shown to the policy */
    size_t *active; /* job index of each */
    PolicyJob *pj;
    int *target;        /* GPUs the policy gives each */
    PlaceOrder *order;  /* jobs to place (want = GPUs), biggest first */
    PlaceOrder *placed; /* placed jobs (want = GPUs gained), for the log */
    size_t n_order, n_placed;
    int *nodes, *gp;     /* one placement's slots */
    unsigned char *move; /* jobs that must leave their nodes: drained, or beside others' holds */
    size_t *was_slots;   /* slots each held before release_moved (still in its slots array) */
    /* s->owner before release_moved, copied at the first node-capped job it releases (NULL
     * while none), less the numbers of the capped jobs that cannot keep their place
     * (sched_forget_unkept): which GPU numbers a job that may keep its place ran on, for
     * sched_keep_old_place and occupy's order (sched_keep_free_for) */
    int *was_owner;
} Decision;

/* Whether a free GPU whose owner before the decision was `before` (-1: none) suits job `ji` in
 * occupy's pass 0, 1 or 2 (sched_keep.c; occupy: sched_place.c). */
int sched_keep_free_for(const SchedState *s, size_t ji, int before, int pass);

/* After release_moved: the numbers of each node-capped job that cannot keep its place read as
 * never held in d->was_owner, so the jobs placed in this decision take them first. */
void sched_forget_unkept(const SchedState *s, Decision *d);

/* The active job k, placed on the ns slots in d->nodes, d->gp at exactly the GPUs it held
 * (less than the policy asked), keeps its old GPUs where it may: 1 when kept (the taken slots
 * back in the pool, its old GPUs its own again), 0 when it must take what placement gave. */
int sched_keep_old_place(SchedState *s, Decision *d, PlacementPool *pool, size_t k, int ns);

#endif
