/* The live driver and a start the backend refuses (remote/live/schedlive_enact.c): a refusal
 * that may pass (LIVERUN_REFUSED_ONCE: an SSH exec that failed once) is tried once more at a
 * later tick; one the backend says cannot pass (LIVERUN_REFUSED_FOR_GOOD: a job folder others
 * can write, a bad template), or a second in a row, leaves the job failed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/schedlive.h"
#include "tests/support/livestandin.h"
#include "tests/support/ssh_hermetic.h"

/* The backend's answer to each start, in order: 'o' refused once (may pass), 'g' refused for
 * good; 'O' and 'G' the same, but after start returned a run (as Slurm's sbatch answers
 * later: LiveRunOps.refused); past the plan's end, a run that trains. */
static const char *plan;
static int starts;

typedef struct {
    StandinRun head;
    char late; /* 'O' or 'G': refused after the start */
} PlannedRun;

static void *planned_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)spec;
    char c = plan[starts] ? plan[starts] : 'r';
    starts++;
    if (c == 'o') {
        *refusal = LIVERUN_REFUSED_ONCE;
        error_set(err, "exec on m0 failed: channel open refused");
        return NULL;
    }
    if (c == 'g') {
        *refusal = LIVERUN_REFUSED_FOR_GOOD;
        error_set(err, "job folder /j/j0 is world-writable (mode 0777)");
        return NULL;
    }
    PlannedRun *r = standin_run_new(sizeof(PlannedRun));
    r->late = c == 'O' || c == 'G' ? c : 0;
    return r;
}

/* A run whose request the backend found refused after start returned: it ends "not
 * started" at its first step, and says how through LiveRunOps.refused. */
static const char *late_refused(const void *run, LiveRefusal *refusal)
{
    const PlannedRun *r = run;
    if (!r->late || !r->head.status[0])
        return NULL;
    *refusal = r->late == 'G' ? LIVERUN_REFUSED_FOR_GOOD : LIVERUN_REFUSED_ONCE;
    return r->late == 'G' ? "sbatch: Invalid partition name specified"
                          : "sbatch: Resource temporarily unavailable";
}

static void training_step(void *run)
{
    PlannedRun *pr = run;
    StandinRun *r = &pr->head;
    if (pr->late && !r->status[0])
        snprintf(r->status, sizeof r->status, "not started: refused");
    else if (!r->status[0])
        standin_says_step(&r->p, r->p.seen + 1, NAN);
}

static const LiveRunOps PLANNED = {.name = "planned",
                                   .start = planned_start,
                                   .signal = standin_signal,
                                   .step = training_step,
                                   .rank0_saved = standin_ready,
                                   .refused = late_refused,
                                   STANDIN_OPS};

static int failed(const SchedLiveJob *j)
{
    return j->failed;
}

static int has_stepped(const SchedLiveJob *j)
{
    return j->step >= 3;
}

/* Steps the driver 20 ms at a time (its tick is 10 ms) from *t until `starts` reaches n. */
static void step_until_starts(LiveRig *r, int64_t *t, int n)
{
    for (int i = 0; i < 200 && starts < n; i++)
        schedlive_step(r->l, NULL, 0, *t += 20);
    cr_assert_eq(starts, n, "%s", r->text);
}

/* Regression: one refused start (an SSH exec that failed once) failed the job for good. */
Test(schedlive, a_start_refused_once_is_tried_again_at_a_later_tick_and_the_job_trains)
{
    static LiveRig r;
    plan = "o";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    int64_t t = clock_now_ms();
    step_until_starts(&r, &t, 1);
    /* not in a tight loop: the same step's time does not start it again */
    schedlive_step(r.l, NULL, 0, t);
    cr_assert_eq(starts, 1, "tried again within the step that was refused: %s", r.text);
    SchedLiveJob j;
    schedlive_job(r.l, 0, &j);
    cr_assert(!j.failed, "%s", r.text);
    cr_assert(strstr(j.status, "not started: exec on m0 failed: channel open refused (trying "
                               "again)"),
              "the job's status says it: %s", j.status);
    step_until_starts(&r, &t, 2);
    liverig_run_until(&r, has_stepped, 20000, &j);
    cr_assert_geq(j.step, 3, "%s", r.text);
    cr_assert_eq(j.failed, 0, "%s", r.text);
    cr_assert_eq(j.deaths, 0, "a refused start is no death: %s", r.text);
    cr_assert_eq(j.runs, 1, "the refused start is no run: %s", r.text);
    cr_assert(strstr(r.text, "j0: could not start on m0: exec on m0 failed: channel open "
                             "refused: tried once more at the next tick\n") &&
                  strstr(r.text, "j0: started on m0 with "),
              "%s", r.text);
    cr_assert_null(strstr(r.text, "left failed"), "%s", r.text);
    liverig_close(&r);
}

/* A refusal the backend says cannot pass fails the job at once: no second start. */
Test(schedlive, a_start_refused_for_good_fails_the_job_at_once)
{
    static LiveRig r;
    plan = "g";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    SchedLiveJob j;
    liverig_run_until(&r, failed, 20000, &j);
    cr_assert(j.failed, "%s", r.text);
    cr_assert_eq(starts, 1, "tried again: %s", r.text);
    cr_assert_eq(j.runs, 0, "%s", r.text);
    cr_assert(strstr(r.text, "j0: could not start on m0: job folder /j/j0 is world-writable "
                             "(mode 0777): refused for good (trying again cannot change it), "
                             "left failed\n") &&
                  strstr(r.text, "j0: failed: its "),
              "%s", r.text);
    cr_assert(strstr(j.status, "not started: job folder /j/j0 is world-writable"), "%s", j.status);
    liverig_close(&r);
}

