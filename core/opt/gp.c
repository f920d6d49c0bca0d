/* Gaussian-process regression: kernels, Cholesky with adaptive jitter, marginal likelihood,
 * hyperparameter fit, prediction and joint sampling (Rasmussen & Williams, Algorithm 2.1). */
#include "core/base/rng.h"
#include "core/opt/gp.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static void cache_hyper(Gp *g)
{
    for (size_t i = 0; i < g->dim; i++)
        g->inv_ls[i] = exp(-g->log_ls[i]);
    g->sf2 = exp(g->log_sf2);
}

Gp *gp_new(GpKernel kernel, size_t dim, Error *err)
{
    if (dim < 1 || dim > GP_MAX_DIM) {
        error_set(err, "gp: dimension %zu out of range 1..%d", dim, GP_MAX_DIM);
        return NULL;
    }
    if (kernel != GP_KERNEL_SE && kernel != GP_KERNEL_MATERN52) {
        error_set(err, "gp: unknown kernel %d", (int)kernel);
        return NULL;
    }
    Gp *g = calloc(1, sizeof *g);
    if (!g) {
        error_no_memory(err, "gp of dimension %zu", dim);
        return NULL;
    }
    g->kernel = kernel;
    g->dim = dim;
    for (size_t i = 0; i < dim; i++) {
        g->log_ls[i] = log(0.5);
        g->x_scale[i] = 1;
    }
    g->log_sf2 = 0;
    g->log_sn2 = log(1e-2);
    g->y_std = 1;
    cache_hyper(g);
    return g;
}

void gp_free(Gp *g)
{
    if (!g)
        return;
    free(g->X);
    free(g->y);
    free(g->L);
    free(g->alpha);
    free(g->k);
    free(g);
}

size_t gp_count(const Gp *g)
{
    return g->n;
}

static double kernel_n(const Gp *g, const double *a, const double *b)
{
    double r2 = 0;
    for (size_t i = 0; i < g->dim; i++) {
        double d = (a[i] - b[i]) * g->inv_ls[i];
        r2 += d * d;
    }
    double sf2 = g->sf2;
    if (g->kernel == GP_KERNEL_SE)
        return sf2 * exp(-0.5 * r2);
    double r = sqrt(5.0 * r2);
    return sf2 * (1.0 + r + r * r / 3.0) * exp(-r);
}

static void normalize_x(const Gp *g, const double *x, double *out)
{
    for (size_t i = 0; i < g->dim; i++)
        out[i] = (x[i] - g->x_lo[i]) / g->x_scale[i];
}

static int grow(Gp *g, size_t need)
{
    if (need <= g->cap)
        return 0;
    size_t cap = g->cap ? g->cap : 16;
    while (cap < need)
        cap *= 2;
    double *X = realloc(g->X, cap * g->dim * sizeof *X);
    double *y = X ? realloc(g->y, cap * sizeof *y) : NULL;
    double *a = y ? realloc(g->alpha, cap * sizeof *a) : NULL;
    double *k = a ? realloc(g->k, cap * sizeof *k) : NULL;
    double *L = k ? calloc(cap * cap, sizeof *L) : NULL;
    if (X)
        g->X = X;
    if (y)
        g->y = y;
    if (a)
        g->alpha = a;
    if (k)
        g->k = k;
    if (!L)
        return -1;
    for (size_t i = 0; i < g->n; i++)
        memcpy(&L[i * cap], &g->L[i * g->cap], g->n * sizeof *L);
    free(g->L);
    g->L = L;
    g->cap = cap;
    return 0;
}

static void solve_alpha(Gp *g)
{
    memcpy(g->alpha, g->y, g->n * sizeof *g->alpha);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)g->n, g->L, (int)g->cap,
                g->alpha, 1);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, (int)g->n, g->L, (int)g->cap,
                g->alpha, 1);
}

