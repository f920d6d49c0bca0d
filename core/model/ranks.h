/* The ranks of a schedule, as torch.distributed counts them: one process per device that the
 * schedule gives inputs to, on the machines that work, numbered machine by machine in the
 * cluster's order. tools/python/tunedeck_trial.py derives the same numbering. */
#ifndef TUNEDECK_RANKS_H
#define TUNEDECK_RANKS_H

#include <stddef.h>

#include "core/model/schedule.h"

typedef struct {
    int rank;        /* 0..world-1 */
    size_t machine;  /* index in the cluster */
    size_t device;   /* flat device index (cluster->n_devices) */
    int local_rank;  /* 0..local_world-1 on its machine */
    int local_world; /* ranks on its machine */
    int local_batch; /* the device's inputs */
} Rank;

/* Fills *out (caller frees) with every rank of the schedule; *n is the world size. Fails
 * when no device has inputs. */
int ranks_from_schedule(const Schedule *s, Rank **out, size_t *n, Error *err);

#endif
