/* The pool of candidate schedules that both bespoke optimizers (parameter server and
 * allreduce) keep for expected improvement: the best few by the model's mean, no repeats. */
#ifndef TUNEDECK_CANDPOOL_H
#define TUNEDECK_CANDPOOL_H

#include <stddef.h>

#include "core/model/schedule.h"

typedef struct {
    Schedule *s; /* owned by the pool (or by whoever takes the candidate out) */
    double mean_s;
} Cand;

/* Offers schedule s with its mean time to pool[0..*n), which has room for cap: a copy enters
 * when the time is finite, the schedule is not there yet, and the pool has room or its worst
 * is slower (that one is freed). -1, the pool unchanged, when out of memory. */
int cand_pool_offer(Cand *pool, size_t *n, size_t cap, const Schedule *s, double mean_s);

/* qsort comparator: fastest mean first. */
int cand_cmp_mean(const void *a, const void *b);

#endif
