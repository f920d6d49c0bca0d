/* The live driver when its backend takes a run off its GPUs for another job (Slurm's
 * preemption): remote/live/schedlive_preempt.c. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/sched/catalogue.h"
#include "remote/live/jobctl.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"
#include "tests/support/fixtures.h"
#include "tests/support/livestandin.h"

/* A backend whose runs follow a plan: run 1 is preempted on its third step and, like a
 * requeued Slurm job being cancelled, stays up three steps more; run 2 dies on its third
 * step; run 3 runs until stopped. Each writes a checkpoint at its last line when it ends. */
typedef struct {
    JobProgress p;
    int n, steps, resumed, signalled;
    char status[48], how[64];
} PlanRun;

static int plan_starts;
static int plan_resumed[8];
static int plan_signals; /* signals sent to a run after it was preempted */

static void *plan_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)refusal;
    (void)err;
    PlanRun *r = calloc(1, sizeof *r);
    r->p = jobctl_progress_none();
    r->n = ++plan_starts;
    r->resumed = spec->alloc->resume[0] != 0;
    if (r->n < 8)
        plan_resumed[r->n] = r->resumed;
    return r;
}

/* plan_suspend: no preemption, no death; run 1 is suspended (no progress line) while
 * plan_suspending is set, as Slurm's SUSPEND holds its processes stopped */
static int plan_suspend, plan_suspending;

static void plan_step(void *run)
{
    PlanRun *r = run;
    if (r->status[0] || (plan_suspend && plan_suspending))
        return;
    r->steps++;
    standin_says_step(&r->p, 100 * r->n + r->steps, 0.5);
    if (plan_suspend)
        return;
    if (r->n == 1 && r->steps == 3)
        snprintf(r->how, sizeof r->how, "preempted by the test");
    if (r->n == 1 && r->steps == 6)
        snprintf(r->status, sizeof r->status, "requeued (its copy cancelled)");
    if (r->n == 2 && r->steps == 3)
        snprintf(r->status, sizeof r->status, "exited 1");
}

static int plan_signal(void *run, int signo, Error *err)
{
    (void)err;
    PlanRun *r = run;
    if (r->how[0])
        plan_signals++;
    snprintf(r->status, sizeof r->status, signo == SIGKILL ? "killed by SIGKILL" : "exited 0");
    return 0;
}

static int plan_running(const void *run)
{
    return !((const PlanRun *)run)->status[0];
}

static int plan_suspended(const void *run);

static int plan_ready(const void *run)
{
    return !plan_suspended(run); /* as the Slurm backend: no TERM while suspended */
}

static const JobProgress *plan_progress(const void *run)
{
    return &((const PlanRun *)run)->p;
}

static const char *plan_status(const void *run)
{
    return ((const PlanRun *)run)->status;
}

/* late_save: run 1's exit line (its checkpoint) comes only when it ends, after the driver
 * first saw the preemption, as with a REQUEUE whose copy is pending when first seen */
static int plan_late_save;

static int plan_saved(const void *run)
{
    const PlanRun *r = run;
    if (plan_late_save && r->n == 1)
        return r->status[0] != 0;
    return r->steps >= 3;
}

static size_t plan_size(const void *run)
{
    (void)run;
    return 1;
}

static const char *plan_preempted(const void *run)
{
    return ((const PlanRun *)run)->how;
}

static int plan_suspended(const void *run)
{
    (void)run;
    return plan_suspend && plan_suspending;
}

static const LiveRunOps PLAN = {.name = "plan",
                                .start = plan_start,
                                .signal = plan_signal,
                                .step = plan_step,
                                .running = plan_running,
                                .ready = plan_ready,
                                .progress = plan_progress,
                                .status = plan_status,
                                .rank0_saved = plan_saved,
                                .size = plan_size,
                                .preempted = plan_preempted,
                                .suspended = plan_suspended,
                                .free = free};

static void collect(void *ud, const char *line)
{
    char *buf = ud;
    size_t n = strlen(buf);
    snprintf(buf + n, 16384 - n, "%s\n", line);
}

