#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

#define FIXTURE TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv"

FIXTURE_CATALOGUE_SUITE(sched);

static SchedState *small(const char *policy, int nodes)
{
    SchedState *s = fixture_sched(cat, policy, nodes, NULL, 0);
    Error e;
    cr_assert_eq(sched_load_workload(s, FIXTURE, &e), 0, "%s", e.msg);
    return s;
}

Test(sched, every_policy_finishes_the_small_workload_within_capacity)
{
    const char *const *names = sched_policy_names();
    for (const char *const *p = names; *p; p++) {
        SchedState *s = small(*p, 2);
        Error e;
        while (!sched_finished(s) && sched_now(s) < 1e6) {
            cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
            fixture_sched_capacity(s);
        }
        cr_assert(sched_finished(s), "%s left jobs unfinished", *p);
        SchedSummary m;
        sched_summary(s, &m);
        cr_assert_eq(m.done, 12);
        cr_assert_gt(m.avg_jct_s, 0);
        sched_free(s);
    }
}

Test(sched, gpu_seconds_are_conserved)
{
    SchedState *s = small("doubling", 2);
    Error e;
    cr_assert_eq(sched_run(s, 1e6, &e), 0, "%s", e.msg);
    SchedSummary m;
    sched_summary(s, &m);
    double total = 2 * 4 * sched_now(s);
    cr_assert_float_eq(m.gpu_s_held + m.gpu_s_idle, total, 1e-6 * total);
    double jobs = 0;
    for (size_t j = 0; j < sched_job_count(s); j++) {
        SchedJobInfo info;
        sched_job_info(s, j, &info);
        jobs += info.gpu_s;
        cr_assert_float_eq(info.progress, 1.0, 1e-9);
    }
    cr_assert_float_eq(jobs, m.gpu_s_held, 1e-6 * jobs);
    cr_assert_leq(m.gpu_s_lost_to_resizes, m.gpu_s_held);
    sched_free(s);
}

/* A job that never resizes lost nothing to resizes: its first start's stall (a resize cost
 * of its GPUs) is counted apart. gpu_s_lost_to_resizes held it too, so a run without a single
 * resize reported GPU-seconds "lost to resizes". */
Test(sched, a_first_start_stall_is_not_counted_as_a_resize)
{
    SchedState *s = fixture_sched(cat, "fixed-2", 1, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 2, 128}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_run(s, 1e7, &e), 0, "%s", e.msg);
    cr_assert(sched_finished(s));
    SchedSummary m;
    sched_summary(s, &m);
    cr_assert_float_eq(m.resizes_per_job, 0, 0);
    cr_assert_float_eq(m.gpu_s_lost_to_resizes, 0, 0);
    cr_assert_float_eq(m.gpu_s_lost_to_starts, 2 * 30.0, 1e-9, "%g", m.gpu_s_lost_to_starts);
    sched_free(s);
}

/* A resize's stall is counted as one; the first start's stays apart. */
Test(sched, a_resize_stall_is_counted_with_the_resizes)
{
    SchedState *s = fixture_sched(cat, "fixed-2", 1, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 2, 128}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_run(s, 1e7, &e), 0, "%s", e.msg);
    SchedSummary m;
    sched_summary(s, &m);
    cr_assert_float_eq(m.gpu_s_lost_to_starts, 2 * 30.0, 1e-9, "%g", m.gpu_s_lost_to_starts);
    cr_assert_float_eq(m.gpu_s_lost_to_resizes, 4 * 30.0, 1e-9, "%g", m.gpu_s_lost_to_resizes);
    sched_free(s);
}

Test(sched, pins_pause_and_drain_are_respected)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0"), n2 = sched_job_find(s, "ncf-2");
    cr_assert_eq(sched_pin(s, (size_t)c0, 3, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pause(s, (size_t)n2, 1, &e), 0);
    cr_assert_eq(sched_drain_node(s, 0, 1, &e), 0);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_eq(info.gpus, 3);
    sched_job_info(s, (size_t)n2, &info);
    cr_assert(info.gpus == 0 && (info.state == SCHED_JOB_PAUSED || info.state == SCHED_JOB_DONE));
    int owners[4];
    sched_node_gpus(s, 0, owners, 4);
    for (int g = 0; g < 4; g++)
        cr_assert_eq(owners[g], -1, "drained node still runs job %d", owners[g]);
    fixture_sched_capacity(s);
    /* a pin larger than the usable cluster is refused with a message */
    cr_assert_eq(sched_pin(s, (size_t)c0, 13, &e), -1);
    cr_assert(strstr(e.msg, "usable cluster"), "%s", e.msg);
    sched_free(s);
}

