/* The operator's overrides queue in order: each runs as the next trial, none takes another's
 * place, a full queue says so, a dropped one never runs, a resume restores the queue's ids. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/fixtures.h"
#include "tests/support/low_memory.h"
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

TestSuite(tuner_queue, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

typedef struct {
    int queued, dropped;
    int ids[8]; /* the queued and dropped events' override ids, in order */
    size_t n_ids;
} Seen;

static void on_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    Seen *s = ud;
    if (ev != TUNER_EVENT_QUEUED && ev != TUNER_EVENT_DROPPED)
        return;
    cr_assert_eq(rec->trial, 0, "a queue event's record is no trial");
    cr_assert_not_null(rec->suggestion.schedule, "the journal writes the schedule queued");
    s->queued += ev == TUNER_EVENT_QUEUED;
    s->dropped += ev == TUNER_EVENT_DROPPED;
    if (s->n_ids < 8)
        s->ids[s->n_ids++] = ev == TUNER_EVENT_QUEUED ? rec->override_id : -rec->override_id;
}

static Tuner *make(int budget, Seen *seen)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "uniform-gpus",
                       .seed = 3,
                       .budget = budget,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .on_event = on_event,
                       .userdata = seen};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

/* n valid schedules, each different from the others (a random optimizer's suggestions). */
static void schedules(Schedule **out, size_t n)
{
    Error err;
    Optimizer *o = optimizer_new("random", simcluster_cluster(sim), simcluster_job(sim), 5, &err);
    cr_assert_not_null(o, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &err), 0, "%s", err.msg);
        out[i] = schedule_copy(sg.schedule);
        suggestion_clear(&sg);
        for (size_t j = 0; j < i; j++)
            cr_assert_not(schedule_equal(out[i], out[j]), "schedules %zu and %zu alike", j, i);
    }
    optimizer_free(o);
}

static void free_all(Schedule **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        schedule_free(s[i]);
}

/* Regression: a second override took the first one's place, so an operator who paused and
 * planned two experiments got only the second. */
