#include <criterion/criterion.h>

#include "core/model/allreduce.h"

static void feat(AllreduceAlgo a, int w, double steps, double factor)
{
    double s, f;
    allreduce_features(a, w, &s, &f);
    cr_assert_float_eq(s, steps, 1e-12, "%s w=%d steps %g", allreduce_name(a), w, s);
    cr_assert_float_eq(f, factor, 1e-12, "%s w=%d factor %g", allreduce_name(a), w, f);
}

Test(allreduce, ring_steps_grow_linearly)
{
    feat(ALLREDUCE_RING, 4, 6, 3.0 / 4);
    feat(ALLREDUCE_RING, 9, 16, 8.0 / 9);
}

Test(allreduce, doubling_halving_for_powers_of_two)
{
    feat(ALLREDUCE_DOUBLING, 2, 2, 1.0 / 2);
    feat(ALLREDUCE_DOUBLING, 8, 6, 7.0 / 8);
    feat(ALLREDUCE_DOUBLING, 16, 8, 15.0 / 16);
}

Test(allreduce, binary_blocks_pay_for_unequal_blocks)
{
    /* 9 = 8 + 1: the lone GPU exchanges a whole vector; 12 = 8 + 4: a quarter of one. */
    feat(ALLREDUCE_DOUBLING, 9, 8, 8.0 / 9 + 1.0);
    feat(ALLREDUCE_DOUBLING, 12, 8, 11.0 / 12 + 1.0 / 4);
    feat(ALLREDUCE_DOUBLING, 7, 2 * (2 + 2), 6.0 / 7 + 1.0 / 2 + 1.0);
}

Test(allreduce, single_gpu_costs_nothing)
{
    feat(ALLREDUCE_RING, 1, 0, 0);
    feat(ALLREDUCE_DOUBLING, 1, 0, 0);
}

Test(allreduce, time_matches_hand_computed_ring)
{
    /* 2(w-1)α + 2((w-1)/w)nβ + ((w-1)/w)nγ with w = 4, α = 1 ms, β = 1 ns/B, γ = 0.5 ns/B,
     * n = 100 MB: 6 ms + 150 ms + 37.5 ms. */
    AllreduceParams p = {1e-3, 1e-9, 0.5e-9, 100e6};
    cr_assert_float_eq(allreduce_time_s(ALLREDUCE_RING, 4, &p), 0.006 + 0.15 + 0.0375, 1e-12);
    /* doubling-halving at 8: 2·3·α + (7/8)·n·(2β + γ) */
    cr_assert_float_eq(allreduce_time_s(ALLREDUCE_DOUBLING, 8, &p), 0.006 + 0.875 * 0.25, 1e-12);
}
