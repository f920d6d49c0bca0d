#include <criterion/criterion.h>
#include <math.h>

#include "core/base/median.h"

Test(median, odd_count_is_the_middle_value_and_sorts_in_place)
{
    double v[] = {5, 1, 4, 2, 3};
    cr_assert_eq(median_sorting(v, 5), 3.0);
    for (int i = 1; i < 5; i++)
        cr_assert_leq(v[i - 1], v[i]);
}

Test(median, even_count_is_the_mean_of_the_middle_two)
{
    double v[] = {10, 1, 7, 2};
    cr_assert_eq(median_sorting(v, 4), 4.5);
}

Test(median, empty_sample_is_nan)
{
    cr_assert(isnan(median_sorting(NULL, 0)));
}

Test(median, infinities_sort_to_the_ends)
{
    double v[] = {INFINITY, 2, -INFINITY, 3, 1};
    cr_assert_eq(median_sorting(v, 5), 2.0);
}
