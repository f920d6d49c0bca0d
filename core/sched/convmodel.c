/* Fitting l(k) = 1/(θ0 k + θ1) + θ2 by NNLS over a grid of asymptotes (see convmodel.h). */
#include "core/sched/convmodel.h"

#include <math.h>
#include <stdlib.h>

#include "core/sched/nnls.h"

double convmodel_loss(const ConvModel *m, double step)
{
    double d = m->theta0 * step + m->theta1;
    return d > 0 ? 1.0 / d + m->theta2 : INFINITY;
}

double convmodel_steps_to(const ConvModel *m, double target)
{
    if (target <= m->theta2 || m->theta0 <= 0)
        return INFINITY;
    double k = (1.0 / (target - m->theta2) - m->theta1) / m->theta0;
    return k > 0 ? k : 0;
}

static int fit_at(const double *k, const double *l, size_t n, double th2, ConvModel *out, double *A,
                  double *b, Error *err)
{
    for (size_t i = 0; i < n; i++) {
        A[2 * i] = k[i];
        A[2 * i + 1] = 1;
        b[i] = 1.0 / (l[i] - th2);
        /* Weight so that the residual approximates loss-space error: dl = −dy·(l−θ2)². */
        double wgt = (l[i] - th2) * (l[i] - th2);
        A[2 * i] *= wgt;
        A[2 * i + 1] *= wgt;
        b[i] *= wgt;
    }
    double x[2];
    if (nnls_solve(A, n, 2, b, x, NULL, err) < 0)
        return -1;
    out->theta0 = x[0];
    out->theta1 = x[1];
    out->theta2 = th2;
    double s2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = convmodel_loss(out, k[i]) - l[i];
        s2 += isfinite(d) ? d * d : 1e300;
    }
    out->rmse = sqrt(s2 / (double)n);
    return 0;
}

int convmodel_fit(ConvModel *m, const double *steps, const double *loss, size_t n, Error *err)
{
    if (n < 3)
        return error_set(err,
                         "convergence model: expected at least 3 (step, loss) points, "
                         "found %zu",
                         n);
    double lmin = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!(loss[i] > 0) || !isfinite(loss[i]) || !(steps[i] >= 0))
            return error_set(err,
                             "convergence model: point %zu: expected a step >= 0 and a "
                             "positive finite loss",
                             i);
        lmin = fmin(lmin, loss[i]);
    }
    double *A = calloc(2 * n, sizeof *A), *b = calloc(n, sizeof *b);
    if (!A || !b) {
        free(A), free(b);
        return error_no_memory(err, "convergence model");
    }
    ConvModel best = {0, 0, 0, INFINITY}, cur;
    const int GRID = 200;
    /* Coarse grid over [0, lmin), then a finer one around the best cell. */
    double lo = 0, hi = lmin;
    int rc = 0;
    for (int pass = 0; pass < 3 && rc == 0; pass++) {
        double step = (hi - lo) / GRID, center = best.theta2;
        for (int g = 0; g < GRID; g++) {
            double th2 = lo + step * g;
            if (th2 >= lmin)
                break;
            if (fit_at(steps, loss, n, th2, &cur, A, b, err) < 0) {
                rc = -1;
                break;
            }
            if (cur.rmse < best.rmse)
                best = cur;
        }
        center = best.theta2;
        lo = fmax(0, center - step);
        hi = fmin(lmin * (1 - 1e-9), center + step);
    }
    free(A), free(b);
    if (rc < 0)
        return error_prefix(err, "convergence model");
    *m = best;
    return 0;
}