/* Slurm suspended the job's run (PreemptMode=SUSPEND): it keeps its GPUs, where they are,
 * through every decision, and its suspended time is GPU time held, not progress; resumed, it
 * goes on from the same progress. */
Test(sched, a_suspended_job_keeps_its_gpus_and_makes_no_progress)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0");
    SchedJobInfo before, after;
    sched_job_info(s, (size_t)c0, &before);
    cr_assert(before.gpus > 0 && before.state == SCHED_JOB_RUNNING, "runs at 400 s");
    int owners_before[4 * 4], owners_after[4 * 4];
    for (int n = 0; n < 4; n++)
        sched_node_gpus(s, n, owners_before + 4 * n, 4);
    cr_assert_eq(sched_suspend(s, (size_t)c0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 600, &e), 0, "%s", e.msg); /* ten decisions */
    sched_job_info(s, (size_t)c0, &after);
    cr_assert(after.suspended);
    cr_assert_eq(after.progress, before.progress, "no progress while suspended: %g -> %g",
                 before.progress, after.progress);
    cr_assert_eq(after.gpus, before.gpus, "kept at its size");
    cr_assert_eq(after.gpu_s, before.gpu_s + 600.0 * before.gpus, "its GPUs counted held");
    for (int n = 0; n < 4; n++)
        sched_node_gpus(s, n, owners_after + 4 * n, 4);
    for (int g = 0; g < 16; g++)
        if (owners_before[g] == c0 || owners_after[g] == c0)
            cr_assert_eq(owners_after[g], owners_before[g], "kept where it was (GPU %d)", g);
    cr_assert_eq(sched_suspend(s, (size_t)c0, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)c0, &after);
    cr_assert(!after.suspended);
    cr_assert_gt(after.progress, before.progress, "resumed, it progresses again");
    fixture_sched_capacity(s);
    cr_assert_eq(sched_suspend(s, 999, 1, &e), -1);
    cr_assert(strstr(e.msg, "no job 999"), "%s", e.msg);
    sched_free(s);
}

static int most_gpus(const SchedState *s)
{
    int most = 0;
    for (size_t j = 0; j < sched_job_count(s); j++) {
        SchedJobInfo info;
        sched_job_info(s, j, &info);
        most = info.gpus > most ? info.gpus : most;
    }
    return most;
}

Test(sched, the_policy_can_be_switched_between_decisions)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_set_policy(s, "no-such-policy", &e), -1);
    cr_assert(strstr(e.msg, "doubling") && strstr(e.msg, "no-such-policy"), "%s", e.msg);
    cr_assert_str_eq(sched_policy_name(s), "doubling");
    /* fixed-1 gives every job one GPU from its next decision on; doubling more again. */
    cr_assert_eq(sched_set_policy(s, "fixed-1", &e), 0, "%s", e.msg);
    cr_assert_str_eq(sched_policy_name(s), "fixed-1");
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    cr_assert_eq(most_gpus(s), 1);
    cr_assert_eq(sched_set_policy(s, "doubling", &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 200, &e), 0, "%s", e.msg);
    cr_assert_gt(most_gpus(s), 1);
    fixture_sched_capacity(s);
    sched_free(s);
}

Test(sched, decisions_are_deterministic_and_events_serialize)
{
    SchedState *a = small("doubling-explore", 2), *b = small("doubling-explore", 2);
    cr_assert_eq(sched_run(a, 1e6, NULL), 0);
    cr_assert_eq(sched_run(b, 1e6, NULL), 0);
    cr_assert_eq(sched_event_count(a), sched_event_count(b));
    cr_assert_gt(sched_event_count(a), 12);
    for (size_t i = 0; i < sched_event_count(a); i++) {
        char *x = sched_event_json(a, sched_event(a, i)),
             *y = sched_event_json(b, sched_event(b, i));
        cr_assert_str_eq(x, y);
        cJSON *o = cJSON_Parse(x);
        cr_assert_not_null(o, "%s", x);
        const SchedEvent *ev = sched_event(a, i);
        if (ev->kind == SCHED_EV_START || ev->kind == SCHED_EV_RESIZE) {
            int sum = 0;
            for (size_t k = 0; k < ev->n_slots; k++)
                sum += ev->slots[k].gpus;
            cr_assert_eq(sum, ev->gpus_to);
            cr_assert(cJSON_GetArraySize(cJSON_GetObjectItem(o, "placement")) > 0);
        }
        cJSON_Delete(o);
        free(x), free(y);
    }
    sched_free(a), sched_free(b);
}

