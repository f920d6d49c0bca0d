/* A live job's own loss curve: its (step, loss) progress points, fitted with the convergence
 * model (convmodel.h, seed §3.1 after Optimus), say how much of its training is done, so the
 * scheduler's remaining work for it comes from the job rather than from the catalogue.
 *
 * "Done" is when the fitted loss has come within `tol` of its asymptote, relative to where it
 * started: l(K) = θ2 + tol·(l(0) − θ2); at step k the fraction done is k / K. */
#ifndef TUNEDECK_LOSSCURVE_H
#define TUNEDECK_LOSSCURVE_H

#include <stddef.h>

#include "core/sched/convmodel.h"

typedef struct {
    double *step, *loss;
    size_t n, cap;
    size_t n_at_fit; /* points when last fitted */
    int fitted;
    ConvModel model;
} LossCurve;

enum { LOSSCURVE_MIN_POINTS = 5, LOSSCURVE_MAX_POINTS = 256 };

void losscurve_init(LossCurve *c);
void losscurve_clear(LossCurve *c);
/* Adds a point (a step not after the last one replaces the points from it on: a job resumed
 * from an older checkpoint repeats steps). Non-positive or non-finite losses are ignored.
 * Beyond LOSSCURVE_MAX_POINTS every other point is dropped, so the whole run stays covered.
 * Refits when the points grew by a tenth since the last fit. Returns -1 when out of memory. */
int losscurve_add(LossCurve *c, double step, double loss);
/* The fraction of training done at `step` (0..1, 1 when past the end), or -1 while unknown:
 * fewer than LOSSCURVE_MIN_POINTS points, or a fitted curve that fell by less than 1% over
 * the points seen. */
double losscurve_fraction_done(const LossCurve *c, double step, double tol);
/* The step at which training is done, +inf while unknown. */
double losscurve_total_steps(const LossCurve *c, double tol);

#endif
