/* Gaussian-process regression on GSL + OpenBLAS: SE and Matérn 5/2 kernels with ARD
 * lengthscales, input/output normalization, Cholesky with adaptive jitter, hyperparameters by
 * maximizing the log marginal likelihood (Rasmussen & Williams 2006, ch. 2 and 5). */
#ifndef TUNEDECK_GP_H
#define TUNEDECK_GP_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"

enum { GP_MAX_DIM = 64 };

typedef enum { GP_KERNEL_SE, GP_KERNEL_MATERN52 } GpKernel;

typedef struct Gp Gp;

Gp *gp_new(GpKernel kernel, size_t dim, Error *err);
void gp_free(Gp *g);

/* Copies n points (X row-major n x dim) and factorizes with the current hyperparameters.
 * Inputs are scaled to [0,1] per dimension and outputs standardized. */
int gp_set_data(Gp *g, const double *X, const double *y, size_t n, Error *err);
/* Adds one point without refitting hyperparameters (normalization is kept: the new point is
 * expressed in the existing scale); the Cholesky factor is extended by one row. */
int gp_add_point(Gp *g, const double *x, double y, Error *err);
size_t gp_count(const Gp *g);

/* Hyperparameters in normalized units: log lengthscale per dim, log signal variance, log
 * noise variance (both relative to the standardized outputs). */
int gp_set_hyper(Gp *g, const double *log_ls, double log_sf2, double log_sn2, Error *err);
void gp_get_hyper(const Gp *g, double *log_ls, double *log_sf2, double *log_sn2);
/* Lengthscale of dimension i in the original input units. */
double gp_lengthscale(const Gp *g, size_t i);

/* A normal prior on one kind of hyperparameter, in the normalized log units of gp_set_hyper;
 * sd <= 0: none (flat within the bounds). */
typedef struct {
    double mean, sd;
} GpNormal;

typedef struct {
    GpNormal log_ls; /* every lengthscale alike */
    GpNormal log_sf2, log_sn2;
} GpPrior;

/* The hyperparameter fit (core/opt/gp_fit.c). How to fit: the one fitter serves maximum
 * likelihood (prior NULL) and maximum a posteriori (the generic optimizer's priors). Each start
 * runs BFGS on the analytic gradient (the simplex when BFGS cannot start); the best end is
 * kept. */
typedef struct {
    const GpPrior *prior;
    int from_current;    /* a start at the current hyperparameters */
    int from_prior_mean; /* a start at the prior's means (with a prior) */
    int restarts;        /* random starts drawn from seed */
    uint64_t seed;
    /* The simplex finishes when BFGS stops unconverged: near-noiseless data without a prior
     * on the noise make the gradient unreliable (jitter). It costs hundreds of
     * factorizations, too many for a fit every trial in 30+ dimensions. */
    int polish;
} GpFitOptions;

int gp_fit_with(Gp *g, const GpFitOptions *how, Error *err);
/* Maximum likelihood from the current hyperparameters and `restarts` random starts,
 * polished. */
int gp_fit(Gp *g, int restarts, uint64_t seed, Error *err);
double gp_log_marginal(const Gp *g);
/* d log marginal likelihood / d (log lengthscales..., log sf2, log sn2), dim + 2 values, in
 * the normalized units gp_set_hyper takes. */
int gp_log_marginal_grad(const Gp *g, double *grad, Error *err);

/* Posterior of the latent function at x (original units): mean and variance. With no data
 * the prior (mean 0, variance 1 in original units) is returned. Never allocates: it works in
 * the Gp's scratch, so one Gp takes one prediction at a time. */
void gp_predict(const Gp *g, const double *x, double *mean, double *var);

/* Joint posterior samples at m points (Xs row-major m x dim): out[s*m + i] for s < ns, from
 * the standard normals z[s*m + i] given by the caller (common random numbers). */
int gp_sample(const Gp *g, const double *Xs, size_t m, const double *z, size_t ns, double *out,
              Error *err);

#endif