Test(sched, exploration_visits_one_two_four_eight_gpus)
{
    SchedConfig c;
    sched_config_default(&c);
    c.policy = "exploratory";
    c.nodes = 8;
    c.gpus_per_node = 8;
    SchedState *s = sched_new(&c, cat, NULL);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"r", "resnet110", 0, 1, 0}, NULL), 0);
    cr_assert_eq(sched_advance(s, 900, NULL), 0);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    int seen[9] = {0};
    for (size_t k = 0; k < info.n_resizes; k++)
        if (info.resizes[k].gpus_to <= 8)
            seen[info.resizes[k].gpus_to] = 1;
    cr_assert(seen[1] && seen[2] && seen[4] && seen[8], "explored %d %d %d %d", seen[1], seen[2],
              seen[4], seen[8]);
    sched_free(s);
}

Test(sched, bad_submissions_are_refused_whole)
{
    SchedConfig c;
    sched_config_default(&c);
    Error e;
    SchedState *s = sched_new(&c, cat, &e);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "nosuch", 0, 1, 0}, &e), -1);
    cr_assert(strstr(e.msg, "model"), "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "ncf", -5, 1, 0}, &e), -1);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "ncf", 50, 1, 0}, &e), 0);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"b", "ncf", 10, 1, 0}, &e), -1);
    cr_assert(strstr(e.msg, "submission order"), "%s", e.msg);
    cr_assert_eq(sched_job_count(s), 1);
    c.policy = "nosuch";
    cr_assert_null(sched_new(&c, cat, &e));
    cr_assert(strstr(e.msg, "tiresias"), "%s", e.msg);
    sched_free(s);
}

Test(sched, event_log_is_in_time_order)
{
    /* Regression: finishes within one interval were logged in job order, not time order. */
    SchedConfig c;
    sched_config_default(&c);
    c.policy = "fixed-1";
    c.interval_s = 3600;
    SchedState *s = sched_new(&c, cat, NULL);
    const int batch[] = {256, 32768, 1024, 8192, 512, 16384};
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "ncf-%d", i);
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){name, "ncf", 0, 1, batch[i]}, NULL), 0);
    }
    cr_assert_eq(sched_run(s, 1e7, NULL), 0);
    cr_assert(sched_finished(s));
    for (size_t i = 1; i < sched_event_count(s); i++)
        cr_assert_geq(sched_event(s, i)->time_s, sched_event(s, i - 1)->time_s, "event %zu", i);
    sched_free(s);
}

Test(sched, reported_progress_replaces_the_simulated_one)
{
    SchedState *s = small("doubling", 2);
    Error e;
    cr_assert_eq(sched_advance(s, 300, &e), 0, "%s", e.msg);
    int j = sched_job_find(s, "cifar10-0");
    SchedJobInfo info;
    cr_assert_eq(sched_report_progress(s, (size_t)j, 50.5, 0.1, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)j, &info);
    cr_assert_float_eq(info.epoch, 50.5, 1e-9);
    cr_assert_eq(sched_report_progress(s, (size_t)j, 100, 0, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)j, &info);
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_eq(info.gpus, 0);
    const SchedEvent *last = sched_event(s, sched_event_count(s) - 1);
    cr_assert_eq(last->kind, SCHED_EV_FINISH);
    cr_assert_eq(last->job, j);
    cr_assert_eq(sched_report_progress(s, (size_t)j, -1, 0, &e), -1);
    cr_assert(strstr(e.msg, "expected epochs >= 0"), "%s", e.msg);
    sched_free(s);
}

Test(sched, exploring_a_small_batch_job_still_finishes)
{
    /* cifar10 at batch 128 cannot split over 8 GPUs at its owner's batch (32 each minimum). */
    SchedConfig c;
    sched_config_default(&c);
    c.policy = "exploratory";
    c.nodes = 4;
    SchedState *s = sched_new(&c, cat, NULL);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"c", "cifar10", 0, 1, 128}, NULL), 0);
    cr_assert_eq(sched_run(s, 1e6, NULL), 0);
    cr_assert(sched_finished(s));
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    int seen8 = 0;
    for (size_t k = 0; k < info.n_resizes; k++)
        seen8 |= info.resizes[k].gpus_to == 8;
    cr_assert(seen8, "the 8-GPU exploration stage was skipped");
    sched_free(s);
}

