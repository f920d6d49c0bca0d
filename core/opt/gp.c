/* Gaussian-process regression: kernels, Cholesky with adaptive jitter, marginal likelihood,
 * prediction and joint sampling (Rasmussen & Williams, Algorithm 2.1). The hyperparameter fit:
 * gp_fit.c. */
#include "core/opt/gp.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/gp_priv.h"

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
int gp_factor(Gp *g, Error *err)
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
    return gp_factor(g, err);
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
        return gp_factor(g, err); /* the extension lost definiteness: refactor with jitter */
    row[n] = sqrt(d2);
    solve_alpha(g);
    return 0;
}

int gp_set_hyper(Gp *g, const double *log_ls, double log_sf2, double log_sn2, Error *err)
{
    for (size_t i = 0; i < g->dim; i++) {
        if (!isfinite(log_ls[i]))
            return error_set(err, "gp: lengthscale %zu is not finite", i);
        g->log_ls[i] = gp_clamp(log_ls[i], LOG_LS_MIN, LOG_LS_MAX);
    }
    if (!isfinite(log_sf2) || !isfinite(log_sn2))
        return error_set(err, "gp: signal or noise variance is not finite");
    g->log_sf2 = gp_clamp(log_sf2, LOG_SF2_MIN, LOG_SF2_MAX);
    g->log_sn2 = gp_clamp(log_sn2, LOG_SN2_MIN, LOG_SN2_MAX);
    return gp_factor(g, err);
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
