/* tune's words for a trial its signal left without an outcome (cmd/tune_interrupted.c), from
 * the records of a real tuner on the simulator: one halted while before_launch held it (a
 * leftover group being stopped) never ran, and is not said to have. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>

#include "cmd/tune_interrupted.h"
#include "core/base/clock.h"
#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"

TestSuite(tune_interrupted, .timeout = TEST_TIMEOUT_S);

/* Lets trial 1 go; holds trial 2, as the session does while its hosts stop a leftover group. */
static int hold_trial_2(void *ud, const Schedule *s, char *why, size_t cap)
{
    int *held = ud;
    (void)why, (void)cap;
    if (s->trial != 2)
        return 0;
    ++*held;
    return 1;
}

static void no_events(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)ud, (void)ev, (void)rec;
}

/* Regression: tune said "stopped by SIGINT while it ran" of a trial halted while before_launch
 * held it, where the journal and the resume say it was about to start. */
Test(tune_interrupted, a_trial_halted_before_it_launched_is_not_said_to_have_run)
{
    SimCluster *sim = fixture_sim("B:googlenet");
    int held = 0;
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 3,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .no_prune = 1,
                       .on_event = no_events,
                       .before_launch = hold_trial_2,
                       .userdata = &held};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    /* a guard against a stalled loop, not a measure: trial 2 is held in a few steps */
    int64_t give_up = clock_now_ms() + 10000;
    while (!held && clock_now_ms() < give_up) {
        struct pollfd fds[64];
        int64_t deadline = -1;
        size_t n = tuner_pollfds(t, fds, 64, &deadline);
        int64_t now = clock_now_ms();
        int rc = poll(fds, n, deadline < 0 ? 1000 : deadline > now ? (int)(deadline - now) : 0);
        cr_assert(rc >= 0 || errno == EINTR);
        tuner_step(t, fds, rc > 0 ? n : 0, clock_now_ms());
    }
    cr_assert(held, "trial 2 was never held");
    tuner_halt(t); /* tune's SIGINT */
    cr_assert_eq(tuner_n_trials(t), 2);

    const TrialRecord *first = tuner_trial(t, 0), *second = tuner_trial(t, 1);
    cr_assert(first->launched);
    cr_assert_null(second->obs);
    cr_assert_not(second->launched);
    char why[256];
    tune_interrupted_reason(why, sizeof why, SIGINT, second);
    cr_assert(strstr(why, "SIGINT before it launched") && strstr(why, "about to start"), "%s", why);
    cr_assert_null(strstr(why, "while it ran"), "%s", why);
    tune_interrupted_reason(why, sizeof why, SIGTERM, first);
    cr_assert_str_eq(why, "stopped by SIGTERM while it ran (a resume marks it interrupted)");
    tuner_free(t);
    simcluster_free(sim);
}