Test(sched, finished_jobs_leave_the_decision_set)
{
    /* Jobs far apart: one at a time is live. A decision that still visited finished jobs
     * would have seen up to 12 at once. */
    SchedConfig c;
    sched_config_default(&c);
    c.nodes = 2;
    c.policy = "doubling";
    Error e;
    SchedState *s = sched_new(&c, cat, &e);
    cr_assert_not_null(s, "%s", e.msg);
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){name, "ncf", 20000.0 * i, 1, 0}, &e), 0, "%s",
                     e.msg);
    }
    cr_assert_eq(sched_run(s, 1e7, &e), 0, "%s", e.msg);
    SchedSummary m;
    sched_summary(s, &m);
    cr_assert_eq(m.done, 12);
    cr_assert_eq(m.peak_live_jobs, 1, "peak live jobs %zu", m.peak_live_jobs);
    /* A finished job's record stays queryable. */
    SchedJobInfo info;
    cr_assert_eq(sched_job_info(s, 0, &info), 0);
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_gt(info.n_resizes, 0);
    cr_assert_eq(info.nodes, 0);
    sched_free(s);
}

/* The driver's guard: a run in which no job can ever run again stops with an error that names
 * the waiting jobs and why, instead of looping until its horizon. */
Test(sched, a_run_no_job_can_finish_stops_naming_the_waiting_jobs)
{
    SchedState *s = small("doubling", 2);
    Error e;
    int c0 = sched_job_find(s, "cifar10-0");
    cr_assert_eq(sched_pause(s, (size_t)c0, 1, &e), 0);
    cr_assert_eq(sched_run(s, 1e8, &e), -1, "a paused job nobody resumes: the run must stop");
    cr_assert_lt(sched_now(s), 1e6, "stopped only at t=%.0f s", sched_now(s));
    cr_assert(strstr(e.msg, "cifar10-0 (cifar10): paused"), "%s", e.msg);
    cr_assert(strstr(e.msg, "8 of 8 GPUs usable"), "%s", e.msg);
    /* the state is intact: resumed, the run finishes */
    cr_assert_eq(sched_pause(s, (size_t)c0, 0, &e), 0);
    cr_assert_eq(sched_run(s, 1e8, &e), 0, "%s", e.msg);
    cr_assert(sched_finished(s));
    sched_free(s);

    s = small("tiresias", 2);
    cr_assert_eq(sched_drain_node(s, 0, 1, &e), 0);
    cr_assert_eq(sched_drain_node(s, 1, 1, &e), 0);
    cr_assert_eq(sched_run(s, 1e8, &e), -1, "a cluster drained whole: the run must stop");
    cr_assert(strstr(e.msg, "cifar10-0 (cifar10): no GPU is usable"), "%s", e.msg);
    cr_assert(strstr(e.msg, "and 9 more waiting"), "%s", e.msg);
    cr_assert(strstr(e.msg, "0 of 8 GPUs usable (drained: node00, node01)"), "%s", e.msg);
    sched_free(s);
}

Test(sched, a_quiet_wait_for_a_late_arrival_is_not_stuck)
{
    SchedConfig c;
    sched_config_default(&c);
    Error e;
    SchedState *s = sched_new(&c, cat, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"early", "ncf", 0, 1, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"late", "ncf", 5 * 86400.0, 1, 0}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_run(s, 1e8, &e), 0, "%s", e.msg);
    cr_assert(sched_finished(s));
    sched_free(s);
}

/* A live driver advances the clock by wall-clock steps whose sum carries rounding: it can stop
 * a hair before a decision time (within the 1e-9 s the loop counts as "there"). The decision
 * then happens at that time all the same, and a job submitted for exactly that time takes
 * part, as it does when the clock lands on it exactly (pytorch.sh saw the miss: its q1,
 * due at a decision, started one interval late). */
