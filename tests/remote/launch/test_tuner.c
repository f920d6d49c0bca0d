/* The tuning session on the sim launcher: budget, events, override, async suggestions. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"

static SimCluster *sim;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
}

static void teardown(void)
{
    simcluster_free(sim);
}

TestSuite(tuner, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

typedef struct {
    int suggested, started, finished;
    char order[64];
} Seen;

static void on_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    Seen *s = ud;
    (void)rec;
    if (ev == TUNER_EVENT_QUEUED || ev == TUNER_EVENT_DROPPED || ev == TUNER_EVENT_LAUNCHED)
        return; /* the queue's: test_tuner_queue.c; LAUNCHED: test_session_overrides.c */
    char c = ev == TUNER_EVENT_SUGGESTED ? 's' : ev == TUNER_EVENT_STARTED ? 'b' : 'f';
    s->suggested += ev == TUNER_EVENT_SUGGESTED;
    s->started += ev == TUNER_EVENT_STARTED;
    s->finished += ev == TUNER_EVENT_FINISHED;
    size_t n = strlen(s->order);
    if (n + 1 < sizeof s->order)
        s->order[n] = c;
}

static Tuner *make(const char *optimizer, int budget, int async, Seen *seen)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = optimizer,
                       .seed = 3,
                       .budget = budget,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .async_suggest = async,
                       .on_event = on_event,
                       .userdata = seen};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

Test(tuner, runs_the_budget_with_events_in_order)
{
    Seen seen = {0};
    Tuner *t = make("random", 4, 0, &seen);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert(tuner_done(t));
    cr_assert_eq(tuner_n_trials(t), 4);
    cr_assert_str_eq(seen.order, "sbfsbfsbfsbf");
    const TrialRecord *best = tuner_best(t);
    cr_assert_not_null(best);
    for (size_t i = 0; i < 4; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        cr_assert_eq(r->trial, (int)i + 1);
        /* nothing measured before it and trials to follow: the first trial is a probe */
        cr_assert_eq(r->obs->status, i == 0 ? TRIAL_PRUNED : TRIAL_OK, "trial %zu: %s", i + 1,
                     r->obs->reason);
        cr_assert(best->obs->time_s <= r->obs->time_s || i == 0);
    }
    /* more budget continues the same session */
    tuner_set_budget(t, 6);
    cr_assert_eq(tuner_run_blocking(t, &err), 0);
    cr_assert_eq(tuner_n_trials(t), 6);
    tuner_free(t);
}

Test(tuner, override_runs_the_operators_schedule_next)
{
    Seen seen = {0};
    Tuner *t = make("uniform-gpus", 2, 0, &seen);
    Schedule *mine = NULL;
    simcluster_best_known(sim, &mine);
    Error err;
    cr_assert_eq(tuner_override(t, mine, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    const TrialRecord *first = tuner_trial(t, 0), *second = tuner_trial(t, 1);
    cr_assert(first->overridden);
    cr_assert(schedule_equal(first->suggestion.schedule, mine));
    cr_assert_not(second->overridden);
    cr_assert(first->obs->time_s < second->obs->time_s, "the best schedule beats uniform GPUs");
    /* an invalid override is refused and explained */
    Schedule *bad = schedule_copy(mine);
    memset(bad->ps, 0, bad->cluster->n_machines);
    cr_assert_eq(tuner_override(t, bad, &err), -1);
    cr_assert(strstr(err.msg, "parameter server"), "%s", err.msg);
    schedule_free(bad);
    schedule_free(mine);
    tuner_free(t);
}

/* Regression: one override waited at a time, and a second made while paused took the first
 * one's place, so an operator who planned two experiments got only the second. */
Test(tuner, a_second_override_runs_after_the_first_not_in_its_place)
{
    Seen seen = {0};
    Tuner *t = make("uniform-gpus", 3, 0, &seen);
    Schedule *mine = NULL;
    simcluster_best_known(sim, &mine);
    Error err;
    Optimizer *o = optimizer_new("random", simcluster_cluster(sim), simcluster_job(sim), 5, &err);
    cr_assert_not_null(o, "%s", err.msg);
    Suggestion other;
    cr_assert_eq(optimizer_suggest(o, &other, &err), 0, "%s", err.msg);
    cr_assert_not(schedule_equal(mine, other.schedule));
    tuner_set_paused(t, 1);
    cr_assert_eq(tuner_override(t, mine, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override(t, other.schedule, &err), 0, "%s", err.msg);
    tuner_set_paused(t, 0);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 3);
    cr_assert(tuner_trial(t, 0)->overridden && tuner_trial(t, 1)->overridden);
    cr_assert(schedule_equal(tuner_trial(t, 0)->suggestion.schedule, mine),
              "the first override queued runs first");
    cr_assert(schedule_equal(tuner_trial(t, 1)->suggestion.schedule, other.schedule),
              "the second runs next");
    cr_assert_not(tuner_trial(t, 2)->overridden);
    suggestion_clear(&other);
    optimizer_free(o);
    schedule_free(mine);
    tuner_free(t);
}

Test(tuner, async_suggestions_drive_through_the_poll_loop)
{
    Seen seen = {0};
    Tuner *t = make("random", 3, 1, &seen);
    int64_t give_up = clock_now_ms() + 10000;
    while (!tuner_done(t) && clock_now_ms() < give_up) {
        struct pollfd fds[64];
        int64_t deadline = -1;
        size_t n = tuner_pollfds(t, fds, 64, &deadline);
        int timeout = deadline < 0 ? 1000 : (int)fmax(0, (double)(deadline - clock_now_ms()));
        int rc = poll(fds, n, timeout);
        cr_assert(rc >= 0 || errno == EINTR);
        tuner_step(t, fds, rc > 0 ? n : 0, clock_now_ms());
    }
    cr_assert(tuner_done(t), "the session stalled");
    cr_assert_eq(tuner_n_trials(t), 3);
    cr_assert_eq(seen.finished, 3);
    tuner_free(t);
}

Test(tuner, unknown_optimizer_is_refused)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim), .job = simcluster_job(sim),
                       .optimizer = "oracle", .budget = 1, .launcher = launcher_find("sim"),
                       .launch = {.sim = sim}};
    Error err = {0};
    cr_assert_null(tuner_new(&cfg, &err));
    cr_assert(strstr(err.msg, "oracle"), "%s", err.msg);
}

