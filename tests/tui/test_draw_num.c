/* Seconds and percentages as table-cell text: pure, no screen. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/draw_num.h"

Test(draw_num, percent_under_half_a_percent_is_zero_without_a_sign)
{
    /* err% showed "-0" and "+0" for a prediction within half a percent */
    char out[16];
    static const struct {
        double pct;
        const char *want;
    } cases[] = {{-0.4, "0"}, {0.4, "0"},   {0.0, "0"},    {-0.0, "0"}, {0.5, "0"},
                 {0.6, "+1"}, {-0.6, "-1"}, {25.0, "+25"}, {-3.2, "-3"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        draw_percent_signed(out, sizeof out, cases[i].pct);
        cr_assert_str_eq(out, cases[i].want, "%g", cases[i].pct);
    }
    draw_percent_signed(out, sizeof out, NAN);
    cr_assert_str_eq(out, "-");
}

Test(draw_num, seconds_keep_two_significant_digits_below_a_tenth)
{
    /* A 14 ms trial (the loopback examples) showed as 0.01, and 3 ms as 0.00. */
    static const struct {
        double s;
        const char *shown;
    } CASES[] = {{0.014, "0.014"}, {0.0031, "0.0031"}, {0.25, "0.25"}, {5.104, "5.10"},
                 {123.45, "123.5"}, {0, "0.00"},       {NAN, "-"}};
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        char out[16];
        draw_seconds(out, sizeof out, CASES[i].s);
        cr_assert_str_eq(out, CASES[i].shown, "%g", CASES[i].s);
    }
}

/* Regression: the trial table showed each time with its own decimals (101.3 over 95.12 over
 * 0.014), so the column did not line up and could not be compared at a glance. A column has
 * one count: enough for its smallest value's two significant digits, within its width. */
Test(draw_num, a_column_of_seconds_has_one_count_of_decimals)
{
    static const struct {
        double v[4];
        int width, decimals;
    } CASES[] = {
        {{0.014, 2.5, 101.3, NAN}, 8, 3},   /* 0.014 needs 3; 101.300 fits */
        {{0.0042, 250, NAN, NAN}, 8, 4},    /* 250.0000 is 8 wide */
        {{0.0042, 2500, NAN, NAN}, 8, 3},   /* 2500.0000 would be 9: one fewer */
        {{95.12, 101.3, 5.104, NAN}, 8, 2}, /* 5.104 needs 2 */
        {{123.45, 950, NAN, NAN}, 8, 1},
        {{NAN, NAN, NAN, NAN}, 8, 1},
        {{0, -1, NAN, NAN}, 8, 1},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        int d = draw_seconds_decimals(CASES[i].v, 4, CASES[i].width);
        cr_assert_eq(d, CASES[i].decimals, "case %zu: %d", i, d);
        for (int k = 0; k < 4; k++) {
            char out[32];
            draw_seconds_fixed(out, sizeof out, CASES[i].v[k], d);
            const char *dot = strchr(out, '.');
            cr_assert(isnan(CASES[i].v[k]) ? strcmp(out, "-") == 0
                                            : dot && (int)strlen(dot + 1) == d,
                      "case %zu: %s", i, out);
        }
    }
}

Test(draw_num, seconds_with_their_unit_fit_six_columns)
{
    /* The surrogate pane's per-machine times: 0.0072 filled its 6 columns and lost the s, and
     * so did 1000 s and more. */
    static const struct {
        double s;
        const char *shown;
    } CASES[] = {{0.0072, "7.2ms"},  {0.00072, "0.72ms"}, {0.00005, "<0.1ms"},
                 {0.014, "0.014s"},  {0.25, "0.25s"},     {5.104, "5.10s"},
                 {123.45, "123.5s"}, {0, "0.00s"},        {NAN, "-"},
                 {999.9, "999.9s"},  {1000.04, "1000s"},  {86400, "86400s"},
                 {200000, "3333m"}};
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        char out[16];
        draw_seconds_unit(out, sizeof out, CASES[i].s);
        cr_assert_str_eq(out, CASES[i].shown, "%g", CASES[i].s);
        cr_assert_leq(strlen(out), 6, "%s", out);
    }
}
