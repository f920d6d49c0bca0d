/* The summary's GPU utilization (core/sched/sched_report.c): busy GPU-seconds over the
 * GPU-seconds we could use, so a drained node or GPUs others hold count only while usable. */
#include <criterion/criterion.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

#define FIXTURE TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv"

FIXTURE_CATALOGUE_SUITE(sched_report);

/* One cifar10 job pinned to 4 GPUs on 2 nodes of 4, from t=0: it holds 4 GPUs from start to
 * finish wherever node 1 stands. */
static SchedState *one_job_on_four(void)
{
    SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 4, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 4, &e), 0, "%s", e.msg);
    return s;
}

static SchedSummary run_to_end(SchedState *s)
{
    Error e;
    cr_assert_eq(sched_run(s, 1e9, &e), 0, "%s", e.msg);
    SchedSummary m;
    sched_summary(s, &m);
    return m;
}

Test(sched_report, a_node_drained_for_half_the_run_counts_only_while_usable)
{
    SchedState *plain = one_job_on_four();
    SchedSummary whole = run_to_end(plain);
    sched_free(plain);
    double half = whole.makespan_s / 2;
    cr_assert_gt(half, 0);

    SchedState *s = one_job_on_four();
    Error e;
    cr_assert_eq(sched_drain_node(s, 1, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, half, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_drain_node(s, 1, 0, &e), 0, "%s", e.msg);
    SchedSummary m = run_to_end(s);
    cr_assert_eq(m.done, 1);
    cr_assert_float_eq(m.makespan_s, whole.makespan_s, 1e-9 * whole.makespan_s,
                       "the pinned job runs the same with node 1 drained");
    /* By hand: 4 GPUs busy for the whole makespan M; 4 usable for M/2, then 8 for M/2. */
    double M = m.makespan_s;
    cr_assert_float_eq(m.gpu_s_held, 4 * M, 1e-9 * M);
    cr_assert_float_eq(m.gpu_s_usable, 4 * (M / 2) + 8 * (M / 2), 1e-9 * M);
    cr_assert_float_eq(m.gpu_utilization, 4.0 / 6.0, 1e-9);
    cr_assert_float_eq(whole.gpu_utilization, 4.0 / 8.0, 1e-9, "undrained, half the GPUs idle");
    sched_free(s);
}

Test(sched_report, gpus_held_by_others_count_only_while_usable)
{
    SchedState *s = one_job_on_four();
    Error e;
    cr_assert_eq(sched_advance(s, 600, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, 3, &e), 0, "%s", e.msg);
    SchedSummary m = run_to_end(s);
    double M = m.makespan_s;
    cr_assert_gt(M, 600);
    cr_assert_float_eq(m.gpu_s_usable, 8 * 600 + 5 * (M - 600), 1e-9 * M);
    cr_assert_float_eq(m.gpu_utilization, 4 * M / (8 * 600 + 5 * (M - 600)), 1e-9);
    sched_free(s);
}

Test(sched_report, without_drains_or_holds_it_is_busy_over_every_gpu_second)
{
    const char *const *names = sched_policy_names();
    for (const char *const *p = names; *p; p++) {
        SchedState *s = fixture_sched(cat, *p, 4, NULL, 0);
        Error e;
        cr_assert_eq(sched_load_workload(s, FIXTURE, &e), 0, "%s", e.msg);
        SchedSummary m = run_to_end(s);
        cr_assert_gt(m.makespan_s, 0);
        cr_assert_eq(m.gpu_utilization, m.gpu_s_held / (16 * m.makespan_s), "%s: %.17g", *p,
                     m.gpu_utilization);
        sched_free(s);
    }
}

Test(sched_report, usable_gpu_seconds_integrate_each_change_and_the_last_at_one_time)
{
    SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_advance(s, 100, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_drain_node(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, 1, &e), 0, "%s", e.msg); /* same time: 3 usable */
    cr_assert_eq(sched_advance(s, 50, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 0, 2, &e), 0, "%s", e.msg);  /* on a drained node: no change */
    cr_assert_eq(sched_drain_node(s, 0, 0, &e), 0, "%s", e.msg); /* 2 + 3 usable */
    cr_assert_float_eq(sched_usable_gpu_s(s, 0), 0, 1e-12);
    cr_assert_float_eq(sched_usable_gpu_s(s, 100), 800, 1e-9);
    cr_assert_float_eq(sched_usable_gpu_s(s, 120), 800 + 3 * 20, 1e-9);
    cr_assert_float_eq(sched_usable_gpu_s(s, 150), 800 + 3 * 50, 1e-9);
    cr_assert_float_eq(sched_usable_gpu_s(s, 200), 800 + 3 * 50 + 5 * 50, 1e-9);
    sched_free(s);
}

/* A hold that comes between two decisions leaves our job on the held GPUs until the next one:
 * those GPU-seconds are ours, so they count as usable and the utilization stays at most 1
 * (it was 1.02 here). */
Test(sched_report, utilization_stays_at_most_one_when_a_hold_comes_between_decisions)
{
    SchedState *s = fixture_sched(cat, "fixed-8", 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 8, 2048}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 130, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 40, &e), 0, "%s", e.msg); /* the decision at 180 s is later */
    cr_assert_eq(sched_hold_gpus(s, 1, 0, &e), 0, "%s", e.msg);
    Error run;
    cr_assert_eq(sched_run(s, 1e9, &run), 0, "%s", run.msg);
    SchedSummary m;
    sched_summary(s, &m);
    cr_assert_leq(m.gpu_utilization, 1.0, "%g", m.gpu_utilization);
    /* held by others and by us from 130 s to 170 s: 4 GPUs over */
    double usable = sched_usable_gpu_s(s, m.makespan_s);
    cr_assert_float_eq(m.gpu_s_usable, usable + 4 * 40, 1e-9 * usable);
    cr_assert_float_eq(usable, 8 * m.makespan_s - 4 * 40, 1e-9 * usable);
    sched_free(s);
}