/* The hook refuses trial 2 (a leftover it could not stop): the session stops there with the
 * hook's reason; trial 2 is cancelled, never ran, and no later trial is asked for. */
static int refuse_trial_2(void *ud, const Schedule *s, char *why, size_t cap)
{
    int *asked = ud;
    asked[s->trial - 1]++;
    if (s->trial != 2)
        return 0;
    snprintf(why, cap, "trial 1's leftover process group 7 on h2 still runs");
    return -1;
}

static void count_only(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)ud, (void)ev, (void)rec;
}

/* A 3-trial random session on the simulator whose launches go through `hook`. */
static Tuner *hooked_tuner(TunerBeforeLaunchFn hook, void *userdata)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 3,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .no_prune = 1,
                       .on_event = count_only,
                       .before_launch = hook,
                       .userdata = userdata};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

Test(tuner, the_before_launch_hook_refusing_a_trial_stops_the_session_with_its_reason)
{
    int asked[3] = {0};
    Tuner *t = hooked_tuner(refuse_trial_2, asked);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), -1);
    cr_assert_str_eq(err.msg, "trial 1's leftover process group 7 on h2 still runs");
    cr_assert_str_eq(tuner_last_error(t), err.msg);
    cr_assert(tuner_done(t));
    cr_assert_eq(tuner_n_trials(t), 2);
    cr_assert(asked[0] == 1 && asked[1] == 1 && asked[2] == 0);
    const Observation *o = tuner_trial(t, 1)->obs;
    cr_assert_eq(o->status, TRIAL_CANCELLED); /* says nothing about its schedule */
    cr_assert_str_eq(o->reason, "not launched: trial 1's leftover process group 7 on h2 still runs");
    cr_assert_eq(o->iterations_seen, 0);
    cr_assert_eq(tuner_trial(t, 0)->obs->status, TRIAL_OK, "%s", tuner_trial(t, 0)->obs->reason);
    tuner_free(t);
}

/* The hook says "not yet" (1) for trial 2 a few times, as the session does while its hosts'
 * pool stops a leftover group: the trial waits (started, not launched, the tuner running),
 * then runs once the hook lets it go; a tuner_stop asked meanwhile cancels it instead. */
typedef struct {
    Tuner *t;
    int asked[3];
    int waits;         /* how many "not yet" trial 2 gets */
    int stop_at_wait;  /* > 0: tuner_stop at that wait */
    int running_seen;  /* tuner_running while waiting */
    int finished_seen; /* trials finished when trial 2 was first asked */
} Preparing;

static int hold_trial_2(void *ud, const Schedule *s, char *why, size_t cap)
{
    Preparing *p = ud;
    (void)why, (void)cap;
    int n = ++p->asked[s->trial - 1];
    if (s->trial != 2)
        return 0;
    if (n == 1)
        p->finished_seen = tuner_trial(p->t, 0)->obs != NULL;
    if (n <= p->waits) {
        p->running_seen += tuner_running(p->t) && !tuner_done(p->t);
        if (n == p->stop_at_wait)
            tuner_stop(p->t, "the operator quit");
        return 1;
    }
    return 0;
}

static Tuner *make_preparing(Preparing *p)
{
    return p->t = hooked_tuner(hold_trial_2, p);
}

