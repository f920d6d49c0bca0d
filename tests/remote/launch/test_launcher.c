/* What the launchers share (remote/launch/launcher.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "remote/launch/launcher.h"

Test(launcher, a_timed_out_trial_names_its_timeout_as_given)
{
    /* --trial-timeout 0.5 was reported as "ran past the 0 s trial timeout" */
    Observation o;
    memset(&o, 0, sizeof o);
    cr_assert(launcher_end_by_us(&o, 0, 1, 0.5));
    cr_assert_eq(o.status, TRIAL_TIMEOUT);
    cr_assert_str_eq(o.reason, "ran past the 0.5 s trial timeout");
    memset(&o, 0, sizeof o);
    cr_assert(launcher_end_by_us(&o, 0, 1, 600));
    cr_assert_str_eq(o.reason, "ran past the 600 s trial timeout");
}
