#include <criterion/criterion.h>

#include "core/sched/tputmodel.h"

/* Known parameters: compute 2 ms per sample + 10 ms, one-node α 1 ms, β-term 40 ms,
 * network α 3 ms, β-term 120 ms, 15 ms per extra node. */
static double truth(AllreduceAlgo a, int w, int nodes, double m)
{
    double s, f;
    allreduce_features(a, w, &s, &f);
    double t = 0.002 * m + 0.010;
    if (nodes > 1)
        t += 0.003 * s + 0.120 * f + 0.015 * (nodes - 1);
    else
        t += 0.001 * s + 0.040 * f;
    return t;
}

static size_t make_points(AllreduceAlgo a, TputPoint *pts)
{
    size_t n = 0;
    for (int w = 1; w <= 32; w++)
        for (int m = 16; m <= 128; m *= 2) {
            int nodes = (w + 3) / 4;
            pts[n++] = (TputPoint){w, nodes, m, truth(a, w, nodes, m)};
        }
    return n;
}

Test(tputmodel, recovers_known_parameters)
{
    TputPoint pts[200];
    size_t n = make_points(ALLREDUCE_DOUBLING, pts);
    TputModel m;
    Error e;
    cr_assert_eq(tputmodel_fit(&m, ALLREDUCE_DOUBLING, pts, n, &e), 0, "%s", e.msg);
    const double want[TPUT_NPARAM] = {0.002, 0.010, 0.001, 0.040, 0.003, 0.120, 0.015};
    for (int j = 0; j < TPUT_NPARAM; j++)
        cr_assert_float_eq(m.theta[j], want[j], 1e-7, "theta[%d] = %g", j, m.theta[j]);
    cr_assert_float_eq(tputmodel_step_s(&m, 12, 3, 64), truth(ALLREDUCE_DOUBLING, 12, 3, 64), 1e-9);
}

Test(tputmodel, best_fit_picks_the_generating_algorithm)
{
    TputPoint pts[200];
    TputModel m;
    size_t n = make_points(ALLREDUCE_RING, pts);
    cr_assert_eq(tputmodel_fit_best(&m, pts, n, NULL), 0);
    cr_assert_eq(m.algo, ALLREDUCE_RING);
    n = make_points(ALLREDUCE_DOUBLING, pts);
    cr_assert_eq(tputmodel_fit_best(&m, pts, n, NULL), 0);
    cr_assert_eq(m.algo, ALLREDUCE_DOUBLING);
}

Test(tputmodel, single_node_fit_reuses_link_terms_off_node)
{
    TputPoint pts[4];
    for (int i = 0; i < 4; i++) {
        int w = 1 << i;
        pts[i] = (TputPoint){w, 1, 128, truth(ALLREDUCE_DOUBLING, w, 1, 128)};
    }
    TputModel m;
    cr_assert_eq(tputmodel_fit(&m, ALLREDUCE_DOUBLING, pts, 4, NULL), 0);
    cr_assert_float_eq(m.theta[4], m.theta[2], 1e-15);
    cr_assert_float_eq(m.theta[5], m.theta[3], 1e-15);
}

Test(tputmodel, rejects_no_points)
{
    TputModel m;
    Error e;
    cr_assert_eq(tputmodel_fit(&m, ALLREDUCE_RING, NULL, 0, &e), -1);
    cr_assert(strstr(e.msg, "at least one"), "%s", e.msg);
}