static Cluster *two_nodes(void)
{
    Cluster *c = cluster_new("t");
    DeviceSpec d[2] = {{.id = "gpu0", .kind = DEVICE_GPU}, {.id = "gpu1", .kind = DEVICE_GPU}};
    MachineType t = {.name = "a", .bandwidth_gbps = 10, .devices = d, .n_devices = 2};
    long it = cluster_add_type(c, &t, NULL);
    cr_assert(it >= 0);
    cr_assert_eq(cluster_add_machine(c, "m0", "127.0.0.1", (size_t)it, NULL), 0);
    cr_assert_eq(cluster_add_machine(c, "m1", "127.0.0.1", (size_t)it, NULL), 0);
    cluster_finish(c);
    snprintf(c->job_command, sizeof c->job_command,
             "w --gpus {gpus} --checkpoint c.ckpt --resume {resume}");
    return c;
}

/* Run 1 preempted, run 2 dead: one death, so the job restarts (run 3) rather than being left
 * stopped; the preemption gave its GPUs back to the model while the run was still being
 * cleared, sent it no signal, and the next run resumed from the checkpoint. */
Test(schedlive_preempt, a_preemption_is_no_death_and_frees_the_models_gpus_at_once)
{
    static LiveRig r;
    plan_starts = plan_signals = plan_late_save = 0;
    liverig_open(&r, two_nodes(), &PLAN, 600);
    SchedLiveJob j;
    int model_freed_while_up = 0, shown_running_while_taken = 0;
    int64_t until = clock_now_ms() + 10000;
    do {
        schedlive_step(r.l, NULL, 0, clock_now_ms());
        schedlive_job(r.l, 0, &j);
        SchedJobInfo info;
        cr_assert_eq(sched_job_info(r.s, 0, &info), 0);
        if (plan_starts == 1 && j.preemptions == 1) {
            model_freed_while_up |= info.gpus == 0;
            shown_running_while_taken |= j.running;
        }
    } while (plan_starts < 3 && clock_now_ms() < until);
    cr_assert_eq(plan_starts, 3, "%s", r.text);
    cr_assert(model_freed_while_up, "the model stops counting its GPUs at once: %s", r.text);
    cr_assert(!shown_running_while_taken, "a taken run is not shown running");
    cr_assert_eq(plan_signals, 0, "a taken run is sent no signal");
    cr_assert(strstr(r.text, "j0: run preempted by the test, at step 103, checkpoint written at "
                          "step 103: not a death; its "),
              "%s", r.text);
    cr_assert(strstr(r.text, "leave the model until a decision places it again, resuming from its "
                          "checkpoint\n"),
              "%s", r.text);
    cr_assert(!strstr(r.text, ": stop j0"), "the model's side is no decision line: %s", r.text);
    cr_assert(plan_resumed[2] && plan_resumed[3], "each restart resumes from the checkpoint");
    cr_assert(strstr(r.text, "j0: died unexpectedly after step 203 (its last progress line; "
                          "exited 1): restarting from its checkpoint"),
              "the death after a preemption is the first: %s", r.text);
    cr_assert(!strstr(r.text, "second death"), "%s", r.text);
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.deaths, 1);
    cr_assert_eq(j.preemptions, 1);
    cr_assert(!j.failed);
    liverig_close(&r);
}

/* The checkpoint the TERM wrote is known only once the preempted run ends (its exit line
 * after the first sighting): the next run still resumes from it, not fresh. */
