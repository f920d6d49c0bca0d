/* A node joining a running scheduler (core/sched/sched_grow.c): the next decision places
 * jobs there, nothing already placed moves, and the utilization counts it from its arrival. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

FIXTURE_CATALOGUE_SUITE(sched_grow);

static int held_by(const SchedState *s, int node, int job)
{
    int owners[64], n = 0, gpus = sched_node_gpu_count(s, node);
    cr_assert_eq(sched_node_gpus(s, node, owners, gpus), 0);
    for (int g = 0; g < gpus; g++)
        n += owners[g] == job;
    return n;
}

Test(sched_grow, a_job_that_asked_more_grows_onto_the_new_node)
{
    SchedState *s = fixture_sched(cat, "fixed-8", 1, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 8, 2048}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 4, "8 asked, 4 in the cluster");
    cr_assert_eq(sched_add_node(s, "late", 4, "t4", 1.0, &e), 1, "%s", e.msg);
    cr_assert_eq(sched_node_count(s), 2);
    cr_assert_str_eq(sched_node_name(s, 1), "late");
    cr_assert_str_eq(sched_node_type(s, 1), "t4");
    cr_assert_eq(sched_node_gpu_count(s, 1), 4);
    cr_assert_eq(held_by(s, 0, 0), 4, "nothing moves before the next decision");
    cr_assert_eq(held_by(s, 1, 0), 0);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 8);
    cr_assert_eq(held_by(s, 0, 0) + held_by(s, 1, 0), 8);
    fixture_sched_capacity(s);
    const SchedEvent *ev = sched_event(s, sched_event_count(s) - 1);
    cr_assert_eq(ev->kind, SCHED_EV_RESIZE);
    char *line = sched_event_json(s, ev);
    cr_assert(strstr(line, "\"host\":\"late\""), "%s", line);
    free(line);
    Error run;
    cr_assert_eq(sched_run(s, 1e9, &run), 0, "%s", run.msg);
    SchedSummary m;
    sched_summary(s, &m);
    /* 4 GPUs usable until the node joined at t=120 s, then 8 */
    double M = m.makespan_s;
    cr_assert_float_eq(m.gpu_s_usable, 4 * 120 + 8 * (M - 120), 1e-9 * M);
    cr_assert_float_eq(m.gpu_utilization, m.gpu_s_held / (4 * 120 + 8 * (M - 120)), 1e-12);
    sched_free(s);
}

Test(sched_grow, a_new_node_can_be_drained_and_held_like_the_others)
{
    SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
    Error e;
    int n = sched_add_node(s, "extra", 8, "", 1.0, &e);
    cr_assert_eq(n, 2, "%s", e.msg);
    cr_assert_eq(sched_gpus_per_node(s), 8, "the largest node");
    cr_assert_eq(sched_hold_gpus(s, n, 8, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_node_held(s, n), 8);
    cr_assert_eq(sched_drain_node(s, n, 1, &e), 0, "%s", e.msg);
    cr_assert(sched_node_drained(s, n));
    cr_assert_eq(sched_hold_gpus(s, n, 9, &e), -1);
    sched_free(s);
}

Test(sched_grow, a_faster_node_gets_its_own_speed)
{
    SchedState *s = fixture_sched(cat, "doubling", 1, NULL, 0);
    Error e;
    cr_assert_eq(sched_add_node(s, "fast", 4, "a100", 2.0, &e), 1, "%s", e.msg);
    cr_assert_eq(sched_add_node(s, "slow", 4, "k80", 0.5, &e), 2, "%s", e.msg);
    cr_assert_float_eq(sched_node_speed(s, 1), 2.0, 1e-12);
    cr_assert_float_eq(sched_node_speed(s, 2), 0.5, 1e-12);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 4, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_eq(held_by(s, 1, 0), 4, "placement puts a job on the fastest GPUs");
    fixture_sched_capacity(s);
    sched_free(s);
}

Test(sched_grow, a_name_it_has_or_a_bad_size_is_refused_with_what_was_expected)
{
    SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_add_node(s, "node01", 4, "", 1.0, &e), -1);
    cr_assert(strstr(e.msg, "node01: the scheduler has it already (node 1)"), "%s", e.msg);
    cr_assert_eq(sched_add_node(s, "n9", 0, "", 1.0, &e), -1);
    cr_assert(strstr(e.msg, "add node n9: expected 1..64 GPUs, found 0"), "%s", e.msg);
    cr_assert_eq(sched_add_node(s, "n9", 4, "", 0, &e), -1);
    cr_assert(strstr(e.msg, "expected a speed > 0"), "%s", e.msg);
    cr_assert_eq(sched_node_count(s), 2, "nothing added");
    sched_free(s);
}
