/* Non-negative least squares: min ||A x - b|| subject to x >= 0, by the active-set method of
 * Lawson and Hanson ("Solving Least Squares Problems", 1974, ch. 23), on GSL. Every job model
 * of the scheduler (convergence, throughput) is fitted with it, as in Optimus and the seed. */
#ifndef TUNEDECK_NNLS_H
#define TUNEDECK_NNLS_H

#include <stddef.h>

#include "core/base/error.h"

/* A is m × n, row-major; x receives n values; *resid (optional) the residual 2-norm.
 * Fails on m == 0, n == 0, non-finite input, or when the iteration limit is hit. */
int nnls_solve(const double *A, size_t m, size_t n, const double *b, double *x, double *resid,
               Error *err);

#endif
