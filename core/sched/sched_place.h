/* Internal: the placement stage of one decision (core/sched/sched_place.c), on its working set
 * (sched_keep.h's Decision). Not a public API. */
#ifndef TUNEDECK_SCHED_PLACE_H
#define TUNEDECK_SCHED_PLACE_H

#include "core/base/error.h"
#include "core/sched/sched_keep.h"

/* Places the jobs release_moved queued in d->order at their new sizes (a node-capped one may
 * keep its old place: sched_keep_old_place), then moves running jobs of a mixed cluster to
 * faster GPUs where their remaining time there plus the restart stall beats staying. Each
 * placed or moved job is appended to d->placed for the log. 0, or -1 with err filled when out
 * of memory. */
int sched_place_moved(SchedState *s, Decision *d, Error *err);

#endif
