#include <criterion/criterion.h>
#include <stddef.h>

#include "core/base/plural.h"

Test(plural, one_takes_no_s_and_every_other_count_does)
{
    cr_assert_str_eq(plural_s(1), "");
    cr_assert_str_eq(plural_s(0), "s");
    cr_assert_str_eq(plural_s(2), "s");
    cr_assert_str_eq(plural_s(-1), "s");
}

Test(plural, an_unsigned_count_agrees_as_its_value)
{
    size_t one = 1, many = 3;
    cr_assert_str_eq(plural_s(one), "");
    cr_assert_str_eq(plural_s(many), "s");
}

Test(plural, irregular_words_pick_by_the_count)
{
    cr_assert_str_eq(plural_of(1, "is", "are"), "is");
    cr_assert_str_eq(plural_of(2, "is", "are"), "are");
    cr_assert_str_eq(plural_of(0, "it", "them"), "them");
}
