/* The insides of a Gp, shared by its files only: gp.c (data, factorization, prediction) and
 * gp_fit.c (the hyperparameter fit, which sets the hyperparameters in place and refactors at
 * every step). Everyone else includes core/opt/gp.h. */
#ifndef TUNEDECK_GP_PRIV_H
#define TUNEDECK_GP_PRIV_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/opt/gp.h"

/* Bounds on hyperparameters (normalized units): keep the fit away from degenerate kernels. */
static const double LOG_LS_MIN = -3.5, LOG_LS_MAX = 3.5; /* 0.03 .. 33 of the input range */
static const double LOG_SF2_MIN = -9.0, LOG_SF2_MAX = 4.0;
static const double LOG_SN2_MIN = -14.0, LOG_SN2_MAX = 1.0;

struct Gp {
    GpKernel kernel;
    size_t dim, n, cap;
    double log_ls[GP_MAX_DIM], log_sf2, log_sn2;
    double inv_ls[GP_MAX_DIM], sf2; /* exp of the above, cached for the kernel */
    double jitter;                  /* added to the diagonal when plain Cholesky failed */
    double x_lo[GP_MAX_DIM], x_scale[GP_MAX_DIM];
    double y_mean, y_std;
    double *X;     /* n x dim normalized */
    double *y;     /* n standardized */
    double *L;     /* cap x cap, lower Cholesky factor of K + (sn2+jitter) I */
    double *alpha; /* n: K^-1 y */
    double *k;     /* cap: gp_predict's scratch, so that a prediction never allocates */
    int factored;
};

/* Factorizes K + sn2 I at the current hyperparameters (their exp cache refreshed), adding
 * jitter when plain Cholesky fails (gp.c); the fit calls it at every step. 0, or -1 with err
 * filled (err may be NULL). */
int gp_factor(Gp *g, Error *err);

static inline double gp_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

#endif
