/* The live driver and a run's end that is the job's own: a run that exits 0 unasked (its
 * script's training is done) leaves the job done in the model, its GPUs to the other jobs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/sched/sched.h"
#include "remote/live/schedlive.h"
#include "tests/support/fixtures.h"
#include "tests/support/livestandin.h"

/* A backend whose runs print a step at each of the driver's steps and run until a signal or
 * the test ends them; the last run of each of j0 and j1 is kept for the test. */
static StandinRun *runs_of[2];

static void *kept_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)err, (void)refusal;
    StandinRun *r = standin_run_new(sizeof(StandinRun));
    runs_of[strcmp(spec->name, "j0") == 0 ? 0 : 1] = r;
    return r;
}

static void kept_step(void *run)
{
    StandinRun *r = run;
    if (!r->status[0])
        standin_says_step(&r->p, r->p.seen + 1, NAN);
}

static const LiveRunOps KEPT = {.name = "kept",
                                .start = kept_start,
                                .signal = standin_signal,
                                .step = kept_step,
                                .rank0_saved = standin_ready,
                                STANDIN_OPS};

/* Regression: a run that exited 0 unasked was only said: the model kept the job's GPUs its
 * until its own progress model finished it, so they sat idle and the other job could not
 * grow onto them, and a decision that resized it started it again, against
 * docs/scheduler-live.md ("it is not restarted"). Now the model has it done at once
 * (sched_complete): j1 grows onto its GPUs at the next decision, and no decision places j0
 * again. Stepped at chosen times: 6 s of the model's time a step, ten steps a decision. */
Test(schedlive, a_job_that_ends_by_itself_gives_its_gpus_to_the_other_job_at_the_next_decision)
{
    Error e;
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j1", "cifar10", 0.0, 2, 128}, &e), 0, "%s",
                 e.msg);
    Cluster *c = standin_two_by_two();
    static char text[32768];
    text[0] = 0;
    FixtureLog log = {.text = text, .cap = sizeof text};
    SchedLive *l = schedlive_new(s, c, NULL,
                                 &(SchedLiveOptions){.time_scale = 1,
                                                     .backend = &KEPT,
                                                     .tick_s = 0.01,
                                                     .log = fixture_log_line,
                                                     .userdata = &log},
                                 &e);
    cr_assert_not_null(l, "%s", e.msg);
    SchedLiveJob j0, j1;
    int64_t t = clock_now_ms();
    for (int i = 0; i < 25; i++) /* to 150 s: the decisions at 60 and 120 s keep both */
        schedlive_step(l, NULL, 0, t += 6000);
    schedlive_job(l, 0, &j0);
    schedlive_job(l, 1, &j1);
    cr_assert(j0.running && j0.gpus == 2, "j0 runs at 2 GPUs: %s", text);
    cr_assert(j1.running && j1.gpus == 2, "j1 runs at 2 GPUs beside it: %s", text);
    int j0_runs = j0.runs;
    size_t said = strlen(text);
    snprintf(runs_of[0]->status, sizeof runs_of[0]->status, "exited 0"); /* its script is done */
    schedlive_step(l, NULL, 0, t += 10); /* read before the next decision */
    cr_assert(strstr(text + said, "j0: ended by itself at step "), "%s", text + said);
    cr_assert(strstr(text + said, ": done, its 2 GPUs go back to the scheduler for other jobs\n"),
              "%s", text + said);
    SchedJobInfo info;
    cr_assert_eq(sched_job_info(s, 0, &info), 0);
    cr_assert_eq(info.state, SCHED_JOB_DONE, "done in the model at once: %s", text + said);
    cr_assert_eq(info.gpus, 0, "%s", text + said);
    cr_assert_float_eq(info.finish_s, sched_now(s), 1e-9);
    SchedSummary m;
    sched_summary(s, &m);
    cr_assert_eq(m.done, 1, "its JCT is counted: %s", text + said);
    cr_assert_float_eq(m.avg_jct_s, info.finish_s - info.submit_s, 1e-9);
    /* the next decision gives j1 the GPUs j0 gave back; ten more follow */
    for (int i = 0; i < 10 && (schedlive_job(l, 1, &j1), !(j1.running && j1.gpus == 4)); i++)
        schedlive_step(l, NULL, 0, t += 6000);
    cr_assert(j1.running && j1.gpus == 4, "j1 grows onto j0's GPUs at the next decision: %s",
              text + said);
    for (int i = 0; i < 100; i++)
        schedlive_step(l, NULL, 0, t += 6000);
    schedlive_job(l, 0, &j0);
    cr_assert_eq(j0.runs, j0_runs, "j0 is never started again: %s", text + said);
    cr_assert(!j0.running && !j0.failed, "%s", text + said);
    cr_assert_null(strstr(text + said, "finish j0"), "no decision is said of j0's end: %s",
                   text + said);
    cr_assert_eq(sched_job_info(s, 0, &info), 0);
    cr_assert_eq(info.state, SCHED_JOB_DONE, "%s", text + said);
    cr_assert_eq(info.gpus, 0, "no decision placed it again: %s", text + said);
    for (size_t i = 0; i < sched_event_count(s); i++) {
        const SchedEvent *ev = sched_event(s, i);
        if (ev->job == 0 && ev->time_s >= info.finish_s)
            cr_assert(ev->kind == SCHED_EV_FINISH && ev->time_s == info.finish_s,
                      "an event for j0 after its end: %s at %g s", sched_event_kind_name(ev->kind),
                      ev->time_s);
    }
    fixture_sched_capacity(s);
    cr_assert(!schedlive_done(l), "j1 still runs: %s", text);
    schedlive_stop_all(l);
    for (int i = 0; i < 100 && !schedlive_done(l); i++)
        schedlive_step(l, NULL, 0, t += 20);
    cr_assert(schedlive_done(l), "%s", text);
    schedlive_free(l);
    sched_free(s);
    catalogue_free(cat);
    cluster_free(c);
}