/* Cholesky of K + sn2 I; on failure adds jitter growing tenfold (up to 1e-2 of the signal). */
static int factor(Gp *g, Error *err)
{
    g->factored = 0;
    cache_hyper(g);
    if (g->n == 0) {
        g->factored = 1;
        return 0;
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    double sf2 = g->sf2, jitter = 0;
    int ok = 0;
    for (int attempt = 0; attempt < 8 && !ok; attempt++) {
        for (size_t i = 0; i < g->n; i++) {
            for (size_t j = 0; j <= i; j++)
                g->L[i * g->cap + j] = kernel_n(g, &g->X[i * g->dim], &g->X[j * g->dim]);
            g->L[i * g->cap + i] += exp(g->log_sn2) + jitter;
        }
        gsl_matrix_view m = gsl_matrix_view_array_with_tda(g->L, g->n, g->n, g->cap);
        if (gsl_linalg_cholesky_decomp1(&m.matrix) == GSL_SUCCESS) {
            ok = 1;
            break;
        }
        jitter = jitter == 0 ? 1e-10 * sf2 : jitter * 10;
    }
    gsl_set_error_handler(old);
    if (!ok)
        return error_set(err,
                         "gp: kernel matrix of %zu points not positive definite even with "
                         "jitter",
                         g->n);
    g->jitter = jitter;
    /* decomp1 leaves L^T in the upper triangle; predictions read only the lower one. */
    solve_alpha(g);
    g->factored = 1;
    return 0;
}

int gp_set_data(Gp *g, const double *X, const double *y, size_t n, Error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            return error_set(err, "gp: output %zu is not finite", i);
        for (size_t d = 0; d < g->dim; d++)
            if (!isfinite(X[i * g->dim + d]))
                return error_set(err, "gp: input %zu dimension %zu is not finite", i, d);
    }
    if (grow(g, n) < 0)
        return error_no_memory(err, "gp: %zu points", n);
    g->n = n;
    for (size_t d = 0; d < g->dim; d++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            lo = fmin(lo, X[i * g->dim + d]);
            hi = fmax(hi, X[i * g->dim + d]);
        }
        g->x_lo[d] = n ? lo : 0;
        g->x_scale[d] = n && hi - lo > 1e-12 * fmax(1.0, fabs(hi)) ? hi - lo : 1.0;
    }
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i];
    mean = n ? mean / n : 0;
    for (size_t i = 0; i < n; i++)
        var += (y[i] - mean) * (y[i] - mean);
    var = n > 1 ? var / (n - 1) : 0;
    double scale = fmax(fabs(mean), 1e-300);
    g->y_mean = mean;
    g->y_std = var > 1e-24 * scale * scale ? sqrt(var) : (n ? fmax(1e-6 * scale, 1e-12) : 1.0);
    for (size_t i = 0; i < n; i++) {
        normalize_x(g, &X[i * g->dim], &g->X[i * g->dim]);
        g->y[i] = (y[i] - g->y_mean) / g->y_std;
    }
    return factor(g, err);
}

int gp_add_point(Gp *g, const double *x, double y, Error *err)
{
    if (!isfinite(y))
        return error_set(err, "gp: output is not finite");
    for (size_t d = 0; d < g->dim; d++)
        if (!isfinite(x[d]))
            return error_set(err, "gp: input dimension %zu is not finite", d);
    if (g->n == 0)
        return gp_set_data(g, x, &y, 1, err);
    if (grow(g, g->n + 1) < 0)
        return error_no_memory(err, "gp");
    size_t n = g->n;
    double *xn = &g->X[n * g->dim];
    normalize_x(g, x, xn);
    g->y[n] = (y - g->y_mean) / g->y_std;
    double *row = &g->L[n * g->cap];
    for (size_t j = 0; j < n; j++)
        row[j] = kernel_n(g, xn, &g->X[j * g->dim]);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, g->L, (int)g->cap,
                row, 1);
    double d2 =
        kernel_n(g, xn, xn) + exp(g->log_sn2) + g->jitter - cblas_ddot((int)n, row, 1, row, 1);
    g->n = n + 1;
    if (d2 <= 1e-12 * exp(g->log_sf2))
        return factor(g, err); /* the extension lost definiteness: refactor with jitter */
    row[n] = sqrt(d2);
    solve_alpha(g);
    return 0;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int gp_set_hyper(Gp *g, const double *log_ls, double log_sf2, double log_sn2, Error *err)
{
    for (size_t i = 0; i < g->dim; i++) {
        if (!isfinite(log_ls[i]))
            return error_set(err, "gp: lengthscale %zu is not finite", i);
        g->log_ls[i] = clampd(log_ls[i], LOG_LS_MIN, LOG_LS_MAX);
    }
    if (!isfinite(log_sf2) || !isfinite(log_sn2))
        return error_set(err, "gp: signal or noise variance is not finite");
    g->log_sf2 = clampd(log_sf2, LOG_SF2_MIN, LOG_SF2_MAX);
    g->log_sn2 = clampd(log_sn2, LOG_SN2_MIN, LOG_SN2_MAX);
    return factor(g, err);
}

void gp_get_hyper(const Gp *g, double *log_ls, double *log_sf2, double *log_sn2)
{
    if (log_ls)
        memcpy(log_ls, g->log_ls, g->dim * sizeof *log_ls);
    if (log_sf2)
        *log_sf2 = g->log_sf2;
    if (log_sn2)
        *log_sn2 = g->log_sn2;
}

double gp_lengthscale(const Gp *g, size_t i)
{
    return i < g->dim ? exp(g->log_ls[i]) * g->x_scale[i] : NAN;
}

double gp_log_marginal(const Gp *g)
{
    if (!g->factored)
        return -INFINITY;
    double lml = -0.5 * cblas_ddot((int)g->n, g->y, 1, g->alpha, 1);
    for (size_t i = 0; i < g->n; i++)
        lml -= log(g->L[i * g->cap + i]);
    lml -= 0.5 * g->n * log(2 * M_PI);
    /* In original units: the standardization is a change of variables. */
    return lml - g->n * log(g->y_std);
}