Test(tuner_queue, two_overrides_run_in_the_order_queued_before_the_optimizer_resumes)
{
    Seen seen = {0};
    Tuner *t = make(4, &seen);
    Schedule *s[2];
    schedules(s, 2);
    Error err;
    tuner_set_paused(t, 1);
    cr_assert_eq(tuner_override(t, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override(t, s[1], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_overrides(t), 2, "both wait");
    cr_assert_eq(tuner_override_trial(t, 0), 1);
    cr_assert_eq(tuner_override_trial(t, 1), 2);
    cr_assert(schedule_equal(tuner_override_at(t, 0), s[0]), "the first queued runs first");
    tuner_set_paused(t, 0);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 4);
    for (int i = 0; i < 2; i++) {
        const TrialRecord *r = tuner_trial(t, (size_t)i);
        cr_assert(r->overridden, "trial %d is the operator's", i + 1);
        cr_assert_eq(r->override_id, i + 1);
        cr_assert(schedule_equal(r->suggestion.schedule, s[i]), "trial %d ran override %d", i + 1,
                  i + 1);
        cr_assert_eq(r->obs->status == TRIAL_OK || r->obs->status == TRIAL_PRUNED, 1, "%s",
                     r->obs->reason);
    }
    for (size_t i = 2; i < 4; i++)
        cr_assert_not(tuner_trial(t, i)->overridden, "then the optimizer's own");
    cr_assert_eq(tuner_overrides(t), 0);
    cr_assert_eq(seen.queued, 2);
    tuner_free(t);
    free_all(s, 2);
}

Test(tuner_queue, a_full_queue_refuses_one_more_and_says_why)
{
    Seen seen = {0};
    Tuner *t = make(2, &seen);
    Schedule *s[1];
    schedules(s, 1);
    Error err;
    for (int i = 0; i < OVERRIDEQUEUE_MAX; i++)
        cr_assert_eq(tuner_override(t, s[0], &err), 0, "%d: %s", i, err.msg);
    cr_assert_eq(tuner_override(t, s[0], &err), -1);
    cr_assert_not_null(strstr(err.msg, "the override queue is full (16 wait"), "%s", err.msg);
    cr_assert_eq(tuner_overrides(t), OVERRIDEQUEUE_MAX, "the queued ones are all kept");
    cr_assert_eq(seen.queued, OVERRIDEQUEUE_MAX, "the refused one is not journaled");
    tuner_free(t);
    free_all(s, 1);
}

Test(tuner_queue, an_invalid_override_is_refused_and_not_queued)
{
    Seen seen = {0};
    Tuner *t = make(2, &seen);
    Schedule *s[1];
    schedules(s, 1);
    Schedule *bad = schedule_copy(s[0]);
    memset(bad->ps, 0, bad->cluster->n_machines);
    Error err;
    cr_assert_eq(tuner_override(t, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override(t, bad, &err), -1);
    cr_assert_not_null(strstr(err.msg, "parameter server"), "%s", err.msg);
    cr_assert_eq(tuner_overrides(t), 1, "the valid one stays, alone");
    schedule_free(bad);
    tuner_free(t);
    free_all(s, 1);
}

Test(tuner_queue, a_dropped_override_never_runs_and_the_rest_keep_their_order)
{
    Seen seen = {0};
    Tuner *t = make(3, &seen);
    Schedule *s[3];
    schedules(s, 3);
    Error err;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tuner_override(t, s[i], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override_drop(t, 1), 0);
    cr_assert_eq(tuner_override_drop(t, 5), -1, "no such override");
    cr_assert_eq(tuner_overrides(t), 2);
    cr_assert_eq(tuner_override_id(t, 0), 1);
    cr_assert_eq(tuner_override_id(t, 1), 3, "ids are the override's, not its place");
    cr_assert_eq(tuner_override_trial(t, 1), 2, "it moved up to the second trial");
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert(schedule_equal(tuner_trial(t, 0)->suggestion.schedule, s[0]));
    cr_assert(schedule_equal(tuner_trial(t, 1)->suggestion.schedule, s[2]));
    cr_assert_eq(tuner_trial(t, 1)->override_id, 3);
    cr_assert_not(tuner_trial(t, 2)->overridden);
    int want[] = {1, 2, 3, -2};
    cr_assert_eq(seen.n_ids, 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(seen.ids[i], want[i], "event %zu: %d", i, seen.ids[i]);
    tuner_free(t);
    free_all(s, 3);
}

/* A resume puts back what the journal shows queued under the same ids, silently (it is in
 * the journal), and new overrides take ids never used in that journal. */
Test(tuner_queue, restored_overrides_keep_their_ids_and_new_ones_follow_the_journals)
{
    Seen seen = {0};
    Tuner *t = make(3, &seen);
    Schedule *s[2];
    schedules(s, 2);
    Error err;
    tuner_override_ids_from(t, 7);
    cr_assert_eq(tuner_override_restore(t, 6, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(seen.queued, 0, "a restore is not journaled again");
    cr_assert_eq(tuner_override(t, s[1], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override_id(t, 0), 6);
    cr_assert_eq(tuner_override_id(t, 1), 8);
    cr_assert_eq(tuner_override_restore(t, 0, s[0], &err), -1);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_trial(t, 0)->override_id, 6);
    cr_assert_eq(tuner_trial(t, 1)->override_id, 8);
    tuner_free(t);
    free_all(s, 2);
}

/* Regression: an override made after the stop rule ended the session never ran (the tuner
 * stayed stopped while the budget was not spent), though the message promised its trial. */
Test(tuner_queue, an_override_runs_after_the_stop_rule_ended_the_session_and_the_rule_stops_again)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "bespoke",
                       .seed = 3,
                       .budget = 40,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .stop_when_converged = 1};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    size_t n = tuner_n_trials(t);
    cr_assert_lt(n, 40);
    cr_assert_not_null(tuner_converged(t), "the rule stopped it");
    Schedule *mine = NULL;
    simcluster_best_known(sim, &mine);
    cr_assert_eq(tuner_override(t, mine, &err), 0, "%s", err.msg);
    cr_assert_not(tuner_done(t), "the override is still to run");
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_gt(tuner_n_trials(t), n, "the override ran");
    cr_assert(tuner_trial(t, n)->overridden, "as the next trial");
    cr_assert(schedule_equal(tuner_trial(t, n)->suggestion.schedule, mine));
    /* the rule decides again with the override's measurement (the best it improves may
     * start a new streak), and stops the optimizer's trials again before the budget */
    cr_assert_lt(tuner_n_trials(t), 40);
    cr_assert_not_null(tuner_converged(t), "stopped by the rule again");
    schedule_free(mine);
    tuner_free(t);
}

/* Takes every byte the address space has left, down to the smallest block, so that the next
 * allocation fails (the child exits with what it took). */
static void *volatile hog;

static void exhaust_memory(void)
{
    for (size_t size = 1 << 20; size >= 16; size /= 2)
        for (void **p; (p = malloc(size));) {
            *p = hog;
            hog = p;
        }
}

static int begin_without_memory(void *ud)
{
    Tuner *t = ud;
    exhaust_memory();
    tuner_set_paused(t, 0);
    tuner_step(t, NULL, 0, 0); /* begins trial 1: wrote its record through NULL */
    if (tuner_n_trials(t) != 0)
        return 20;
    if (tuner_overrides(t) != 1)
        return 21; /* taken from the queue and lost */
    if (tuner_running(t))
        return 22;
    const char *why = tuner_last_error(t);
    return why && strstr(why, "out of memory") ? 0 : 23;
}

/* Regression: a trial's override was taken from the queue before its record was made; without
 * memory for the record the next line wrote through NULL (and the override was lost). It
 * stays queued, and the session stops with the reason. */
Test(tuner_queue, no_memory_for_the_trials_record_leaves_the_override_queued)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    Seen seen = {0};
    Tuner *t = make(2, &seen);
    Schedule *s[1];
    schedules(s, 1);
    Error err;
    tuner_set_paused(t, 1);
    cr_assert_eq(tuner_override(t, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(low_memory_run(1 << 20, begin_without_memory, t), 0);
    tuner_free(t);
    free_all(s, 1);
}

typedef struct {
    Tuner *t;
    Suggestion sg;
    Observation *o;
} Replay;

static int replay_without_memory(void *ud)
{
    Replay *r = ud;
    Error err;
    err.msg[0] = '\0';
    exhaust_memory();
    /* an override's trial: replayed without suggest(), straight to its record */
    if (tuner_replay_trial(r->t, &r->sg, 1, NULL, r->o, 0, &err) != -1)
        return 20;
    if (tuner_n_trials(r->t) != 0)
        return 21;
    return strstr(err.msg, "out of memory") ? 0 : 22;
}

/* Regression: a resume's replayed trial wrote its record through NULL when memory ran out;
 * the resume now fails with the reason. */
Test(tuner_queue, no_memory_for_a_replayed_trials_record_fails_the_replay)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    Seen seen = {0};
    Replay r = {.t = make(2, &seen)};
    Schedule *s[1];
    schedules(s, 1);
    r.sg.schedule = s[0];
    r.o = observation_new(s[0]);
    r.o->status = TRIAL_OK;
    r.o->time_s = 1.0;
    cr_assert_eq(low_memory_run(1 << 20, replay_without_memory, &r), 0);
    observation_free(r.o);
    tuner_free(r.t);
    free_all(s, 1);
}

static int replay_copies_without_memory(void *ud)
{
    Replay *r = ud;
    Error err;
    err.msg[0] = '\0';
    exhaust_memory();
    /* room for the record is left from trial 1 (records grow 32 at a time): what fails is
     * the copy of the trial's schedule and outcome it keeps */
    if (tuner_replay_trial(r->t, &r->sg, 1, NULL, r->o, 0, &err) != -1)
        return 20;
    if (tuner_n_trials(r->t) != 1)
        return 21; /* a record kept with no schedule or no outcome */
    return strstr(err.msg, "out of memory for trial 2's record") ? 0 : 22;
}

/* Regression: past its record's check, a replayed trial's copies of its schedule and outcome
 * went unchecked: without memory the record kept a NULL schedule and the optimizer observed
 * NULL (the child crashed). The replay now fails with the reason and keeps no record. */
Test(tuner_queue, no_memory_for_a_replayed_trials_copies_fails_the_replay)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    Seen seen = {0};
    Replay r = {.t = make(3, &seen)};
    Schedule *s[1];
    schedules(s, 1);
    r.sg.schedule = s[0];
    r.o = observation_new(s[0]);
    r.o->status = TRIAL_OK;
    r.o->time_s = 1.0;
    Error err;
    cr_assert_eq(tuner_replay_trial(r.t, &r.sg, 1, NULL, r.o, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(low_memory_run(1 << 20, replay_copies_without_memory, &r), 0);
    observation_free(r.o);
    tuner_free(r.t);
    free_all(s, 1);
}

/* The process's threads, as the kernel lists them. */
static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* How long the suggestion's thread is given to exit once it has written its wake byte: it
 * has only to return, so this is far past what it takes, and only ends a wait that would not. */
enum { THREAD_EXIT_WAIT_S = 5 };

/* The suggestion is made on its thread with memory to spare; then none is left for the
 * record it needs. */
static int accept_without_memory(void *ud)
{
    Tuner *t = ud;
    tuner_step(t, NULL, 0, 0); /* the suggestion's thread starts */
    struct pollfd fds[4];
    int64_t deadline_ms = -1;
    size_t n = tuner_pollfds(t, fds, 4, &deadline_ms);
    if (!tuner_running(t) || n != 1)
        return 20; /* no thread: the suggestion was made in line */
    if (poll(fds, n, -1) != 1)
        return 21;
    /* the thread's exit gives its cache of freed memory back: once it is gone, or the record
     * could be made from that. Bounded: a thread that never leaves is this test's failure
     * (its own code), not a hang until the suite's timeout. */
    double give_up_s = clock_now_s() + THREAD_EXIT_WAIT_S;
    while (threads() > 1) {
        if (clock_now_s() > give_up_s)
            return 25;
        sched_yield();
    }
    exhaust_memory();
    tuner_step(t, fds, n, 0); /* the suggestion is in: its record is made */
    if (tuner_n_trials(t) != 0)
        return 22;
    if (tuner_running(t) || !tuner_done(t))
        return 23;
    const char *why = tuner_last_error(t);
    return why && strstr(why, "out of memory for trial 1's record") ? 0 : 24;
}

/* The optimizer's suggestion without memory for its trial's record stops the session with the
 * reason (as an override's does), the suggestion freed, nothing written through NULL. */
Test(tuner_queue, no_memory_for_a_suggestions_record_stops_the_session)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "uniform-gpus",
                       .seed = 3,
                       .budget = 2,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .async_suggest = 1};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    /* room for the thread's stack: only the record is to go without */
    cr_assert_eq(low_memory_run(64 << 20, accept_without_memory, t), 0);
    tuner_free(t);
}

/* The budget raised so that queued overrides run falls back as they are dropped, wherever in
 * the queue, to what the rest need; an override that ran keeps the trial it was raised for. */
Test(tuner_queue, a_drop_gives_back_only_the_raise_the_queue_no_longer_needs)
{
    Seen seen = {0};
    Tuner *t = make(1, &seen);
    Schedule *s[3];
    schedules(s, 3);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg); /* the optimizer's trial 1 */
    cr_assert_eq(tuner_override(t, s[0], &err), 0, "%s", err.msg);
    tuner_override_fit_budget(t);
    cr_assert_eq(tuner_budget(t), 2, "raised for the override to run as trial 2");
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert(tuner_trial(t, 1)->overridden);
    for (int i = 1; i < 3; i++)
        cr_assert_eq(tuner_override(t, s[i], &err), 0, "%s", err.msg);
    tuner_override_fit_budget(t);
    cr_assert_eq(tuner_budget(t), 4);
    cr_assert_eq(tuner_override_drop(t, 0), 0);
    cr_assert_eq(tuner_budget(t), 3, "the one left runs as trial 3");
    cr_assert_eq(tuner_override_drop(t, 0), 0);
    cr_assert_eq(tuner_budget(t), 2, "trial 2 ran on its raise: that one stays");
    cr_assert(tuner_done(t));
    tuner_free(t);
    free_all(s, 3);
}

/* Every machine refused for good once the first trial is over (the session's machine_usable,
 * here on the simulator): what a queued override meets when its host is refused after it was
 * queued. */
typedef struct {
    int refused, dropped_by_tuner;
    char dropped_why[ERROR_MSG_MAX + 128];
} Refusing;

static void refuse_after_first(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    Refusing *r = ud;
    r->refused |= ev == TUNER_EVENT_FINISHED;
    if (ev == TUNER_EVENT_DROPPED && rec->dropped_why) {
        r->dropped_by_tuner++;
        snprintf(r->dropped_why, sizeof r->dropped_why, "%s", rec->dropped_why);
    }
}

static int usable_until_refused(void *ud, size_t machine, char *why, size_t cap)
{
    const Refusing *r = ud;
    (void)machine;
    snprintf(why, cap, "its host key refused");
    return !r->refused;
}

/* Regression: the override ran as given and failed unreachable, a trial spent for nothing. */
Test(tuner_queue, an_override_whose_host_was_refused_since_it_was_queued_is_dropped_unrun)
{
    Refusing r = {0};
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "uniform-gpus",
                       .seed = 3,
                       .budget = 1,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .on_event = refuse_after_first,
                       .machine_usable = usable_until_refused,
                       .userdata = &r};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    Schedule *s[2];
    schedules(s, 2);
    cr_assert_eq(tuner_override_fitted(t, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override_fitted(t, s[1], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_budget(t), 2, "raised for the second to run as trial 2");
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 1, "the second is not run");
    cr_assert_eq(tuner_overrides(t), 0);
    cr_assert_eq(r.dropped_by_tuner, 1);
    /* named by the first machine it uses, which s[1] decides */
    cr_assert(strstr(r.dropped_why, "override queued as trial 2 not launched, dropped: "),
              "%s", r.dropped_why);
    cr_assert(strstr(r.dropped_why, " is left out of the trials, its host refused for good: its "
                                    "host key refused"),
              "%s", r.dropped_why);
    cr_assert_eq(tuner_budget(t), 1, "its raise given back");
    /* given now, one is refused before it is queued, with the same words */
    cr_assert_eq(tuner_override(t, s[0], &err), -1);
    cr_assert(strstr(err.msg, " is left out of the trials, its host refused for good: its host "
                              "key refused"),
              "%s", err.msg);
    cr_assert_eq(tuner_overrides(t), 0);
    tuner_free(t);
    free_all(s, 2);
}
