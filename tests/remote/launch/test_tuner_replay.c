#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/fixtures.h"

static Tuner *tuner_on(SimCluster *sim, const char *optimizer, int budget)
{
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = optimizer,
        .seed = 7,
        .budget = budget,
        .launcher = launcher_find("sim"),
        .launch = {.sim = sim, .seed = 7, .timeout_s = 60},
    };
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

/* A 6-trial run equals a 3-trial run replayed into a fresh tuner and run on to 6. */
static void resume_matches(const char *optimizer)
{
    Error err;
    SimCluster *sim = fixture_sim("B:googlenet");
    Tuner *whole = tuner_on(sim, optimizer, 6);
    cr_assert_eq(tuner_run_blocking(whole, &err), 0, "%s", err.msg);
    Tuner *first = tuner_on(sim, optimizer, 3);
    cr_assert_eq(tuner_run_blocking(first, &err), 0, "%s", err.msg);
    Tuner *resumed = tuner_on(sim, optimizer, 6);
    for (size_t i = 0; i < 3; i++) {
        const TrialRecord *r = tuner_trial(first, i);
        cr_assert_eq(tuner_replay_trial(resumed, &r->suggestion, 0, NULL, r->obs, r->suggest_ms, &err), 0,
                     "%s: trial %zu re-made another schedule", optimizer, i + 1);
    }
    cr_assert_eq(tuner_run_blocking(resumed, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(resumed), 6);
    int differing_schedules = 0;
    for (size_t i = 0; i < 6; i++) {
        const TrialRecord *a = tuner_trial(whole, i), *b = tuner_trial(resumed, i);
        cr_assert(schedule_equal(a->suggestion.schedule, b->suggestion.schedule),
                  "%s: trial %zu differs after resume", optimizer, i + 1);
        cr_assert_eq(a->obs->status, b->obs->status);
        cr_assert_float_eq(a->obs->time_s, b->obs->time_s, 1e-12, "%s: trial %zu", optimizer,
                           i + 1);
        if (i > 0)
            differing_schedules +=
                !schedule_equal(a->suggestion.schedule, tuner_trial(whole, 0)->suggestion.schedule);
    }
    if (strcmp(optimizer, "random") == 0)
        cr_assert_gt(differing_schedules, 0, "random search should vary its schedules");
    tuner_free(whole);
    tuner_free(first);
    tuner_free(resumed);
    simcluster_free(sim);
}

Test(tuner_replay, random_resumes_with_the_same_next_suggestions)
{
    resume_matches("random");
}

Test(tuner_replay, uniform_devices_resumes_with_the_same_next_suggestions)
{
    resume_matches("uniform-devices");
}

Test(tuner_replay, uniform_gpus_resumes_with_the_same_next_suggestions)
{
    resume_matches("uniform-gpus");
}

Test(tuner_replay, replay_without_resuggesting_would_repeat_the_first_schedule)
{
    /* The failure the re-suggestion prevents: observe-only replay leaves random's state at
     * the start, so its next schedule is trial 1's again. */
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    Tuner *first = tuner_on(sim, "random", 2);
    cr_assert_eq(tuner_run_blocking(first, &err), 0);
    Tuner *resumed = tuner_on(sim, "random", 2);
    const TrialRecord *r = tuner_trial(first, 0);
    cr_assert_eq(tuner_replay_trial(resumed, &r->suggestion, 1, NULL, r->obs, 0, &err), 0);
    cr_assert(tuner_trial(resumed, 0)->overridden);
    cr_assert_eq(tuner_run_blocking(resumed, &err), 0);
    cr_assert(schedule_equal(tuner_trial(resumed, 1)->suggestion.schedule, r->suggestion.schedule));
    tuner_free(first);
    tuner_free(resumed);
    simcluster_free(sim);
}

Test(tuner_replay, a_changed_optimizer_is_detected)
{
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    Tuner *first = tuner_on(sim, "uniform-devices", 1);
    cr_assert_eq(tuner_run_blocking(first, &err), 0);
    Tuner *other = tuner_on(sim, "uniform-gpus", 1);
    const TrialRecord *r = tuner_trial(first, 0);
    cr_assert_eq(tuner_replay_trial(other, &r->suggestion, 0, NULL, r->obs, 0, &err), 1);
    cr_assert(schedule_equal(tuner_trial(other, 0)->suggestion.schedule, r->suggestion.schedule),
              "the journal's schedule is kept");
    tuner_free(first);
    tuner_free(other);
    simcluster_free(sim);
}

/* tuner_stop() from the STARTED handler (the journal could not be written): nothing runs. */
static void stop_on_start(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)rec;
    if (ev == TUNER_EVENT_STARTED)
        tuner_stop(*(Tuner **)ud, "journal: write failed");
}