Test(tuner, a_hook_saying_not_yet_holds_the_trial_until_it_lets_go)
{
    Preparing p = {.waits = 4};
    Tuner *t = make_preparing(&p);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(p.asked[0], 1);
    cr_assert_eq(p.asked[1], 5); /* four "not yet", then the launch */
    cr_assert_eq(p.asked[2], 1);
    cr_assert_eq(p.running_seen, 4);
    cr_assert(p.finished_seen);
    cr_assert_eq(tuner_n_trials(t), 3);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(tuner_trial(t, i)->obs->status, TRIAL_OK, "trial %zu: %s", i + 1,
                     tuner_trial(t, i)->obs->reason);
    tuner_free(t);
}

Test(tuner, a_stop_while_the_hook_holds_the_trial_cancels_it_once_let_go)
{
    Preparing p = {.waits = 3, .stop_at_wait = 2};
    Tuner *t = make_preparing(&p);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), -1);
    cr_assert_str_eq(err.msg, "the operator quit");
    cr_assert_eq(p.asked[1], 4); /* the hook still decides when the wait ends */
    cr_assert_eq(p.asked[2], 0);
    cr_assert_eq(tuner_n_trials(t), 2);
    const Observation *o = tuner_trial(t, 1)->obs;
    cr_assert_eq(o->status, TRIAL_CANCELLED);
    cr_assert_str_eq(o->reason, "not launched: the operator quit");
    cr_assert_eq(o->iterations_seen, 0);
    tuner_free(t);
}

/* The session cannot reach machine 0 (its host key refused): the optimizer knows nothing of
 * hosts, so the tuner moves each of its schedules off that machine, predicted again. */
static int all_but_machine_0(void *ud, size_t machine, char *why, size_t cap)
{
    int *asked = ud;
    (*asked)++;
    snprintf(why, cap, "its host key refused");
    return machine != 0;
}

static Tuner *usable_tuner(TunerUsableFn usable, int *asked)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "bespoke",
                       .seed = 3,
                       .budget = 4,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .no_prune = 1,
                       .on_event = count_only,
                       .machine_usable = usable,
                       .userdata = asked};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

Test(tuner, schedules_are_moved_off_a_machine_the_session_cannot_reach_and_replay_as_they_ran)
{
    int asked = 0;
    Tuner *t = usable_tuner(all_but_machine_0, &asked);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 4);
    cr_assert_gt(asked, 0);
    for (size_t i = 0; i < 4; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        const Schedule *s = r->suggestion.schedule;
        cr_assert_not(s->worker[0] || s->ps[0], "trial %zu uses machine 0", i + 1);
        cr_assert_eq(schedule_validate(s, &err), 0, "trial %zu: %s", i + 1, err.msg);
        cr_assert(r->suggestion.has_prediction, "trial %zu: predicted as it runs", i + 1);
        cr_assert_eq(r->obs->status, TRIAL_OK, "%s", r->obs->reason);
    }
    /* A resume re-makes the optimizer's suggestions: one that ran moved off the machine is
     * the journal's, not "another schedule than the journal records". */
    Tuner *again = usable_tuner(NULL, &asked);
    for (size_t i = 0; i < 4; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        cr_assert_eq(tuner_replay_trial(again, &r->suggestion, 0, r->left_out, r->obs, 1, &err), 0,
                     "trial %zu", i + 1);
        cr_assert(schedule_equal(tuner_trial(again, i)->suggestion.schedule,
                                 r->suggestion.schedule));
    }
    tuner_free(again);
    tuner_free(t);
}

/* before_launch's verdict filling all the room it is given (every group a stop left running,
 * then how to go on): "not launched: " before it in the trial's reason cut its last words. */
static int refuse_at_length(void *ud, const Schedule *s, char *why, size_t cap)
{
    (void)ud, (void)s;
    memset(why, 'x', cap - 1);
    memcpy(why + cap - 1 - strlen("then --resume ID"), "then --resume ID",
           strlen("then --resume ID"));
    why[cap - 1] = 0;
    return -1;
}

Test(tuner, a_refusal_before_launch_as_long_as_its_room_keeps_its_last_words)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 2,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .before_launch = refuse_at_length};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    tuner_run_blocking(t, &err); /* stopped by the refusal */
    cr_assert_eq(tuner_n_trials(t), 1);
    const Observation *o = tuner_trial(t, 0)->obs;
    cr_assert_eq(o->status, TRIAL_CANCELLED);
    cr_assert_eq(strncmp(o->reason, "not launched: x", 15), 0, "%s", o->reason);
    size_t n = strlen(o->reason);
    cr_assert(n >= 16 && strcmp(o->reason + n - 16, "then --resume ID") == 0, "%s", o->reason);
    tuner_free(t);
}
