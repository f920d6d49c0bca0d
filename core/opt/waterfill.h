/* Load balancing for a fixed role set (DESIGN §2.1 "decomposition"): the batch is spread
 * over the workers' devices so that their predicted finishing times are equal, by inverting
 * each device's mean time curve at a common deadline (water-filling). */
#ifndef TUNEDECK_WATERFILL_H
#define TUNEDECK_WATERFILL_H

#include "core/opt/sgd_model.h"

/* Inverts one device curve per slot: the inputs slot i finishes within t_s. */
typedef double (*WaterfillInverse)(void *ctx, size_t slot, double t_s);

/* Smallest deadline t at which the slots' capacities sum to `total` (bisection on a
 * non-decreasing capacity), and each slot's real-valued load at t in x[n]. Returns INFINITY
 * when even an unbounded deadline cannot fit `total`. */
double waterfill(WaterfillInverse inv, void *ctx, size_t n, double total, double *x);

/* Fills s->inputs for the workers already marked in s from the model's mean curves; per
 * multi-device machine it picks the best of: one device alone, all its GPUs, all devices
 * (paying the aggregation). Returns the deadline, INFINITY when nothing fits (or when out
 * of memory: no loading found). */
double waterfill_schedule(const SgdModel *m, Schedule *s);

/* The same with the loading option forced: each multi-device machine loads one device
 * alone (its best), or all of its devices. Candidates the mean model would not pick, for
 * expected improvement to weigh when the model is unsure of interference. */
typedef enum { WATERFILL_BEST, WATERFILL_ALONE, WATERFILL_SHARED } WaterfillMode;
double waterfill_schedule_mode(const SgdModel *m, Schedule *s, WaterfillMode mode);

#endif
