/* Convergence model of a training job (seed §3.1, after Optimus): loss over steps k
 *     l(k) = 1 / (θ0·k + θ1) + θ2,   θ ≥ 0,
 * fitted online by NNLS. θ2 (the asymptote) enters non-linearly: for each candidate θ2 on a
 * grid below the smallest observed loss, 1/(l − θ2) = θ0·k + θ1 is an NNLS problem; the θ2
 * with the smallest loss-space residual wins. */
#ifndef TUNEDECK_CONVMODEL_H
#define TUNEDECK_CONVMODEL_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct {
    double theta0, theta1, theta2;
    double rmse;
} ConvModel;

/* Needs at least 3 points with positive losses. */
int convmodel_fit(ConvModel *m, const double *steps, const double *loss, size_t n, Error *err);
double convmodel_loss(const ConvModel *m, double step);
/* Steps at which the loss reaches target; +inf when target ≤ θ2 (never). */
double convmodel_steps_to(const ConvModel *m, double target_loss);

#endif
