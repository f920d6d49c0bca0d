#include <criterion/criterion.h>
#include <limits.h>

#include "core/base/decimal.h"

Test(decimal, an_integer_is_an_optional_minus_and_digits)
{
    long v = 0;
    cr_assert_eq(decimal_long("42", 0, 100, &v), 0);
    cr_assert_eq(v, 42);
    cr_assert_eq(decimal_long("-7", -10, 10, &v), 0);
    cr_assert_eq(v, -7);
    cr_assert_eq(decimal_long("007", 0, 10, &v), 0); /* decimal, not octal */
    cr_assert_eq(v, 7);
    cr_assert_eq(decimal_long("9223372036854775807", 0, LONG_MAX, &v), 0);
    cr_assert_eq(v, LONG_MAX);
}

/* Regression: strtol took " 5" and "+5" as 5 (--budget ' 5'). */
Test(decimal, an_integer_refuses_hex_spaces_signs_exponents_and_the_out_of_range)
{
    const char *bad[] = {"",    " 5",  "5 ",  "+5",  "0x10",
                         "1e3", "1.0", "1.",  "-",   "--1",
                         "5a",  "nan", "inf", "\t5", "9223372036854775808",
                         "101"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        long v = -99;
        cr_assert_eq(decimal_long(bad[i], 0, 100, &v), -1, "accepted '%s'", bad[i]);
        cr_assert_eq(v, -99, "'%s' changed the value", bad[i]);
    }
    long v = -99;
    cr_assert_eq(decimal_long("-1", 0, 100, &v), -1);
    cr_assert_eq(decimal_long("-9223372036854775809", LONG_MIN, 0, &v), -1);
}

Test(decimal, a_real_takes_fractions_and_exponents)
{
    double v = 0;
    const struct {
        const char *text;
        double value;
    } ok[] = {{"5", 5},     {"-2.5", -2.5}, {"0.5", 0.5},   {".5", 0.5}, {"5.", 5},
              {"1e3", 1e3}, {"1E+3", 1e3},  {"2e-3", 2e-3}, {"-0", 0},   {"1e-400", 0}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        cr_assert_eq(decimal_double(ok[i].text, -10, 1e4, &v), 0, "refused '%s'", ok[i].text);
        cr_assert_float_eq(v, ok[i].value, 1e-12, "'%s'", ok[i].text);
    }
}

/* Regression: strtod took "inf", "nan", "0x10" (16) and " 5" (--trial-timeout 0x10). */
Test(decimal, a_real_refuses_hex_spaces_inf_nan_and_the_out_of_range)
{
    const char *bad[] = {"",    " 5",    "5 ",       "+5",  "0x10", "0x1p3", "inf", "-inf",
                         "nan", "NaN",   "Infinity", "1e",  "1e+",  ".",     "-.",  "1.2.3",
                         "5s",  "1e999", "-1e999",   "1e5", "-11",  "1,5",   "\n5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double v = -99;
        cr_assert_eq(decimal_double(bad[i], -10, 1e4, &v), -1, "accepted '%s'", bad[i]);
        cr_assert_float_eq(v, -99, 0, "'%s' changed the value", bad[i]);
    }
}
