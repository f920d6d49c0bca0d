/* A live job's own loss curve: its (step, loss) progress points, fitted with the convergence
 * model (convmodel.h, seed §3.1 after Optimus), say how much of its training is done, so the
 * scheduler's remaining work for it comes from the job rather than from the catalogue.
 *
 * "Done" is when the fitted loss has come within `tol` of its asymptote, relative to where it
 * started: l(K) = θ2 + tol·(l(0) − θ2); at step k the fraction done is k / K.
 *
 * The model's asymptote is θ2 ≥ 0 (a cross-entropy's floor), so a loss ≤ 0 (a negative
 * log-likelihood of a continuous distribution, an ELBO) is outside it. Shifting such losses
 * by a guessed floor would make the guess decide how much is "done"; instead the curve gives
 * up at the first loss ≤ 0 and says "unknown" from then on (the caller keeps the catalogue's
 * progress and says so once). */
#ifndef TUNEDECK_LOSSCURVE_H
#define TUNEDECK_LOSSCURVE_H

#include <stddef.h>

#include "core/sched/convmodel.h"

typedef struct {
    double *step, *loss;
    size_t n, cap;
    size_t n_at_fit; /* points when last fitted */
    int fitted;
    int below_model; /* a loss ≤ 0 was seen: the model cannot describe this job */
    ConvModel model;
} LossCurve;

enum { LOSSCURVE_MIN_POINTS = 5, LOSSCURVE_MAX_POINTS = 256 };

void losscurve_init(LossCurve *c);
void losscurve_clear(LossCurve *c);
/* Adds a point (a step not after the last one replaces the points from it on: a job resumed
 * from an older checkpoint repeats steps). Non-finite losses are ignored; a loss ≤ 0 gives the
 * curve up (below_model, see above). Beyond LOSSCURVE_MAX_POINTS every other point is
 * dropped, so the whole run stays covered. Refits when the points grew by a tenth since the
 * last fit. Returns -1 when out of memory, 1 when this point was the first loss ≤ 0, else 0. */
int losscurve_add(LossCurve *c, double step, double loss);
/* The fraction of training done at `step` (0..1, 1 when past the end), or -1 while unknown:
 * fewer than LOSSCURVE_MIN_POINTS points, a fitted curve that fell by less than 1% over
 * the points seen, or a curve given up on a loss ≤ 0. */
double losscurve_fraction_done(const LossCurve *c, double step, double tol);
/* The step at which training is done, +inf while unknown. */
double losscurve_total_steps(const LossCurve *c, double tol);

#endif
