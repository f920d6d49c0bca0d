#include <criterion/criterion.h>
#include <math.h>

#include "core/sched/convmodel.h"

Test(convmodel, recovers_known_curve)
{
    ConvModel truth = {0.002, 0.5, 0.3, 0};
    double k[40], l[40];
    for (int i = 0; i < 40; i++) {
        k[i] = 50.0 * i;
        l[i] = convmodel_loss(&truth, k[i]);
    }
    ConvModel m;
    Error e;
    cr_assert_eq(convmodel_fit(&m, k, l, 40, &e), 0, "%s", e.msg);
    cr_assert_float_eq(m.theta2, 0.3, 1e-3, "theta2 %g", m.theta2);
    cr_assert_float_eq(m.theta0, 0.002, 1e-4, "theta0 %g", m.theta0);
    cr_assert_float_eq(m.theta1, 0.5, 2e-2, "theta1 %g", m.theta1);
    /* steps to loss 0.4: 1/(0.1) = 10 = 0.002 k + 0.5 → k = 4750 */
    cr_assert_float_eq(convmodel_steps_to(&m, 0.4), 4750, 60);
}

Test(convmodel, target_below_asymptote_is_never_reached)
{
    ConvModel m = {0.01, 1, 0.2, 0};
    cr_assert(isinf(convmodel_steps_to(&m, 0.1)));
}

Test(convmodel, rejects_too_few_or_bad_points)
{
    double k[3] = {0, 1, 2}, l[3] = {1, 0.5, -1};
    ConvModel m;
    Error e;
    cr_assert_eq(convmodel_fit(&m, k, l, 2, &e), -1);
    cr_assert(strstr(e.msg, "at least 3"), "%s", e.msg);
    cr_assert_eq(convmodel_fit(&m, k, l, 3, &e), -1);
    cr_assert(strstr(e.msg, "point 2"), "%s", e.msg);
}

/* The fit's asymptote grid is [0, smallest loss): negative losses must be refused by name,
 * not fitted to a curve that cannot pass through them. */
Test(convmodel, refuses_losses_at_or_below_zero_by_point)
{
    double k[4] = {0, 1, 2, 3}, l[4] = {-1.0, -1.5, -1.8, -1.9};
    ConvModel m;
    Error e;
    cr_assert_eq(convmodel_fit(&m, k, l, 4, &e), -1);
    cr_assert(strstr(e.msg, "point 0") && strstr(e.msg, "positive"), "%s", e.msg);
    l[0] = 0;
    l[1] = l[2] = l[3] = 1;
    cr_assert_eq(convmodel_fit(&m, k, l, 4, &e), -1);
    cr_assert(strstr(e.msg, "point 0"), "%s", e.msg);
}