Test(schedlive_preempt, a_checkpoint_read_after_the_preemption_is_resumed_from)
{
    Error e;
    Cluster *c = two_nodes();
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    static char log[16384];
    log[0] = 0;
    plan_starts = plan_signals = 0;
    plan_late_save = 1;
    memset(plan_resumed, 0, sizeof plan_resumed);
    SchedLiveOptions o = {
        .time_scale = 600, .tick_s = 0.01, .log = collect, .userdata = log, .backend = &PLAN};
    SchedLive *l = schedlive_new(s, c, NULL, &o, &e);
    cr_assert_not_null(l, "%s", e.msg);
    int64_t until = clock_now_ms() + 10000;
    do
        schedlive_step(l, NULL, 0, clock_now_ms());
    while (plan_starts < 2 && clock_now_ms() < until);
    cr_assert_eq(plan_starts, 2, "%s", log);
    cr_assert(strstr(log, "j0: run preempted by the test, at step 103, no checkpoint yet"), "%s",
              log);
    cr_assert(strstr(log, "j0: its preempted run ended having written its checkpoint at step "
                          "106: the next run resumes from it\n"),
              "%s", log);
    cr_assert(plan_resumed[2], "run 2 resumes from the checkpoint run 1 wrote: %s", log);
    SchedLiveJob j;
    schedlive_job(l, 0, &j);
    cr_assert_eq(j.saved_step, 106);
    cr_assert_eq(j.deaths, 0);
    schedlive_stop_all(l);
    for (int i = 0; i < 100 && !schedlive_done(l); i++)
        schedlive_step(l, NULL, 0, clock_now_ms());
    cr_assert(schedlive_done(l), "%s", log);
    plan_late_save = 0;
    schedlive_free(l);
    sched_free(s);
    catalogue_free(cat);
    cluster_free(c);
}

/* The model's own stop is decided (and its GPUs already back in the model) when the backend
 * says it took the run: nothing is given back, and the log does not say its 0 GPUs leave. */
Test(schedlive_preempt, a_preemption_of_a_job_holding_nothing_gives_nothing_back)
{
    Error e;
    static LiveRig r;
    plan_starts = plan_signals = plan_late_save = 0;
    liverig_open(&r, two_nodes(), &PLAN, 600);
    SchedLiveJob j;
    int64_t until = clock_now_ms() + 10000;
    do {
        schedlive_step(r.l, NULL, 0, clock_now_ms());
        schedlive_job(r.l, 0, &j);
    } while (j.step < 102 && clock_now_ms() < until);
    cr_assert_eq(j.step, 102, "%s", r.text);
    /* the model's stop, enacted by the next step before the backend's word on step 103 */
    cr_assert_eq(sched_evict(r.s, 0, &e), 0, "%s", e.msg);
    schedlive_step(r.l, NULL, 0, clock_now_ms());
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.preemptions, 1, "%s", r.text);
    cr_assert(strstr(r.text, "j0: run preempted by the test, at step 103, checkpoint written at "
                          "step 103: not a death; it held no GPUs in the model, a decision that "
                          "places it again resumes from its checkpoint\n"),
              "%s", r.text);
    cr_assert(!strstr(r.text, "0 GPUs leave"), "%s", r.text);
    cr_assert_eq(plan_signals, 0, "a taken run is sent no signal");
    liverig_close(&r);
}

/* Suspended by its backend (Slurm's PreemptMode=SUSPEND): no death, no preemption, no signal;
 * the model keeps its GPUs, counts no progress for it through several decisions, and counts
 * again once it is resumed; the run goes on, never restarted. */