Test(sched, a_job_due_at_a_decision_takes_part_in_it_whatever_the_clock_rounding)
{
    for (int rounded = 0; rounded < 2; rounded++) {
        SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
        Error e;
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0.0, 1, 128}, &e), 0, "%s",
                     e.msg);
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){"b", "cifar10", 120.0, 1, 128}, &e), 0,
                     "%s", e.msg);
        cr_assert_eq(sched_advance(s, rounded ? 120 - 5e-10 : 120, &e), 0, "%s", e.msg);
        cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
        int started = 0;
        for (size_t i = 0; i < sched_event_count(s); i++) {
            const SchedEvent *ev = sched_event(s, i);
            if (ev->job == 1 && ev->kind == SCHED_EV_START) {
                cr_assert_float_eq(ev->time_s, 120, 1e-6, "rounded %d", rounded);
                started = 1;
            }
        }
        cr_assert(started, "rounded %d: b did not start at the decision of 120 s", rounded);
        sched_free(s);
    }
}

/* sched_abandon (live mode: a job left failed): its GPUs go back at once, logged as a stop,
 * and no later decision places it, whatever a pin or a resume says; the others use them. */
Test(sched, an_abandoned_job_gives_its_gpus_back_and_is_never_placed_again)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0");
    SchedJobInfo info;
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_gt(info.gpus, 0, "placed before it is abandoned");
    size_t events = sched_event_count(s);
    cr_assert_eq(sched_abandon(s, (size_t)c0, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_eq(info.gpus, 0);
    cr_assert_eq(info.state, SCHED_JOB_FAILED);
    cr_assert_str_eq(sched_job_state_name(info.state), "failed");
    cr_assert_eq(sched_event_count(s), events + 1);
    cr_assert_eq(sched_event(s, events)->kind, SCHED_EV_STOP);
    cr_assert_eq(sched_pin(s, (size_t)c0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pause(s, (size_t)c0, 0, &e), 0, "%s", e.msg);
    for (int d = 0; d < 20; d++) {
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
        sched_job_info(s, (size_t)c0, &info);
        cr_assert_eq(info.gpus, 0, "placed again at decision %d", d);
        fixture_sched_capacity(s);
    }
    for (size_t i = events + 1; i < sched_event_count(s); i++)
        cr_assert_neq(sched_event(s, i)->job, c0, "an event for the abandoned job");
    cr_assert_eq(sched_abandon(s, 99, &e), -1, "an unknown job is refused");
    sched_free(s);
}

/* sched_complete (live mode: a job whose run exited 0 unasked): it is done now, its GPUs back
 * at once, logged as a finish, its JCT counted as a finished job's, and no later decision
 * places it, whatever a pin says; the others use its GPUs. */
Test(sched, a_job_completed_outside_is_done_gives_its_gpus_back_and_counts_its_jct)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0");
    SchedJobInfo info;
    sched_job_info(s, (size_t)c0, &info);
    int held = info.gpus;
    cr_assert_gt(held, 0, "placed before it completes");
    cr_assert_neq(info.state, SCHED_JOB_DONE);
    SchedSummary before;
    sched_summary(s, &before);
    size_t events = sched_event_count(s);
    cr_assert_eq(sched_complete(s, (size_t)c0, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_eq(info.gpus, 0);
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_float_eq(info.finish_s, sched_now(s), 1e-9);
    int owners[64];
    for (int n = 0; n < sched_node_count(s); n++) {
        sched_node_gpus(s, n, owners, 64);
        for (int g = 0; g < 64; g++)
            cr_assert_neq(owners[g], c0, "node %d GPU %d still its", n, g);
    }
    cr_assert_eq(sched_event_count(s), events + 1);
    const SchedEvent *ev = sched_event(s, events);
    cr_assert_eq(ev->kind, SCHED_EV_FINISH);
    cr_assert_eq(ev->job, c0);
    cr_assert_eq(ev->gpus_from, held);
    cr_assert_eq(ev->gpus_to, 0);
    cr_assert_float_eq(ev->time_s, sched_now(s), 1e-9);
    SchedSummary after;
    sched_summary(s, &after);
    cr_assert_eq(after.done, before.done + 1, "its JCT is counted");
    double sum = 0;
    for (size_t i = 0; i < sched_job_count(s); i++) {
        sched_job_info(s, i, &info);
        if (info.state == SCHED_JOB_DONE)
            sum += info.finish_s - info.submit_s;
    }
    cr_assert_float_eq(after.avg_jct_s * (double)after.done, sum, 1e-6);
    cr_assert_eq(sched_complete(s, (size_t)c0, &e), -1, "done already");
    cr_assert(strstr(e.msg, "found it done"), "%s", e.msg);
    cr_assert_eq(sched_abandon(s, (size_t)c0, &e), -1, "a done job is not failed");
    cr_assert_eq(sched_pin(s, (size_t)c0, 2, &e), 0, "%s", e.msg);
    while (!sched_finished(s) && sched_now(s) < 1e6) {
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
        sched_job_info(s, (size_t)c0, &info);
        cr_assert_eq(info.gpus, 0, "placed again at %g s", sched_now(s));
        cr_assert_eq(info.state, SCHED_JOB_DONE);
        fixture_sched_capacity(s);
    }
    cr_assert(sched_finished(s), "the others finish on its GPUs too");
    for (size_t i = events + 1; i < sched_event_count(s); i++)
        cr_assert_neq(sched_event(s, i)->job, c0, "an event for the completed job");
    sched_summary(s, &after);
    cr_assert_eq(after.done, 12);
    cr_assert_eq(sched_complete(s, 99, &e), -1, "an unknown job is refused");
    sched_free(s);
}

/* The finish of a job that ended by itself says so in its event JSON ("by":"itself"); a finish
 * the model decided carries no "by" field, as before, so the two can be told apart. */
Test(sched, a_finish_by_itself_says_so_in_its_event_json_and_the_models_does_not)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0");
    size_t events = sched_event_count(s);
    cr_assert_eq(sched_complete(s, (size_t)c0, &e), 0, "%s", e.msg);
    const SchedEvent *ev = sched_event(s, events);
    cr_assert_eq(ev->by_itself, 1);
    char *json = sched_event_json(s, ev);
    cr_assert(json);
    cr_assert(strstr(json, "\"event\":\"finish\""), "%s", json);
    cr_assert(strstr(json, "\"by\":\"itself\""), "%s", json);
    free(json);
    while (!sched_finished(s) && sched_now(s) < 1e6)
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    int model_finishes = 0;
    for (size_t i = events + 1; i < sched_event_count(s); i++) {
        ev = sched_event(s, i);
        if (ev->kind != SCHED_EV_FINISH)
            continue;
        model_finishes++;
        cr_assert_eq(ev->by_itself, 0);
        json = sched_event_json(s, ev);
        cr_assert(json);
        cr_assert_null(strstr(json, "\"by\""), "%s", json);
        free(json);
    }
    cr_assert_gt(model_finishes, 0);
    sched_free(s);
}

/* A job that ended by itself is complete, whatever progress the model had for it: its info
 * reads progress 1 and its last epoch; a failed job keeps its progress. */
Test(sched, a_job_that_ended_by_itself_reads_complete)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 400, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0"), c1 = -1;
    SchedJobInfo info;
    for (size_t i = 0; i < sched_job_count(s) && c1 < 0; i++) {
        sched_job_info(s, i, &info);
        if ((int)i != c0 && info.gpus > 0)
            c1 = (int)i;
    }
    cr_assert_geq(c1, 0, "another job placed");
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_lt(info.progress, 1, "short of its end in the model");
    cr_assert_eq(sched_complete(s, (size_t)c0, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_abandon(s, (size_t)c1, &e), 0, "%s", e.msg);
    sched_job_info(s, (size_t)c0, &info);
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_float_eq(info.progress, 1, 1e-12);
    cr_assert_float_eq(info.epoch, info.epochs_total, 1e-12);
    sched_job_info(s, (size_t)c1, &info);
    cr_assert_eq(info.state, SCHED_JOB_FAILED);
    cr_assert_lt(info.progress, 1, "a failed job keeps its progress");
    sched_free(s);
}

/* A failed job (sched_abandon) or one still to arrive cannot complete: it never ran. */
Test(sched, only_a_job_that_arrived_and_did_not_fail_can_complete)
{
    SchedState *s = small("doubling", 4);
    Error e;
    cr_assert_eq(sched_advance(s, 200, &e), 0, "%s", e.msg);
    int c0 = sched_job_find(s, "cifar10-0");
    cr_assert_eq(sched_abandon(s, (size_t)c0, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_complete(s, (size_t)c0, &e), -1);
    cr_assert(strstr(e.msg, "found it failed"), "%s", e.msg);
    size_t late = sched_job_count(s) - 1;
    SchedJobInfo info;
    sched_job_info(s, late, &info);
    cr_assert_eq(info.state, SCHED_JOB_FUTURE);
    cr_assert_eq(sched_complete(s, late, &e), -1);
    cr_assert(strstr(e.msg, "expected a job that has arrived"), "%s", e.msg);
    sched_job_info(s, late, &info);
    cr_assert_eq(info.state, SCHED_JOB_FUTURE, "nothing changed");
    sched_free(s);
}