/* Two refusals in a row that may pass: the second fails the job (no retrying for ever). */
Test(schedlive, a_start_refused_twice_in_a_row_fails_the_job)
{
    static LiveRig r;
    plan = "oo";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    SchedLiveJob j;
    liverig_run_until(&r, failed, 20000, &j);
    cr_assert(j.failed, "%s", r.text);
    cr_assert_eq(starts, 2, "%s", r.text);
    cr_assert(strstr(r.text, ": tried once more at the next tick\n") &&
                  strstr(r.text, "j0: could not start on m0: exec on m0 failed: channel open "
                                 "refused: refused again, left failed\n"),
              "%s", r.text);
    liverig_close(&r);
}

/* Regression: over Slurm the start returns a run before sbatch answers, so a refusal
 * (Slurm's "Invalid partition name specified") ended the run and counted as the job's death:
 * restarted fresh, then "second death in a row". Now it is a refused start, said so. */
Test(schedlive, a_start_refused_after_it_returned_for_good_fails_the_job_without_a_death)
{
    static LiveRig r;
    plan = "G";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    SchedLiveJob j;
    liverig_run_until(&r, failed, 20000, &j);
    cr_assert(j.failed, "%s", r.text);
    cr_assert_eq(starts, 1, "tried again: %s", r.text);
    cr_assert_eq(j.deaths, 0, "a refused start is no death: %s", r.text);
    cr_assert_eq(j.runs, 0, "%s", r.text);
    cr_assert(strstr(r.text, "j0: could not start on m0: sbatch: Invalid partition name "
                             "specified: refused for good (trying again cannot change it), "
                             "left failed\n"),
              "%s", r.text);
    cr_assert_null(strstr(r.text, "died"), "%s", r.text);
    cr_assert(strstr(j.status, "not started: sbatch: Invalid partition name specified"), "%s",
              j.status);
    liverig_close(&r);
}

/* One that may pass is tried once more, and the job trains; two in a row fail it (the run
 * the first start returned does not clear the first refusal). */
Test(schedlive, a_start_refused_after_it_returned_once_is_tried_again_and_the_job_trains)
{
    static LiveRig r;
    plan = "O";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    int64_t t = clock_now_ms();
    step_until_starts(&r, &t, 2);
    SchedLiveJob j;
    liverig_run_until(&r, has_stepped, 20000, &j);
    cr_assert_eq(j.failed, 0, "%s", r.text);
    cr_assert_eq(j.deaths, 0, "%s", r.text);
    cr_assert_eq(j.runs, 1, "%s", r.text);
    cr_assert(strstr(r.text, "j0: could not start on m0: sbatch: Resource temporarily "
                             "unavailable: tried once more at the next tick\n"),
              "%s", r.text);
    liverig_close(&r);
}

Test(schedlive, a_start_refused_after_it_returned_twice_in_a_row_fails_the_job)
{
    static LiveRig r;
    plan = "OO";
    starts = 0;
    liverig_open(&r, standin_two_by_two(), &PLANNED, 1);
    SchedLiveJob j;
    liverig_run_until(&r, failed, 20000, &j);
    cr_assert_eq(starts, 2, "%s", r.text);
    cr_assert_eq(j.deaths, 0, "%s", r.text);
    cr_assert(strstr(r.text, "refused again, left failed\n"), "%s", r.text);
    liverig_close(&r);
}

/* The SSH backend's refusals, before anything connects: a job name its wrapper refuses, or a
 * placeholder the template does not know, is the same at every start (for good); an exec the
 * pool cannot open (here: the start names a host the pool does not have, as a dropped one
 * would fail) may pass next time. */
static LiveRefusal ssh_refusal(HostPool *p, const char *name, const char *template_text, int node,
                               Error *err)
{
    LiveRunSsh b = {.pool = p};
    JobHost host = {"127.0.0.1", 1, (int[]){0}};
    JobAlloc a = {.gpus = 1, .hosts = &host, .n_hosts = 1, .master_port = 29500, .resume = ""};
    const char *names[] = {"h1"};
    LiveRunSpec spec = {.name = name,
                        .job_dir = "/tmp/tunedeck-refused",
                        .command_template = template_text,
                        .alloc = &a,
                        .nodes = (int[]){node},
                        .node_names = names};
    LiveRefusal refusal = LIVERUN_REFUSED_ONCE;
    void *run = LIVERUN_SSH.start(&b, &spec, &refusal, err);
    cr_assert_null(run, "started");
    return refusal;
}

Test(schedlive, the_ssh_backend_says_which_refusals_can_pass)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .seed = 1};
    Error err;
    HostPool *p = hostpool_new(&o, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(ssh_refusal(p, "bad name", "train", 0, &err), LIVERUN_REFUSED_FOR_GOOD, "%s",
                 err.msg);
    cr_assert_eq(ssh_refusal(p, "j0", "train {nope}", 0, &err), LIVERUN_REFUSED_FOR_GOOD, "%s",
                 err.msg);
    cr_assert(strstr(err.msg, "unknown placeholder '{nope}'"), "%s", err.msg);
    cr_assert_eq(ssh_refusal(p, "j0", "train", 5, &err), LIVERUN_REFUSED_ONCE, "%s", err.msg);
    cr_assert(strstr(err.msg, "no host 5"), "%s", err.msg);
    hostpool_free(p);
}
