#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/slurm/slurm_watch.h"

/* Without a controller every round fails: the watch backs off all the same, and never
 * asks more often than its minimum interval. */
Test(slurm_watch, backs_off_when_the_controller_does_not_answer)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    SlurmWatch *w = slurm_watch_new(c, NULL, 0.1, 8);
    cr_assert_eq(slurm_watch_poll(w, 1000, &e), -1);
    cr_assert(strstr(e.msg, "sinfo"), "%s", e.msg);
    cr_assert_float_eq(slurm_watch_interval_s(w), 4, 1e-9, "the minimum is 2 s, doubled");
    cr_assert_eq(slurm_watch_poll(w, 2000, &e), 0, "not due yet");
    cr_assert_eq(slurm_watch_poll(w, 5000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9);
    cr_assert_eq(slurm_watch_poll(w, 13000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9, "capped");
    cr_assert_eq(slurm_ctl_calls(c), 3, "one failed call per round");
    slurm_watch_free(w);
    slurm_ctl_free(c);
}
