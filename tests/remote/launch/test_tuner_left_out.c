/* A machine the session cannot reach for good (machine_usable refuses it) is left out of the
 * optimizer's search: its suggestions are new schedules on the machines left, not schedules
 * on the refused one that, moved off it, run again what ran before; and a resume re-makes
 * them with the same machines left out (TrialRecord.left_out, the journal's). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/timeout.h"

TestSuite(tuner_left_out, .timeout = TEST_TIMEOUT_S);

/* Machine 0's host refused for good once trial 1 is in (a host key changed then). */
typedef struct {
    Tuner *t;
    int asked;
} Refusing;

static int machine_0_refused_after_trial_1(void *ud, size_t machine, char *why, size_t cap)
{
    Refusing *r = ud;
    r->asked++;
    if (machine != 0 || !r->t || tuner_n_trials(r->t) < 1)
        return 1;
    snprintf(why, cap, "its host key changed");
    return 0;
}

static void no_events(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)ud, (void)ev, (void)rec;
}

static int async_suggest; /* the console's background suggestions */

static Tuner *tuner_on(SimCluster *sim, const char *optimizer, int budget, TunerUsableFn usable,
                       void *userdata)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = optimizer,
                       .seed = 1,
                       .budget = budget,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 1},
                       .no_prune = 1,
                       .async_suggest = async_suggest,
                       .on_event = no_events,
                       .machine_usable = usable,
                       .userdata = userdata};
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

/* Runs `budget` trials of `optimizer` on `spec` with machine 0 refused from trial 2, checks
 * that no schedule runs twice and none after trial 1 uses machine 0, then that a resume's
 * replay re-makes every suggestion as it was. */
static void check_left_out(const char *spec, const char *optimizer, int budget)
{
    Error err;
    SimCluster *sim = simcluster_new(spec, &err);
    cr_assert_not_null(sim, "%s", err.msg);
    Refusing refusing = {0};
    Tuner *t = tuner_on(sim, optimizer, budget, machine_0_refused_after_trial_1, &refusing);
    refusing.t = t;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), (size_t)budget);
    cr_assert_gt(refusing.asked, 0);
    for (size_t i = 0; i < (size_t)budget; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        const Schedule *s = r->suggestion.schedule;
        cr_assert_eq(r->obs->status, TRIAL_OK, "%s %s trial %zu: %s", spec, optimizer, i + 1,
                     r->obs->reason);
        if (i == 0)
            cr_assert_null(r->left_out, "trial 1 was suggested with every machine usable");
        else {
            cr_assert_not_null(r->left_out, "trial %zu: the optimizer was told", i + 1);
            cr_assert(r->left_out[0] && !r->left_out[1]);
            cr_assert_not(s->worker[0] || s->ps[0], "%s %s trial %zu uses machine 0", spec,
                          optimizer, i + 1);
        }
        for (size_t j = 0; j < i; j++)
            cr_assert_not(schedule_equal(s, tuner_trial(t, j)->suggestion.schedule),
                          "%s %s: trial %zu runs trial %zu's schedule again", spec, optimizer,
                          i + 1, j + 1);
    }
    /* The resume: no host refused yet (its pool is new), the journal's left_out told. */
    Tuner *again = tuner_on(sim, optimizer, budget, NULL, NULL);
    for (size_t i = 0; i < (size_t)budget; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        cr_assert_eq(tuner_replay_trial(again, &r->suggestion, 0, r->left_out, r->obs,
                                        r->suggest_ms, &err),
                     0, "%s %s trial %zu re-made another schedule", spec, optimizer, i + 1);
        cr_assert(schedule_equal(tuner_trial(again, i)->suggestion.schedule,
                                 r->suggestion.schedule));
    }
    tuner_free(again);
    tuner_free(t);
    simcluster_free(sim);
}

/* The case measured: B:googlenet bespoke ran 12 of 15 trials again once machine 0 was refused
 * (its suggestions on machine 0, moved off it, all the same schedule). */
Test(tuner_left_out, bespoke_on_B_googlenet_suggests_new_schedules_off_the_refused_machine)
{
    check_left_out("B:googlenet", "bespoke", 15);
}

/* The console's suggestions, made on a background thread: told on the loop's before it starts. */
Test(tuner_left_out, background_suggestions_leave_the_refused_machine_out_too)
{
    async_suggest = 1;
    check_left_out("B:googlenet", "bespoke", 15);
}

Test(tuner_left_out, bespoke_on_C_googlenet_suggests_new_schedules_off_the_refused_machine)
{
    check_left_out("C:googlenet", "bespoke", 15);
}

Test(tuner_left_out, allreduce_bespoke_suggests_new_schedules_off_the_refused_machine)
{
    check_left_out("M1:resnet50", "bespoke", 12);
}

Test(tuner_left_out, gp_suggests_new_schedules_off_the_refused_machine)
{
    check_left_out("A:alexnet", "gp", 12);
}

/* Every machine refused once trial 1 is in: no role set is left for the search. */
static int every_machine_refused_after_trial_1(void *ud, size_t machine, char *why, size_t cap)
{
    Refusing *r = ud;
    (void)machine;
    r->asked++;
    if (!r->t || tuner_n_trials(r->t) < 1)
        return 1;
    snprintf(why, cap, "its identity refused");
    return 0;
}

/* Regression: with every machine left out, the bespoke search found no role set and the
 * session stopped on "no role set can take the batch", before the session's own check
 * (before_launch) could say which hosts were refused. The search then goes as if none were:
 * the schedule is suggested and before_launch decides (here, with none, it runs). */
static void check_every_machine_left_out(const char *spec)
{
    Error err;
    SimCluster *sim = simcluster_new(spec, &err);
    cr_assert_not_null(sim, "%s", err.msg);
    Refusing refusing = {0};
    Tuner *t = tuner_on(sim, "bespoke", 3, every_machine_refused_after_trial_1, &refusing);
    refusing.t = t;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s: %s", spec, err.msg);
    cr_assert_eq(tuner_n_trials(t), 3);
    cr_assert_not_null(tuner_trial(t, 1)->left_out);
    tuner_free(t);
    simcluster_free(sim);
}

Test(tuner_left_out, with_every_machine_left_out_bespoke_still_suggests)
{
    check_every_machine_left_out("B:googlenet");
    check_every_machine_left_out("M1:resnet50");
}
