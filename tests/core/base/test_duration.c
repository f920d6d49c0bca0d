#include <criterion/criterion.h>
#include <math.h>

#include "core/base/duration.h"

static void says(double t_s, const char *want)
{
    char buf[24];
    cr_assert_str_eq(duration_text(buf, sizeof buf, t_s), want, "%g s", t_s);
}

Test(duration, each_unit_from_seconds_to_days_rounded_up)
{
    says(0, "0s");
    says(0.2, "1s"); /* a wait "in 0s" would be one still to come */
    says(59, "59s");
    says(60, "1m00s");
    says(250, "4m10s");
    says(3599, "59m59s");
    says(3600, "1h00m");
    says(7170, "2h00m"); /* the minutes round up before the hour is split, never "1h60m" */
    says(99 * 3600 + 59 * 60, "99h59m");
    says(100 * 3600, "4d04h");
    says(99 * 86400 + 23 * 3600, "99d23h");
}

Test(duration, unknown_or_negative_is_a_dash)
{
    says(NAN, "-");
    says(INFINITY, "-");
    says(-1, "-");
}
