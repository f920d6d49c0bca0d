#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

#define FIXTURE TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv"

FIXTURE_CATALOGUE_SUITE(sched_mixed);

static SchedState *mixed(const char *policy, const SchedNodeGroup *g, size_t n)
{
    return fixture_sched(cat, policy, 0, g, n);
}

Test(sched_mixed, every_policy_stays_within_nodes_of_different_sizes)
{
    const SchedNodeGroup g[] = {{"T4", 2, 4, 1.0}, {"V100", 1, 8, 1.94}, {"T4", 1, 2, 1.0}};
    for (const char *const *p = sched_policy_names(); *p; p++) {
        SchedState *s = mixed(*p, g, 3);
        Error e;
        cr_assert_eq(sched_node_count(s), 4);
        cr_assert_eq(sched_node_gpu_count(s, 2), 8);
        cr_assert_str_eq(sched_node_type(s, 2), "V100");
        cr_assert_eq(sched_load_workload(s, FIXTURE, &e), 0, "%s", e.msg);
        while (!sched_finished(s) && sched_now(s) < 1e6) {
            cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
            fixture_sched_capacity(s);
        }
        cr_assert(sched_finished(s), "%s left jobs unfinished", *p);
        sched_free(s);
    }
}

/* Which node group a job's first slot is on, from its last start or resize event. */
static const char *type_of_last_placement(const SchedState *s, int job)
{
    const char *type = NULL;
    for (size_t i = 0; i < sched_event_count(s); i++) {
        const SchedEvent *ev = sched_event(s, i);
        if (ev->job == job && ev->n_slots)
            type = sched_node_type(s, ev->slots[0].node);
    }
    return type;
}

Test(sched_mixed, a_job_goes_to_the_fastest_gpus_that_hold_it_whole)
{
    /* Slow nodes first in the description: placement must not just take the first node. */
    const SchedNodeGroup g[] = {{"T4", 2, 4, 1.0}, {"V100", 1, 4, 1.94}};
    SchedState *s = mixed("fixed-4", g, 2);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 4, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_str_eq(type_of_last_placement(s, 0), "V100");
    fixture_sched_capacity(s);
    sched_free(s);
}

Test(sched_mixed, a_job_moves_to_the_faster_type_when_it_frees_up)
{
    const SchedNodeGroup g[] = {{"V100", 1, 4, 1.94}, {"T4", 1, 4, 1.0}};
    SchedState *s = mixed("fixed-4", g, 2);
    Error e;
    /* A short job takes the V100s; a long one arriving later gets the T4s. */
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"short", "cifar10", 0, 4, 512}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"long", "imagenet", 30, 4, 0}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    cr_assert_str_eq(type_of_last_placement(s, 0), "V100");
    cr_assert_str_eq(type_of_last_placement(s, 1), "T4");
    SchedJobInfo info;
    while (sched_job_info(s, 0, &info) == 0 && info.state != SCHED_JOB_DONE && sched_now(s) < 1e6)
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    cr_assert_str_eq(type_of_last_placement(s, 1), "V100", "the long job stayed on T4s");
    /* The move is a resize at the same GPU count: the live driver restarts it there. */
    const SchedEvent *last = NULL;
    for (size_t i = 0; i < sched_event_count(s); i++)
        if (sched_event(s, i)->job == 1)
            last = sched_event(s, i);
    cr_assert_eq(last->kind, SCHED_EV_RESIZE);
    cr_assert_eq(last->gpus_from, 4);
    cr_assert_eq(last->gpus_to, 4);
    fixture_sched_capacity(s);
    sched_free(s);
}

Test(sched_mixed, a_short_remainder_does_not_pay_for_the_move)
{
    /* The same, with a restart stall longer than the long job's whole remaining time on
     * its T4s: moving would finish later, so it stays. */
    const SchedNodeGroup g[] = {{"V100", 1, 4, 1.94}, {"T4", 1, 4, 1.0}};
    SchedConfig c;
    sched_config_default(&c);
    c.policy = "fixed-4";
    c.groups = g;
    c.n_groups = 2;
    c.resize_cost_s = 1e7;
    Error e;
    SchedState *s = sched_new(&c, cat, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"short", "cifar10", 0, 4, 512}, &e), 0);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"long", "imagenet", 30, 4, 0}, &e), 0);
    SchedJobInfo info;
    while (sched_job_info(s, 0, &info) == 0 && info.state != SCHED_JOB_DONE && sched_now(s) < 1e8)
        cr_assert_eq(sched_advance(s, 3600, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    cr_assert_str_eq(type_of_last_placement(s, 1), "T4");
    sched_free(s);
}

Test(sched_mixed, groups_are_checked)
{
    SchedConfig c;
    sched_config_default(&c);
    const SchedNodeGroup bad_speed[] = {{"T4", 2, 4, 1.0}, {"X", 1, 4, 0}};
    c.groups = bad_speed;
    c.n_groups = 2;
    Error e;
    cr_assert_null(sched_new(&c, cat, &e));
    cr_assert(strstr(e.msg, "node group 2") && strstr(e.msg, "speed"), "%s", e.msg);
    const SchedNodeGroup bad_size[] = {{"T4", 2, 65, 1.0}};
    c.groups = bad_size;
    c.n_groups = 1;
    cr_assert_null(sched_new(&c, cat, &e));
    cr_assert(strstr(e.msg, "node group 1"), "%s", e.msg);
}