Test(tuner_replay, stop_from_the_start_event_launches_nothing)
{
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    char marker[] = "/tmp/td-stop-XXXXXX";
    int fd = mkstemp(marker);
    close(fd);
    unlink(marker);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    Tuner *t = NULL;
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = "random",
        .budget = 3,
        .launcher = launcher_find("local"),
        .launch = {.command = cmd, .timeout_s = 10},
        .on_event = stop_on_start,
        .userdata = &t,
    };
    t = tuner_new(&cfg, &err);
    cr_assert_eq(tuner_run_blocking(t, &err), -1);
    cr_assert(strstr(err.msg, "journal: write failed"), "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 1);
    cr_assert_eq(tuner_trial(t, 0)->obs->status, TRIAL_CANCELLED);
    cr_assert(strstr(tuner_trial(t, 0)->obs->reason, "not launched"));
    cr_assert_neq(access(marker, F_OK), 0, "the trial command ran");
    tuner_free(t);
    simcluster_free(sim);
}

static void stop_after_first(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    if (ev == TUNER_EVENT_FINISHED && rec->trial == 1)
        tuner_stop(*(Tuner **)ud, "journal: write failed after trial 1");
}

Test(tuner_replay, stop_from_the_finished_event_keeps_the_outcome_and_starts_nothing_more)
{
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    Tuner *t = NULL;
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = "random",
        .budget = 5,
        .launcher = launcher_find("sim"),
        .launch = {.sim = sim, .seed = 1},
        .on_event = stop_after_first,
        .userdata = &t,
    };
    t = tuner_new(&cfg, &err);
    cr_assert_eq(tuner_run_blocking(t, &err), -1);
    cr_assert_eq(tuner_n_trials(t), 1);
    /* the first trial is a probe (core/opt/prune.h): its outcome is kept as it came */
    cr_assert_eq(tuner_trial(t, 0)->obs->status, TRIAL_PRUNED, "%s", tuner_trial(t, 0)->obs->reason);
    cr_assert_str_eq(tuner_last_error(t), "journal: write failed after trial 1");
    cr_assert(tuner_done(t));
    tuner_free(t);
    simcluster_free(sim);
}

/* tuner_best is kept as outcomes come (it was a scan of every trial, at each iteration of a
 * trial and at every frame): the fastest ok trial, the first of a tie, never a faster trial
 * that failed or was pruned, and the same after the tuner's array of trials grew. */
Test(tuner_replay, the_best_is_the_first_fastest_ok_trial)
{
    Error err;
    SimCluster *sim = fixture_sim("B:googlenet");
    Tuner *t = tuner_on(sim, "random", 100);
    cr_assert_null(tuner_best(t), "no trial yet");
    const double times[] = {5, 3, 4, 3, 1, 0.5, 3, 2, 2};
    const TrialStatus status[] = {TRIAL_OK,     TRIAL_OK, TRIAL_OK,     TRIAL_OK, TRIAL_FAILED,
                                  TRIAL_PRUNED, TRIAL_OK, TRIAL_OK,     TRIAL_OK};
    const int best_after[] = {1, 2, 2, 2, 2, 2, 2, 8, 8}; /* trial numbers */
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        Suggestion sg;
        memset(&sg, 0, sizeof sg);
        sg.schedule = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
        Observation *o = observation_new(sg.schedule);
        o->status = status[i];
        o->time_s = times[i];
        tuner_replay(t, &sg, o, 0);
        observation_free(o);
        schedule_free(sg.schedule);
        const TrialRecord *b = tuner_best(t);
        cr_assert_not_null(b);
        cr_assert_eq(b->trial, best_after[i], "after trial %zu: best #%d", i + 1, b->trial);
    }
    /* past the first 32 (the array grows): still the first 2 s trial */
    for (int i = 0; i < 40; i++) {
        Suggestion sg;
        memset(&sg, 0, sizeof sg);
        sg.schedule = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
        Observation *o = observation_new(sg.schedule);
        o->status = TRIAL_OK;
        o->time_s = 2;
        tuner_replay(t, &sg, o, 0);
        observation_free(o);
        schedule_free(sg.schedule);
    }
    cr_assert_eq(tuner_best(t)->trial, 8);
    cr_assert_float_eq(tuner_best(t)->obs->time_s, 2, 1e-12);
    (void)err;
    tuner_free(t);
    simcluster_free(sim);
}
