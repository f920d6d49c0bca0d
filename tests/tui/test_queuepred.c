/* The queued overrides' predicted times (tui/queuepred.c) on a real tuner and model. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "remote/launch/tuner_priv.h" /* its opt_lock: a suggestion holding the model */
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"
#include "tui/queuepred.h"

static SimCluster *sim;
static Tuner *t;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "bespoke",
                       .seed = 3,
                       .budget = 3,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3}};
    Error err;
    t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
    tuner_free(t);
    simcluster_free(sim);
}

TestSuite(queuepred, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* What the model says of the i-th queued override now. */
static double predicted(size_t i)
{
    Suggestion sg;
    Error err;
    cr_assert_eq(tuner_predict(t, tuner_override_at(t, i), &sg, &err), 0, "%s", err.msg);
    cr_assert(sg.has_prediction);
    double mean_s = sg.mean_s;
    suggestion_clear(&sg);
    return mean_s;
}

/* Queued rows showed no predicted time; they show the model's, asked once per override
 * queued, not at each update (a frame), and again only once the model learnt from a trial. */
Test(queuepred, each_queued_override_is_predicted_once_until_the_model_learns)
{
    QueuePredictions q = {0};
    cr_assert_eq(queuepred_update(&q, t), 0, "nothing queued, nothing asked");
    cr_assert_eq(q.asked, 0);
    Error err;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tuner_override(t, tuner_trial(t, (size_t)i)->suggestion.schedule, &err), 0,
                     "%s", err.msg);
    cr_assert_eq(queuepred_update(&q, t), 1);
    cr_assert_eq(q.asked, 3);
    for (size_t i = 0; i < 3; i++) {
        double mean_s = queuepred_mean_s(&q, tuner_override_id(t, i));
        cr_assert(isfinite(mean_s) && mean_s > 0, "override %zu: %g", i, mean_s);
        cr_assert_float_eq(mean_s, predicted(i), 1e-9, "override %zu", i);
    }
    cr_assert_eq(queuepred_update(&q, t), 0, "nothing changed");
    cr_assert_eq(q.asked, 3, "a frame asks nothing");

    int kept = tuner_override_id(t, 2);
    double kept_s = queuepred_mean_s(&q, kept);
    cr_assert_eq(tuner_override_drop(t, 1), 0);
    cr_assert_eq(queuepred_update(&q, t), 1, "a row less");
    cr_assert_eq(q.asked, 3, "a drop asks nothing");
    cr_assert_eq(queuepred_mean_s(&q, kept), kept_s);
    cr_assert(isnan(queuepred_mean_s(&q, 2)), "the dropped one is forgotten");

    /* the first runs as trial 4: the model observes it, so the one left is asked again */
    tuner_set_budget(t, 4);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(t), 4);
    cr_assert_eq(tuner_overrides(t), 1);
    queuepred_update(&q, t);
    cr_assert_eq(q.asked, 4, "asked again after the trial");
    cr_assert_float_eq(queuepred_mean_s(&q, kept), predicted(0), 1e-9);
    cr_assert_eq(queuepred_update(&q, t), 0);
    cr_assert_eq(q.asked, 4);
}

/* An optimizer with no model: the rows show none, and it is not asked at every frame. */
Test(queuepred, an_optimizer_without_a_model_predicts_none)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 1,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3}};
    Error err;
    Tuner *r = tuner_new(&cfg, &err);
    cr_assert_not_null(r, "%s", err.msg);
    cr_assert_eq(tuner_override(r, tuner_trial(t, 0)->suggestion.schedule, &err), 0, "%s",
                 err.msg);
    QueuePredictions q = {0};
    cr_assert_eq(queuepred_update(&q, r), 1);
    cr_assert(isnan(queuepred_mean_s(&q, tuner_override_id(r, 0))));
    cr_assert_eq(queuepred_update(&q, r), 0);
    cr_assert_eq(q.asked, 1);
    tuner_free(r);
}

/* A suggestion holding the model: tuner_predict says so by its code, and the override is asked
 * again once the model is free. */
Test(queuepred, a_busy_model_is_told_by_its_code_and_asked_again)
{
    Error err;
    cr_assert_eq(tuner_override(t, tuner_trial(t, 0)->suggestion.schedule, &err), 0, "%s",
                 err.msg);
    Suggestion sg;
    pthread_mutex_lock(&t->opt_lock);
    cr_assert_eq(tuner_predict(t, tuner_override_at(t, 0), &sg, &err), TUNER_PREDICT_BUSY);
    QueuePredictions q = {0};
    cr_assert_eq(queuepred_update(&q, t), 1, "a new row, its time not known yet");
    cr_assert(q.busy, "busy: ask again soon");
    cr_assert(isnan(queuepred_mean_s(&q, tuner_override_id(t, 0))));
    cr_assert_eq(queuepred_update(&q, t), 0, "still busy: no row changed, nothing to redraw");
    cr_assert(q.busy);
    pthread_mutex_unlock(&t->opt_lock);
    cr_assert_eq(queuepred_update(&q, t), 1);
    cr_assert_not(q.busy);
    cr_assert_float_eq(queuepred_mean_s(&q, tuner_override_id(t, 0)), predicted(0), 1e-9);
}