Test(schedlive_preempt, a_suspended_run_keeps_its_gpus_and_gains_no_model_progress)
{
    static LiveRig r;
    plan_starts = plan_signals = plan_late_save = 0;
    plan_suspend = 1;
    plan_suspending = 0;
    liverig_open(&r, two_nodes(), &PLAN, 600);
    SchedLiveJob j;
    int64_t until = clock_now_ms() + 10000;
    do {
        schedlive_step(r.l, NULL, 0, clock_now_ms());
        schedlive_job(r.l, 0, &j);
    } while (j.step < 103 && clock_now_ms() < until);
    cr_assert_eq(j.step, 103, "%s", r.text);
    plan_suspending = 1;
    schedlive_step(r.l, NULL, 0, clock_now_ms()); /* the model learns it at this step's end */
    schedlive_job(r.l, 0, &j);
    cr_assert(j.suspended && j.running, "shown suspended, still its run: %s", r.text);
    SchedJobInfo at, info;
    cr_assert_eq(sched_job_info(r.s, 0, &at), 0);
    cr_assert(at.gpus > 0 && at.suspended);
    double t0 = sched_now(r.s);
    until = clock_now_ms() + 10000;
    do { /* 180 simulated seconds at least: three decisions */
        schedlive_step(r.l, NULL, 0, clock_now_ms());
        cr_assert_eq(sched_job_info(r.s, 0, &info), 0);
        cr_assert_eq(info.progress, at.progress, "no progress while suspended (t=%.0f s)",
                     sched_now(r.s));
        cr_assert_eq(info.gpus, at.gpus, "its GPUs stay its");
    } while (sched_now(r.s) < t0 + 180 && clock_now_ms() < until);
    cr_assert_geq(sched_now(r.s), t0 + 180);
    plan_suspending = 0;
    until = clock_now_ms() + 10000;
    do {
        schedlive_step(r.l, NULL, 0, clock_now_ms());
        schedlive_job(r.l, 0, &j);
        sched_job_info(r.s, 0, &info);
    } while ((j.step < 105 || info.progress <= at.progress) && clock_now_ms() < until);
    cr_assert(!j.suspended && !info.suspended, "resumed");
    cr_assert_gt(info.progress, at.progress, "resumed, it progresses in the model again");
    cr_assert_eq(plan_starts, 1, "the same run goes on: %s", r.text);
    cr_assert_eq(j.deaths, 0);
    cr_assert_eq(j.preemptions, 0);
    cr_assert(!strstr(r.text, ": stop j0") && !strstr(r.text, ": resize j0"), "%s", r.text);
    plan_suspending = 1; /* suspended again, then the run's end */
    /* the end of the run while it is suspended: its stop waits for the resume, said once */
    schedlive_stop_all(r.l);
    for (int i = 0; i < 20; i++)
        schedlive_step(r.l, NULL, 0, clock_now_ms());
    schedlive_job(r.l, 0, &j);
    cr_assert(j.running && !schedlive_done(r.l), "still its run, suspended: %s", r.text);
    const char *wait = strstr(r.text, "j0: its stop waits until it is resumed: a suspended job "
                                   "cannot write its checkpoint\n");
    cr_assert(wait && !strstr(wait + 20, "its stop waits"), "said once: %s", r.text);
    plan_suspending = 0;
    for (int i = 0; i < 100 && !schedlive_done(r.l); i++)
        schedlive_step(r.l, NULL, 0, clock_now_ms());
    cr_assert(schedlive_done(r.l), "resumed, the stop went and the run ended: %s", r.text);
    cr_assert(strstr(r.text, "j0: stopped at step"), "with its checkpoint: %s", r.text);
    plan_suspend = 0;
    schedlive_free(r.l);
    sched_free(r.s);
    catalogue_free(r.cat);
    cluster_free(r.c);
}

/* The model's side alone: an evicted job holds nothing, logs a stop, and is placed again by
 * the next decision; a job holding nothing is left as it is. */
Test(schedlive_preempt, an_evicted_job_is_queued_and_placed_again)
{
    Error e;
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    int had = info.gpus;
    cr_assert(had > 0);
    size_t events = sched_event_count(s);
    cr_assert_eq(sched_evict(s, 0, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 0);
    cr_assert_eq(info.state, SCHED_JOB_QUEUED);
    cr_assert_eq(sched_event_count(s), events + 1);
    const SchedEvent *ev = sched_event(s, events);
    cr_assert(ev->kind == SCHED_EV_STOP && ev->gpus_from == had && ev->gpus_to == 0);
    int owners[2];
    for (int n = 0; n < 2; n++) {
        sched_node_gpus(s, n, owners, 2);
        cr_assert(owners[0] == -1 && owners[1] == -1, "node %d's GPUs are free", n);
    }
    cr_assert_eq(sched_evict(s, 0, &e), 0, "nothing held: nothing happens");
    cr_assert_eq(sched_event_count(s), events + 1);
    cr_assert_eq(sched_evict(s, 7, &e), -1);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert(info.gpus > 0, "the next decision places it again");
    cr_assert_eq(sched_event(s, events + 1)->kind, SCHED_EV_START);
    sched_free(s);
    catalogue_free(cat);
}
