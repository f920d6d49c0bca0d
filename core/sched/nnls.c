/* Lawson–Hanson NNLS: grow a passive set one variable at a time (largest dual), solve the
 * unconstrained problem on it, and step back inside the feasible region when it leaves. */
#include "core/sched/nnls.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Unconstrained least squares on the columns in `set` (k of them); z gets their values. */
static int solve_passive(const double *A, size_t m, size_t n, const double *b, const size_t *set,
                         size_t k, double *z)
{
    /* GSL's default handler aborts when an allocation fails: off, a failure is a NULL. */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_matrix *X = gsl_matrix_alloc(m, k);
    gsl_vector *y = gsl_vector_alloc(m), *c = gsl_vector_alloc(k);
    gsl_matrix *cov = gsl_matrix_alloc(k, k);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(m, k);
    int rc = -1;
    if (X && y && c && cov && w) {
        for (size_t i = 0; i < m; i++) {
            gsl_vector_set(y, i, b[i]);
            for (size_t j = 0; j < k; j++)
                gsl_matrix_set(X, i, j, A[i * n + set[j]]);
        }
        double chisq;
        if (gsl_multifit_linear(X, y, c, cov, &chisq, w) == 0) {
            for (size_t j = 0; j < k; j++)
                z[j] = gsl_vector_get(c, j);
            rc = 0;
        }
    }
    gsl_multifit_linear_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(c);
    gsl_vector_free(y);
    gsl_matrix_free(X);
    gsl_set_error_handler(old);
    return rc;
}

int nnls_solve(const double *A, size_t m, size_t n, const double *b, double *x, double *resid,
               Error *err)
{
    if (m == 0 || n == 0)
        return error_set(err, "nnls: expected a non-empty system, found %zu × %zu", m, n);
    for (size_t i = 0; i < m * n; i++)
        if (!isfinite(A[i]))
            return error_set(err, "nnls: matrix entry %zu is not finite", i);
    for (size_t i = 0; i < m; i++)
        if (!isfinite(b[i]))
            return error_set(err, "nnls: right-hand side entry %zu is not finite", i);

    int *passive = calloc(n, sizeof *passive);
    size_t *set = malloc(n * sizeof *set);
    double *w = malloc(n * sizeof *w), *z = malloc(n * sizeof *z), *r = malloc(m * sizeof *r);
    double *zs = malloc(n * sizeof *zs);
    if (!passive || !set || !w || !z || !r || !zs) {
        free(passive), free(set), free(w), free(z), free(r), free(zs);
        return error_no_memory(err, "nnls");
    }
    memset(x, 0, n * sizeof *x);
    double scale = 0;
    for (size_t i = 0; i < m * n; i++)
        scale = fmax(scale, fabs(A[i]));
    double bn = 0;
    for (size_t i = 0; i < m; i++)
        bn = fmax(bn, fabs(b[i]));
    const double tol = 1e-12 * (scale > 0 ? scale : 1) * (bn > 0 ? bn : 1) * (double)m;
    int rc = 0;
    size_t iter = 0, max_iter = 30 * n + 100;
    for (;;) {
        /* dual w = A^T (b - A x) */
        for (size_t i = 0; i < m; i++) {
            double s = b[i];
            for (size_t j = 0; j < n; j++)
                s -= A[i * n + j] * x[j];
            r[i] = s;
        }
        size_t best = n;
        double wmax = tol;
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t i = 0; i < m; i++)
                s += A[i * n + j] * r[i];
            w[j] = s;
            if (!passive[j] && s > wmax) {
                wmax = s;
                best = j;
            }
        }
        if (best == n)
            break;
        passive[best] = 1;
        for (;;) {
            if (++iter > max_iter) {
                rc = error_set(err, "nnls: no convergence after %zu iterations", max_iter);
                goto done;
            }
            size_t k = 0;
            for (size_t j = 0; j < n; j++)
                if (passive[j])
                    set[k++] = j;
            if (solve_passive(A, m, n, b, set, k, zs) < 0) {
                rc = error_set(err, "nnls: least-squares solve failed");
                goto done;
            }
            for (size_t j = 0; j < n; j++)
                z[j] = 0;
            int feasible = 1;
            for (size_t q = 0; q < k; q++) {
                z[set[q]] = zs[q];
                if (zs[q] <= 0)
                    feasible = 0;
            }
            if (feasible) {
                memcpy(x, z, n * sizeof *x);
                break;
            }
            /* Step from x towards z as far as feasibility allows, drop the zeros. */
            double alpha = 1;
            for (size_t j = 0; j < n; j++)
                if (passive[j] && z[j] <= 0) {
                    double a = x[j] / (x[j] - z[j]);
                    if (a < alpha)
                        alpha = a;
                }
            for (size_t j = 0; j < n; j++) {
                x[j] += alpha * (z[j] - x[j]);
                if (passive[j] && x[j] <= 1e-15 * (1 + fabs(x[j]))) {
                    passive[j] = 0;
                    x[j] = 0;
                }
            }
        }
    }
    if (resid) {
        double s2 = 0;
        for (size_t i = 0; i < m; i++) {
            double s = b[i];
            for (size_t j = 0; j < n; j++)
                s -= A[i * n + j] * x[j];
            s2 += s * s;
        }
        *resid = sqrt(s2);
    }
done:
    free(passive), free(set), free(w), free(z), free(r), free(zs);
    return rc;
}
