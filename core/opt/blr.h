/* Bayesian linear regression with an independent Gaussian prior per coefficient: the
 * parametric half of the semi-parametric parts of the structured model (DESIGN §2.1). */
#ifndef TUNEDECK_BLR_H
#define TUNEDECK_BLR_H

#include <stddef.h>

#include "core/base/error.h"

enum { BLR_MAX_P = 32 };

typedef struct {
    size_t p;
    double mean[BLR_MAX_P];
    /* Lower Cholesky factor R of the posterior precision (A = R R^T), row-major p x p. */
    double prec_chol[BLR_MAX_P * BLR_MAX_P];
    double noise_sd;
} Blr;

/* Posterior of y = phi . beta + N(0, noise_sd^2) under beta_i ~ N(prior_mean_i,
 * prior_sd_i^2); phi is row-major n x p. n may be 0 (the prior). */
int blr_fit(Blr *b, const double *phi, const double *y, size_t n, size_t p,
            const double *prior_mean, const double *prior_sd, double noise_sd, Error *err);
double blr_predict_mean(const Blr *b, const double *phi);
double blr_predict_var(const Blr *b, const double *phi);
/* beta = mean + R^-T z: one posterior draw from p standard normals. */
void blr_sample(const Blr *b, const double *z, double *beta);

#endif
