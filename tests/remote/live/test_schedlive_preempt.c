/* The live driver when its backend takes a run off its GPUs for another job (Slurm's
 * preemption): remote/live/schedlive_preempt.c. */
#include <criterion/criterion.h>
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
    StandinRun base;
    int n, steps, resumed;
    char how[64];
} PlanRun;

static int plan_starts;
static int plan_resumed[8];
static int plan_signals; /* signals sent to a run after it was preempted */

static void *plan_start(void *ctx, const LiveRunSpec *spec, Error *err)
{
    (void)ctx;
    (void)err;
    PlanRun *r = standin_run_new(sizeof *r);
    r->n = ++plan_starts;
    r->resumed = spec->alloc->resume[0] != 0;
    if (r->n < 8)
        plan_resumed[r->n] = r->resumed;
    return r;
}

static void plan_step(void *run)
{
    PlanRun *r = run;
    if (r->base.status[0])
        return;
    r->steps++;
    TrialEvent ev = {.kind = EVENT_PROGRESS,
                     .step = 100 * r->n + r->steps,
                     .epoch = -1,
                     .loss = 0.5,
                     .examples_per_s = -1};
    jobctl_progress_note(&r->base.p, &ev);
    if (r->n == 1 && r->steps == 3)
        snprintf(r->how, sizeof r->how, "preempted by the test");
    if (r->n == 1 && r->steps == 6)
        snprintf(r->base.status, sizeof r->base.status, "requeued (its copy cancelled)");
    if (r->n == 2 && r->steps == 3)
        snprintf(r->base.status, sizeof r->base.status, "exited 1");
}

static int plan_signal(void *run, int signo, Error *err)
{
    if (((PlanRun *)run)->how[0])
        plan_signals++;
    return standin_signal(run, signo, err);
}

/* late_save: run 1's exit line (its checkpoint) comes only when it ends, after the driver
 * first saw the preemption, as with a REQUEUE whose copy is pending when first seen */
static int plan_late_save;

static int plan_saved(const void *run)
{
    const PlanRun *r = run;
    if (plan_late_save && r->n == 1)
        return r->base.status[0] != 0;
    return r->steps >= 3;
}

static const char *plan_preempted(const void *run)
{
    return ((const PlanRun *)run)->how;
}

static const LiveRunOps PLAN = {.name = "plan",
                                .start = plan_start,
                                .signal = plan_signal,
                                .step = plan_step,
                                .rank0_saved = plan_saved,
                                .preempted = plan_preempted,
                                STANDIN_OPS};

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

/* The plan from its first run on two nodes of two GPUs; late_save as plan_late_save. */
static void plan_open(LiveRig *r, int late_save)
{
    plan_starts = plan_signals = 0;
    plan_late_save = late_save;
    memset(plan_resumed, 0, sizeof plan_resumed);
    liverig_open(r, two_nodes(), &PLAN, 600);
}

/* Run 1 preempted, run 2 dead: one death, so the job restarts (run 3) rather than being left
 * stopped; the preemption gave its GPUs back to the model while the run was still being
 * cleared, sent it no signal, and the next run resumed from the checkpoint. */
Test(schedlive_preempt, a_preemption_is_no_death_and_frees_the_models_gpus_at_once)
{
    static LiveRig r;
    plan_open(&r, 0);
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
    cr_assert(strstr(r.text, "j0: died unexpectedly at step 203 (exited 1): restarting from its "
                             "checkpoint"),
              "the death after a preemption is the first: %s", r.text);
    cr_assert(!strstr(r.text, "second death"), "%s", r.text);
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.deaths, 1);
    cr_assert_eq(j.preemptions, 1);
    cr_assert(!j.failed);
    liverig_close(&r);
}

static int second_run_started(const SchedLiveJob *j)
{
    (void)j;
    return plan_starts >= 2;
}

/* The checkpoint the TERM wrote is known only once the preempted run ends (its exit line
 * after the first sighting): the next run still resumes from it, not fresh. */
Test(schedlive_preempt, a_checkpoint_read_after_the_preemption_is_resumed_from)
{
    static LiveRig r;
    plan_open(&r, 1);
    SchedLiveJob j;
    liverig_run_until(&r, second_run_started, 10000, &j);
    cr_assert_eq(plan_starts, 2, "%s", r.text);
    cr_assert(strstr(r.text, "j0: run preempted by the test, at step 103, no checkpoint yet"), "%s",
              r.text);
    cr_assert(strstr(r.text, "j0: its preempted run ended having written its checkpoint at step "
                             "106: the next run resumes from it\n"),
              "%s", r.text);
    cr_assert(plan_resumed[2], "run 2 resumes from the checkpoint run 1 wrote: %s", r.text);
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.saved_step, 106);
    cr_assert_eq(j.deaths, 0);
    liverig_close(&r);
    plan_late_save = 0;
}

static int at_step_102(const SchedLiveJob *j)
{
    return j->step >= 102;
}

/* The model's own stop is decided (and its GPUs already back in the model) when the backend
 * says it took the run: nothing is given back, and the log does not say its 0 GPUs leave. */
Test(schedlive_preempt, a_preemption_of_a_job_holding_nothing_gives_nothing_back)
{
    Error e;
    static LiveRig r;
    plan_open(&r, 0);
    SchedLiveJob j;
    liverig_run_until(&r, at_step_102, 10000, &j);
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
