#include <criterion/criterion.h>
#include <math.h>

#include "core/sched/nnls.h"

Test(nnls, recovers_positive_solution_of_overdetermined_system)
{
    /* b = A·(2, 0.5, 3) exactly: the unconstrained solution is feasible and must come back. */
    double A[6 * 3], b[6], x[3], r;
    const double truth[3] = {2, 0.5, 3};
    for (int i = 0; i < 6; i++) {
        A[i * 3 + 0] = 1 + i;
        A[i * 3 + 1] = (i % 3) - 1.5;
        A[i * 3 + 2] = sqrt(i + 1.0);
        b[i] = A[i * 3] * truth[0] + A[i * 3 + 1] * truth[1] + A[i * 3 + 2] * truth[2];
    }
    Error e;
    cr_assert_eq(nnls_solve(A, 6, 3, b, x, &r, &e), 0, "%s", e.msg);
    for (int j = 0; j < 3; j++)
        cr_assert_float_eq(x[j], truth[j], 1e-9, "x[%d] = %g", j, x[j]);
    cr_assert_float_eq(r, 0, 1e-9);
}

Test(nnls, clamps_negative_component_and_satisfies_kkt)
{
    /* Lawson–Hanson's textbook case: LS solution (1, -1) is infeasible; NNLS gives x2 = 0
     * and x1 the 1-D least squares fit, with a non-positive dual for the clamped one. */
    const double A[] = {1, 0, 0, 1, 1, 1};
    const double b[] = {1, -1, 0};
    double x[2];
    Error e;
    cr_assert_eq(nnls_solve(A, 3, 2, b, x, NULL, &e), 0, "%s", e.msg);
    cr_assert_float_eq(x[0], 0.5, 1e-12);
    cr_assert_float_eq(x[1], 0.0, 1e-12);
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = b[i] - A[2 * i] * x[0] - A[2 * i + 1] * x[1];
    double w1 = A[1] * r[0] + A[3] * r[1] + A[5] * r[2];
    cr_assert_leq(w1, 1e-12, "dual of the clamped variable must be <= 0, found %g", w1);
}

Test(nnls, all_negative_gives_zero)
{
    const double A[] = {1, 2, 3};
    const double b[] = {-1, -2, -3};
    double x[1] = {7};
    cr_assert_eq(nnls_solve(A, 3, 1, b, x, NULL, NULL), 0);
    cr_assert_float_eq(x[0], 0, 1e-15);
}

Test(nnls, rejects_empty_and_non_finite_input)
{
    double x[1];
    Error e;
    cr_assert_eq(nnls_solve(NULL, 0, 1, NULL, x, NULL, &e), -1);
    cr_assert(strstr(e.msg, "non-empty"), "%s", e.msg);
    const double A[] = {NAN};
    const double b[] = {1};
    cr_assert_eq(nnls_solve(A, 1, 1, b, x, NULL, &e), -1);
    cr_assert(strstr(e.msg, "not finite"), "%s", e.msg);
}
