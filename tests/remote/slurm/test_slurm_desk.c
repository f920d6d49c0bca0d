#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/slurm/slurm_desk.h"

Test(slurm_desk, recognises_slurms_refusals_for_want_of_rights)
{
    cr_assert(slurm_desk_is_refusal("scontrol exited with status 1: slurm_update error: "
                                    "Invalid user id"));
    cr_assert(slurm_desk_is_refusal("slurm_update error: Access/permission denied"));
    cr_assert(!slurm_desk_is_refusal("slurm_update error: Invalid node name specified"));
    cr_assert(!slurm_desk_is_refusal("Unable to contact slurm controller (connect failure)"));
}

Test(slurm_desk, refuses_a_bad_node_name_or_reason_before_asking_slurm)
{
    SlurmCtlOptions o = {.timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmDesk *d = slurm_desk_new(c, NULL, 8);
    cr_assert_eq(slurm_desk_update_node(d, "n1;reboot", 1, NULL, &e), -1);
    cr_assert(strstr(e.msg, "expected a node name"), "%s", e.msg);
    cr_assert_eq(slurm_desk_update_node(d, "n1", 1, "bad\x1b[2J", &e), -1);
    cr_assert(strstr(e.msg, "printable"), "%s", e.msg);
    cr_assert_eq(slurm_desk_updating(d), 0);
    cr_assert_eq(slurm_desk_update_node(d, "n1", 1, "fan", &e), 0);
    cr_assert_eq(slurm_desk_update_node(d, "n2", 1, "fan", &e), -1, "one at a time");
    cr_assert(strstr(e.msg, "drain n1 is still running"), "%s", e.msg);
    cr_assert_eq(slurm_ctl_calls(c), 0, "nothing asked until the loop steps the desk");
    slurm_desk_free(d);
    slurm_ctl_free(c);
}

static size_t desk_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_desk_pollfds(ctx, fds, cap, deadline_ms);
}

static void desk_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_desk_step(ctx, fds, n, now_ms);
}

static int desk_down(void *ctx)
{
    return slurm_desk_down_since_ms(ctx) != 0;
}

/* Without Slurm at all the first round fails: said once, as the controller not answering. */
Test(slurm_desk, a_controller_that_does_not_answer_is_said_once)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmDesk *d = slurm_desk_new(c, NULL, 8);
    evloop_run_source(desk_pollfds, desk_step, d, desk_down, d, clock_now_ms() + 10000);
    cr_assert_gt(slurm_desk_down_since_ms(d), 0);
    char msg[512];
    int bad = 0;
    cr_assert_eq(slurm_desk_take_outcome(d, msg, sizeof msg, &bad), 1);
    cr_assert(bad);
    cr_assert(strstr(msg, "the controller does not answer") && strstr(msg, "squeue"), "%s", msg);
    cr_assert_eq(slurm_desk_take_outcome(d, msg, sizeof msg, &bad), 0, "said once");
    cr_assert(strstr(slurm_desk_last_error(d), "squeue"));
    slurm_desk_free(d);
    slurm_ctl_free(c);
}
