/* The GP's hyperparameter fit: the log marginal likelihood's gradient, the objective (maximum
 * likelihood or a posteriori, bounds as a penalty), and its minimisation by BFGS and the
 * simplex from several starts (Rasmussen & Williams 2006, ch. 5). */
#include "core/base/rng.h"
#include "core/opt/gp.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "core/opt/gp_priv.h"

/* Gradient of the log marginal likelihood (normalized outputs) with respect to the log
 * hyperparameters: 0.5 tr((alpha alpha^T - K^-1) dK/dtheta) (Rasmussen & Williams eq. 5.9). */
int gp_log_marginal_grad(const Gp *g, double *grad, Error *err)
{
    size_t n = g->n, d = g->dim;
    memset(grad, 0, (d + 2) * sizeof *grad);
    if (!g->factored)
        return error_set(err, "gp: not factorized");
    if (n == 0)
        return 0;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_matrix *Ki = gsl_matrix_alloc(n, n);
    gsl_set_error_handler(old);
    if (!Ki)
        return error_no_memory(err, "gp: gradient at %zu points", n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            gsl_matrix_set(Ki, i, j, g->L[i * g->cap + j]);
            gsl_matrix_set(Ki, j, i, g->L[i * g->cap + j]);
        }
    old = gsl_set_error_handler_off();
    int rc = gsl_linalg_cholesky_invert(Ki);
    gsl_set_error_handler(old);
    if (rc != GSL_SUCCESS) {
        gsl_matrix_free(Ki);
        return error_set(err, "gp: cannot invert the kernel matrix");
    }
    double sn2 = exp(g->log_sn2);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b <= a; b++) {
            double w = g->alpha[a] * g->alpha[b] - gsl_matrix_get(Ki, a, b);
            double mult = a == b ? 0.5 : 1.0; /* off-diagonal pairs count twice */
            const double *xa = &g->X[a * d], *xb = &g->X[b * d];
            double r2 = 0, q[GP_MAX_DIM];
            for (size_t i = 0; i < d; i++) {
                double t = (xa[i] - xb[i]) * g->inv_ls[i];
                q[i] = t * t;
                r2 += q[i];
            }
            double kf, dk_dq; /* kernel, and d kernel / d log ls_i = dk_dq * q_i */
            if (g->kernel == GP_KERNEL_SE) {
                kf = g->sf2 * exp(-0.5 * r2);
                dk_dq = kf;
            } else {
                double r = sqrt(5.0 * r2), e = exp(-r);
                kf = g->sf2 * (1.0 + r + r * r / 3.0) * e;
                dk_dq = g->sf2 * (5.0 / 3.0) * (1.0 + r) * e;
            }
            for (size_t i = 0; i < d; i++)
                grad[i] += mult * w * dk_dq * q[i];
            grad[d] += mult * w * kf;
            if (a == b)
                grad[d + 1] += mult * w * sn2;
        }
    gsl_matrix_free(Ki);
    return 0;
}

/* The objective of the fit: the negative log marginal likelihood, minus the log prior density
 * when there is a prior (maximum a posteriori), plus a quadratic penalty for leaving the
 * bounds. The hyperparameters are set to the clamped point, so the gradient is its own. */
typedef struct {
    Gp *g;
    const GpPrior *prior; /* NULL: maximum likelihood */
    int polish;
} FitObjective;

static void prior_term(const GpNormal *p, double x, double *lp, double *grad)
{
    if (!(p->sd > 0))
        return;
    double z = (x - p->mean) / p->sd;
    *lp -= 0.5 * z * z;
    *grad -= z / p->sd;
}

static void objective_fdf(const gsl_vector *v, void *params, double *f, gsl_vector *df)
{
    const FitObjective *o = params;
    Gp *g = o->g;
    size_t d = g->dim;
    double penalty = 0, pgrad[GP_MAX_DIM + 2], grad[GP_MAX_DIM + 2];
    for (size_t i = 0; i < d + 2; i++) {
        double lo = i < d ? LOG_LS_MIN : i == d ? LOG_SF2_MIN : LOG_SN2_MIN;
        double hi = i < d ? LOG_LS_MAX : i == d ? LOG_SF2_MAX : LOG_SN2_MAX;
        double x = gsl_vector_get(v, i), c = isfinite(x) ? gp_clamp(x, lo, hi) : lo;
        penalty += isfinite(x) ? (x - c) * (x - c) * 10 : 1e10;
        pgrad[i] = isfinite(x) ? 20 * (x - c) : 0;
        if (i < d)
            g->log_ls[i] = c;
        else if (i == d)
            g->log_sf2 = c;
        else
            g->log_sn2 = c;
    }
    if (gp_factor(g, NULL) < 0 || gp_log_marginal_grad(g, grad, NULL) < 0) {
        if (f)
            *f = 1e10 + penalty;
        if (df)
            for (size_t i = 0; i < d + 2; i++)
                gsl_vector_set(df, i, pgrad[i]);
        return;
    }
    double lp = gp_log_marginal(g);
    if (o->prior) {
        for (size_t i = 0; i < d; i++)
            prior_term(&o->prior->log_ls, g->log_ls[i], &lp, &grad[i]);
        prior_term(&o->prior->log_sf2, g->log_sf2, &lp, &grad[d]);
        prior_term(&o->prior->log_sn2, g->log_sn2, &lp, &grad[d + 1]);
    }
    if (f)
        *f = -lp + penalty;
    if (df)
        for (size_t i = 0; i < d + 2; i++)
            gsl_vector_set(df, i, -grad[i] + pgrad[i]);
}

static double objective_f(const gsl_vector *v, void *params)
{
    double f;
    objective_fdf(v, params, &f, NULL);
    return f;
}