/* ---- hyperparameter fit ---- */

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
        double x = gsl_vector_get(v, i), c = isfinite(x) ? clampd(x, lo, hi) : lo;
        penalty += isfinite(x) ? (x - c) * (x - c) * 10 : 1e10;
        pgrad[i] = isfinite(x) ? 20 * (x - c) : 0;
        if (i < d)
            g->log_ls[i] = c;
        else if (i == d)
            g->log_sf2 = c;
        else
            g->log_sn2 = c;
    }
    if (factor(g, NULL) < 0 || gp_log_marginal_grad(g, grad, NULL) < 0) {
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
        return factor(g, err); /* nothing to learn a scale from */
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

/* ---- prediction ---- */

void gp_predict(const Gp *g, const double *x, double *mean, double *var)
{
    double xn[GP_MAX_DIM];
    normalize_x(g, x, xn);
    double sf2 = exp(g->log_sf2);
    if (g->n == 0 || !g->factored) {
        *mean = g->y_mean;
        *var = sf2 * g->y_std * g->y_std;
        return;
    }
    double *k = g->k; /* grown with the data: the prediction itself never allocates */
    for (size_t i = 0; i < g->n; i++)
        k[i] = kernel_n(g, xn, &g->X[i * g->dim]);
    double mu = cblas_ddot((int)g->n, k, 1, g->alpha, 1);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)g->n, g->L, (int)g->cap,
                k, 1);
    double v = sf2 - cblas_ddot((int)g->n, k, 1, k, 1);
    *mean = g->y_mean + g->y_std * mu;
    *var = (v > 0 ? v : 0) * g->y_std * g->y_std;
}

int gp_sample(const Gp *g, const double *Xs, size_t m, const double *z, size_t ns, double *out,
              Error *err)
{
    if (m == 0)
        return 0;
    if (!g->factored)
        return error_set(err, "gp: not factorized");
    size_t n = g->n, dim = g->dim;
    double *xn = malloc(m * dim * sizeof *xn);
    double *mu = calloc(m, sizeof *mu);
    double *C = malloc(m * m * sizeof *C);
    double *V = n ? malloc(n * m * sizeof *V) : NULL; /* n x m: L^-1 K(X, Xs) */
    double *Lc = malloc(m * m * sizeof *Lc);
    if (!xn || !mu || !C || (n && !V) || !Lc) {
        free(xn), free(mu), free(C), free(V), free(Lc);
        return error_no_memory(err, "gp: joint samples at %zu points", m);
    }
    for (size_t i = 0; i < m; i++)
        normalize_x(g, &Xs[i * dim], &xn[i * dim]);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j <= i; j++)
            C[i * m + j] = C[j * m + i] = kernel_n(g, &xn[i * dim], &xn[j * dim]);
    if (n) {
        for (size_t a = 0; a < n; a++)
            for (size_t i = 0; i < m; i++)
                V[a * m + i] = kernel_n(g, &g->X[a * dim], &xn[i * dim]);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)m, 1.0, V, (int)m, g->alpha, 1, 0.0, mu,
                    1);
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, (int)n,
                    (int)m, 1.0, g->L, (int)g->cap, V, (int)m);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m, (int)m, (int)n, -1.0, V,
                    (int)m, V, (int)m, 1.0, C, (int)m);
    }
    /* The posterior covariance can be singular (repeated points): adaptive jitter. */
    double sf2 = exp(g->log_sf2), jitter = 1e-10 * sf2;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int ok = 0;
    for (int attempt = 0; attempt < 10 && !ok; attempt++, jitter *= 10) {
        memcpy(Lc, C, m * m * sizeof *Lc);
        for (size_t i = 0; i < m; i++)
            Lc[i * m + i] += jitter;
        gsl_matrix_view v = gsl_matrix_view_array(Lc, m, m);
        ok = gsl_linalg_cholesky_decomp1(&v.matrix) == GSL_SUCCESS;
    }
    gsl_set_error_handler(old);
    if (!ok) {
        free(xn);
        free(mu);
        free(C);
        free(V);
        free(Lc);
        return error_set(err, "gp: posterior covariance at %zu points not positive definite", m);
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m; j++)
            Lc[i * m + j] = 0;
    /* out (ns x m) = z (ns x m) * Lc^T, then scale and shift to original units. */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ns, (int)m, (int)m, 1.0, z, (int)m,
                Lc, (int)m, 0.0, out, (int)m);
    for (size_t s = 0; s < ns; s++)
        for (size_t i = 0; i < m; i++)
            out[s * m + i] = g->y_mean + g->y_std * (mu[i] + out[s * m + i]);
    free(xn);
    free(mu);
    free(C);
    free(V);
    free(Lc);
    return 0;
}
