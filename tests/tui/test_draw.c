/* Drawing helpers that need no screen. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tui/draw.h"

static const char *const BAR = " B:googlenet | bespoke | 15/60 | best 5.13 s | tuning ";

Test(draw, fit_tail_keeps_text_that_fits)
{
    cr_assert_str_eq(draw_fit_tail(BAR, (int)strlen(BAR)), BAR);
    cr_assert_str_eq(draw_fit_tail(BAR, 200), BAR);
}

Test(draw, fit_tail_drops_whole_fields_from_the_left_never_part_of_one)
{
    /* The tab bar once showed ":googlenet | ..." at 80 columns and "ke | 60/60 | ..." at 60. */
    cr_assert_str_eq(draw_fit_tail(BAR, (int)strlen(BAR) - 1),
                     " bespoke | 15/60 | best 5.13 s | tuning ");
    cr_assert_str_eq(draw_fit_tail(BAR, 32), " 15/60 | best 5.13 s | tuning ");
    cr_assert_str_eq(draw_fit_tail(BAR, 10), " tuning ");
}

Test(draw, fit_tail_cuts_the_last_field_only_when_it_alone_is_too_wide)
{
    cr_assert_str_eq(draw_fit_tail(BAR, 5), "ning ");
    cr_assert_str_eq(draw_fit_tail(BAR, 0), "");
    cr_assert_str_eq(draw_fit_tail(BAR, -3), "");
}

Test(draw, fit_tail_never_returns_more_than_the_width)
{
    for (int w = 0; w <= (int)strlen(BAR) + 1; w++)
        cr_assert_leq(strlen(draw_fit_tail(BAR, w)), (size_t)w, "w %d", w);
}

Test(draw, seconds_keep_two_significant_digits_below_a_tenth)
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