static void objective_df(const gsl_vector *v, void *params, gsl_vector *df)
{
    objective_fdf(v, params, NULL, df);
}

static double minimize_simplex(FitObjective *o, const double *start, double *best_x)
{
    size_t d = o->g->dim + 2;
    gsl_multimin_function f = {objective_f, d, o};
    gsl_vector *x = gsl_vector_alloc(d), *step = gsl_vector_alloc(d);
    gsl_multimin_fminimizer *m =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, d);
    double val = INFINITY;
    if (x && step && m) {
        for (size_t i = 0; i < d; i++) {
            gsl_vector_set(x, i, start[i]);
            gsl_vector_set(step, i, 1.0);
        }
        if (gsl_multimin_fminimizer_set(m, &f, x, step) == GSL_SUCCESS) {
            for (int it = 0; it < 60 * (int)d; it++) {
                if (gsl_multimin_fminimizer_iterate(m) != GSL_SUCCESS)
                    break;
                if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-3) == GSL_SUCCESS)
                    break;
            }
            val = gsl_multimin_fminimizer_minimum(m);
            for (size_t i = 0; i < d; i++)
                best_x[i] = gsl_vector_get(m->x, i);
        }
    }
    if (m)
        gsl_multimin_fminimizer_free(m);
    gsl_vector_free(x);
    gsl_vector_free(step);
    return isfinite(val) ? val : INFINITY;
}

/* Quasi-Newton (BFGS) on the analytic gradient. The simplex takes over when BFGS cannot
 * start, and with `polish` finishes when BFGS stops unconverged. Returns the objective's
 * minimum found, best_x its point; INFINITY when out of memory. */
static double minimize_from(FitObjective *o, const double *start, double *best_x)
{
    size_t d = o->g->dim + 2;
    gsl_multimin_function_fdf fdf = {objective_f, objective_df, objective_fdf, d, o};
    gsl_vector *x = gsl_vector_alloc(d);
    gsl_multimin_fdfminimizer *m =
        gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, d);
    double val = INFINITY;
    int converged = 0;
    memcpy(best_x, start, d * sizeof *best_x);
    if (x && m) {
        for (size_t i = 0; i < d; i++)
            gsl_vector_set(x, i, start[i]);
        if (gsl_multimin_fdfminimizer_set(m, &fdf, x, 0.1, 0.1) == GSL_SUCCESS) {
            for (int it = 0; it < 200; it++) {
                if (gsl_multimin_fdfminimizer_iterate(m) != GSL_SUCCESS)
                    break;
                if (gsl_multimin_test_gradient(m->gradient, 1e-4) == GSL_SUCCESS) {
                    converged = 1;
                    break;
                }
            }
            val = m->f;
            for (size_t i = 0; i < d; i++)
                best_x[i] = gsl_vector_get(m->x, i);
        }
    }
    if (m)
        gsl_multimin_fdfminimizer_free(m);
    gsl_vector_free(x);
    int usable = isfinite(val) && val < 1e10;
    if (usable && (converged || !o->polish))
        return val;
    double simplex[GP_MAX_DIM + 2];
    double v2 = minimize_simplex(o, usable ? best_x : start, simplex);
    if (v2 < val) {
        val = v2;
        memcpy(best_x, simplex, d * sizeof *simplex);
    }
    return val;
}

int gp_fit_with(Gp *g, const GpFitOptions *how, Error *err)
{
    if (g->n < 2)
        return gp_factor(g, err); /* nothing to learn a scale from */
    size_t d = g->dim + 2;
    FitObjective o = {g, how->prior, how->polish};
    double current[GP_MAX_DIM + 2], start[GP_MAX_DIM + 2], cand[GP_MAX_DIM + 2],
        best[GP_MAX_DIM + 2];
    memcpy(current, g->log_ls, g->dim * sizeof(double));
    current[g->dim] = g->log_sf2;
    current[g->dim + 1] = g->log_sn2;
    memcpy(best, current, d * sizeof(double));
    double best_val = INFINITY;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_rng *rng = how->restarts > 0 ? rng_new((unsigned long)how->seed + 7) : NULL;
    int n_starts = (how->from_current ? 1 : 0) + (how->from_prior_mean && how->prior ? 1 : 0) +
                   (rng ? how->restarts : 0);
    for (int k = 0; k < n_starts; k++) {
        if (k == 0 && how->from_current) {
            memcpy(start, current, d * sizeof(double));
        } else if (k == (how->from_current ? 1 : 0) && how->from_prior_mean && how->prior) {
            for (size_t i = 0; i < g->dim; i++)
                start[i] = how->prior->log_ls.mean;
            start[g->dim] = how->prior->log_sf2.mean;
            start[g->dim + 1] = how->prior->log_sn2.mean;
        } else {
            for (size_t i = 0; i < g->dim; i++)
                start[i] = log(0.05) + gsl_rng_uniform(rng) * (log(5.0) - log(0.05));
            start[g->dim] = -1.0 + 2.0 * gsl_rng_uniform(rng);
            start[g->dim + 1] = log(1e-6) + gsl_rng_uniform(rng) * (log(0.3) - log(1e-6));
        }
        double v = minimize_from(&o, start, cand);
        if (v < best_val) {
            best_val = v;
            memcpy(best, cand, d * sizeof(double));
        }
    }
    gsl_rng_free(rng);
    gsl_set_error_handler(old);
    if (how->restarts > 0 && !rng)
        return error_no_memory(err, "gp: hyperparameter fit");
    return gp_set_hyper(g, best, best[g->dim], best[g->dim + 1], err);
}

int gp_fit(Gp *g, int restarts, uint64_t seed, Error *err)
{
    GpFitOptions how = {.from_current = 1, .restarts = restarts, .seed = seed, .polish = 1};
    return gp_fit_with(g, &how, err);
}
