#include <criterion/criterion.h>

#include "core/base/rng.h"

Test(rng, a_seed_gives_the_same_stream_as_gsl_seeded_by_hand)
{
    gsl_rng *a = rng_new(42), *b = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(a);
    gsl_rng_set(b, 42);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "draw %d", i);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

Test(rng, different_seeds_give_different_streams)
{
    gsl_rng *a = rng_new(1), *b = rng_new(2);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += gsl_rng_get(a) == gsl_rng_get(b);
    cr_assert_lt(same, 5);
    gsl_rng_free(a);
    gsl_rng_free(b);
}
