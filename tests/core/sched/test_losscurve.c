/* A job's loss curve: the fraction of training done from its own points. */
#include <criterion/criterion.h>
#include <math.h>

#include "core/sched/losscurve.h"

static const ConvModel truth = {0.002, 0.5, 0.3, 0};

Test(losscurve, fraction_done_follows_the_fitted_curve)
{
    LossCurve c;
    losscurve_init(&c);
    for (int i = 0; i <= 40; i++)
        cr_assert_eq(losscurve_add(&c, 50.0 * i, convmodel_loss(&truth, 50.0 * i)), 0);
    /* l(0) = 2.3; within 5% of the way to 0.3 is 0.4, reached at k = 4750 */
    cr_assert_float_eq(losscurve_total_steps(&c, 0.05), 4750, 80);
    cr_assert_float_eq(losscurve_fraction_done(&c, 2000, 0.05), 2000.0 / 4750, 0.01);
    cr_assert_float_eq(losscurve_fraction_done(&c, 9000, 0.05), 1.0, 1e-12);
    losscurve_clear(&c);
}

Test(losscurve, unknown_until_enough_points_and_for_a_flat_loss)
{
    LossCurve c;
    losscurve_init(&c);
    for (int i = 0; i < LOSSCURVE_MIN_POINTS - 1; i++)
        losscurve_add(&c, 10.0 * i, convmodel_loss(&truth, 10.0 * i));
    cr_assert_eq(losscurve_fraction_done(&c, 40, 0.05), -1);
    losscurve_clear(&c);
    for (int i = 0; i < 20; i++)
        losscurve_add(&c, 10.0 * i, 0.5);
    cr_assert_eq(losscurve_fraction_done(&c, 200, 0.05), -1, "a flat loss says nothing");
    losscurve_clear(&c);
}

Test(losscurve, a_resumed_job_repeating_steps_replaces_them)
{
    LossCurve c;
    losscurve_init(&c);
    for (int i = 0; i < 10; i++)
        losscurve_add(&c, i, 1.0 + i);
    losscurve_add(&c, 4, 2.0);
    cr_assert_eq(c.n, 5);
    cr_assert_eq(c.step[4], 4);
    cr_assert_eq(c.loss[4], 2.0);
    losscurve_add(&c, 6, NAN); /* ignored */
    cr_assert_eq(c.n, 5);
    losscurve_clear(&c);
}

Test(losscurve, many_points_are_thinned_keeping_first_and_newest)
{
    LossCurve c;
    losscurve_init(&c);
    for (int i = 0; i < 1000; i++)
        losscurve_add(&c, i, convmodel_loss(&truth, 10.0 * i));
    cr_assert_leq(c.n, LOSSCURVE_MAX_POINTS);
    cr_assert_eq(c.step[0], 0);
    cr_assert_eq(c.step[c.n - 1], 999);
    for (size_t i = 1; i < c.n; i++)
        cr_assert_gt(c.step[i], c.step[i - 1]);
    losscurve_clear(&c);
}

/* A loss ≤ 0 (a negative log-likelihood, an ELBO) is below the model's asymptote θ2 ≥ 0: the
 * curve must not go on with a fit made of the positive points alone, nor fit silently. */
Test(losscurve, a_loss_at_or_below_zero_gives_the_curve_up_and_says_so_once)
{
    LossCurve c;
    losscurve_init(&c);
    for (int i = 0; i <= 40; i++)
        losscurve_add(&c, 50.0 * i, convmodel_loss(&truth, 50.0 * i));
    cr_assert_gt(losscurve_fraction_done(&c, 2000, 0.05), 0);
    cr_assert_eq(losscurve_add(&c, 2100, -0.4), 1, "the first loss <= 0 is told");
    cr_assert_eq(losscurve_add(&c, 2150, -0.5), 0, "only once");
    cr_assert_eq(losscurve_add(&c, 2200, 0.31), 0);
    cr_assert_eq(losscurve_fraction_done(&c, 2200, 0.05), -1);
    cr_assert(isinf(losscurve_total_steps(&c, 0.05)));
    losscurve_clear(&c);
    cr_assert_eq(c.below_model, 0, "a cleared curve starts afresh");
    for (int i = 0; i < 20; i++)
        cr_assert_eq(losscurve_add(&c, 10.0 * i, -3.0 - 1.0 / (1 + i)), i == 0 ? 1 : 0);
    cr_assert_eq(losscurve_fraction_done(&c, 200, 0.05), -1);
    losscurve_clear(&c);
}
