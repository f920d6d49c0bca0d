/* Bayesian linear regression: posterior precision A = S0^-1 + Phi^T Phi / s^2, mean
 * A^-1 (S0^-1 m0 + Phi^T y / s^2) (Bishop, PRML §3.3), solved by Cholesky. */
#include "core/opt/blr.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <string.h>

int blr_fit(Blr *b, const double *phi, const double *y, size_t n, size_t p,
            const double *prior_mean, const double *prior_sd, double noise_sd, Error *err)
{
    if (p < 1 || p > BLR_MAX_P)
        return error_set(err, "blr: %zu coefficients, expected 1..%d", p, BLR_MAX_P);
    if (!(noise_sd > 0) || !isfinite(noise_sd))
        return error_set(err, "blr: noise sd must be positive, found %g", noise_sd);
    for (size_t i = 0; i < p; i++)
        if (!(prior_sd[i] > 0) || !isfinite(prior_sd[i]) || !isfinite(prior_mean[i]))
            return error_set(err, "blr: prior %zu: expected a finite mean and positive sd", i);
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(y[k]))
            return error_set(err, "blr: output %zu is not finite", k);
        for (size_t i = 0; i < p; i++)
            if (!isfinite(phi[k * p + i]))
                return error_set(err, "blr: feature %zu of point %zu is not finite", i, k);
    }
    double A[BLR_MAX_P * BLR_MAX_P] = {0}, rhs[BLR_MAX_P];
    double inv_s2 = 1.0 / (noise_sd * noise_sd);
    for (size_t i = 0; i < p; i++) {
        double prec = 1.0 / (prior_sd[i] * prior_sd[i]);
        A[i * p + i] = prec;
        rhs[i] = prec * prior_mean[i];
    }
    if (n) {
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)p, (int)n, inv_s2, phi, (int)p, 1.0,
                    A, (int)p);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)p, inv_s2, phi, (int)p, y, 1, 1.0, rhs,
                    1);
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_matrix_view av = gsl_matrix_view_array(A, p, p);
    int rc = gsl_linalg_cholesky_decomp1(&av.matrix);
    gsl_set_error_handler(old);
    if (rc != GSL_SUCCESS)
        return error_set(err, "blr: posterior precision not positive definite");
    for (size_t i = 0; i < p; i++)
        for (size_t j = i + 1; j < p; j++)
            A[i * p + j] = 0;
    b->p = p;
    b->noise_sd = noise_sd;
    memcpy(b->prec_chol, A, p * p * sizeof *A);
    memcpy(b->mean, rhs, p * sizeof *rhs);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)p, A, (int)p, b->mean,
                1);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, (int)p, A, (int)p, b->mean, 1);
    return 0;
}

double blr_predict_mean(const Blr *b, const double *phi)
{
    return cblas_ddot((int)b->p, phi, 1, b->mean, 1);
}

double blr_predict_var(const Blr *b, const double *phi)
{
    double v[BLR_MAX_P];
    memcpy(v, phi, b->p * sizeof *v);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)b->p, b->prec_chol,
                (int)b->p, v, 1);
    return cblas_ddot((int)b->p, v, 1, v, 1);
}

void blr_sample(const Blr *b, const double *z, double *beta)
{
    double v[BLR_MAX_P];
    memcpy(v, z, b->p * sizeof *v);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, (int)b->p, b->prec_chol,
                (int)b->p, v, 1);
    for (size_t i = 0; i < b->p; i++)
        beta[i] = b->mean[i] + v[i];
}
