#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"

static Optimizer *gp_or_die(SimCluster *sim, uint64_t seed)
{
    Error e;
    Optimizer *o = optimizer_new("gp", simcluster_cluster(sim), simcluster_job(sim), seed, &e);
    cr_assert_not_null(o, "%s", e.msg);
    return o;
}

static void tell(Optimizer *o, const Schedule *s, TrialStatus status, double time_s)
{
    Observation *ob = observation_new(s);
    ob->status = status;
    ob->time_s = time_s;
    optimizer_observe(o, ob);
    observation_free(ob);
}

/* Runs `trials` suggest/observe rounds on the noiseless simulator; returns the best time.
 * Every suggestion must validate and run. When `schedules` is given, copies are kept. */
static double run_trials(SimCluster *sim, Optimizer *o, int trials, Schedule **schedules)
{
    double best = INFINITY;
    for (int i = 0; i < trials; i++) {
        Suggestion sg;
        Error e;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "trial %d: %s", i, e.msg);
        cr_assert_eq(schedule_validate(sg.schedule, &e), 0, "trial %d: %s", i, e.msg);
        cr_assert_null(sg.machine_mean_s, "gp has no per-machine structure");
        cr_assert_null(sg.device_mean_s);
        double t = simcluster_noiseless_time(sim, sg.schedule);
        cr_assert(isfinite(t), "trial %d cannot run", i);
        if (sg.has_prediction)
            cr_assert(sg.p10_s > 0 && sg.p10_s <= sg.mean_s && sg.mean_s <= sg.p90_s * 1.5,
                      "trial %d: prediction %g [%g, %g]", i, sg.mean_s, sg.p10_s, sg.p90_s);
        tell(o, sg.schedule, TRIAL_OK, t);
        best = fmin(best, t);
        if (schedules)
            schedules[i] = schedule_copy(sg.schedule);
        suggestion_clear(&sg);
    }
    return best;
}

Test(opt_gp, registered_by_name)
{
    cr_assert_not_null(optimizer_find("gp"));
    cr_assert_not_null(strstr(optimizer_names(), "gp"));
}

Test(opt_gp, suggestions_validate_and_are_not_repeated)
{
    const char *specs[] = {"A:alexnet", "C:speechnet"};
    for (size_t k = 0; k < 2; k++) {
        SimCluster *sim = fixture_sim(specs[k]);
        Optimizer *o = gp_or_die(sim, 3);
        Schedule *seen[12];
        run_trials(sim, o, 12, seen);
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < i; j++)
                cr_assert(!schedule_equal(seen[i], seen[j]), "%s: trial %d repeats trial %d",
                          specs[k], i, j);
        for (int i = 0; i < 12; i++)
            schedule_free(seen[i]);
        optimizer_free(o);
        simcluster_free(sim);
    }
}

Test(opt_gp, deterministic_for_a_seed)
{
    SimCluster *sim = fixture_sim("B:googlenet");
    Schedule *a[10], *b[10], *c[10];
    Optimizer *o = gp_or_die(sim, 11);
    run_trials(sim, o, 10, a);
    optimizer_free(o);
    o = gp_or_die(sim, 11);
    run_trials(sim, o, 10, b);
    optimizer_free(o);
    o = gp_or_die(sim, 12);
    run_trials(sim, o, 10, c);
    optimizer_free(o);
    int differ = 0;
    for (int i = 0; i < 10; i++) {
        cr_assert(schedule_equal(a[i], b[i]), "trial %d differs for the same seed", i);
        differ |= !schedule_equal(a[i], c[i]);
        schedule_free(a[i]);
        schedule_free(b[i]);
        schedule_free(c[i]);
    }
    cr_assert(differ, "seeds 11 and 12 proposed the same ten schedules");
    simcluster_free(sim);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The model must pay for itself: with 20 trials on setting B, the median over seeds of gp's
 * best beats the median best of random search at the same budget. */
Test(opt_gp, beats_random_search_median_on_b_googlenet, .timeout = TEST_TIMEOUT_S)
{
    SimCluster *sim = fixture_sim("B:googlenet");
    enum { TRIALS = 20, GP_SEEDS = 3, RANDOM_SEEDS = 9 };
    double gp_best[GP_SEEDS], rnd_best[RANDOM_SEEDS];
    for (int s = 0; s < GP_SEEDS; s++) {
        Optimizer *o = gp_or_die(sim, (uint64_t)s + 1);
        gp_best[s] = run_trials(sim, o, TRIALS, NULL);
        optimizer_free(o);
    }
    for (int s = 0; s < RANDOM_SEEDS; s++) {
        Error e;
        Optimizer *o = optimizer_new("random", simcluster_cluster(sim), simcluster_job(sim),
                                     (uint64_t)s + 1, &e);
        cr_assert_not_null(o, "%s", e.msg);
        rnd_best[s] = run_trials(sim, o, TRIALS, NULL);
        optimizer_free(o);
    }
    qsort(gp_best, GP_SEEDS, sizeof(double), cmp_double);
    qsort(rnd_best, RANDOM_SEEDS, sizeof(double), cmp_double);
    double gp_med = gp_best[GP_SEEDS / 2], rnd_med = rnd_best[RANDOM_SEEDS / 2];
    cr_assert_lt(gp_med, rnd_med, "gp median best %.3f s, random search median best %.3f s", gp_med,
                 rnd_med);
    simcluster_free(sim);
}

Test(opt_gp, failed_trials_are_penalized_not_fatal)
{
    SimCluster *sim = fixture_sim("B:googlenet");
    Optimizer *o = gp_or_die(sim, 5);
    /* Every trial fails at first: the optimizer keeps proposing fresh valid schedules. */
    for (int i = 0; i < 4; i++) {
        Suggestion sg;
        Error e;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "%s", e.msg);
        cr_assert_eq(schedule_validate(sg.schedule, &e), 0, "%s", e.msg);
        cr_assert(!sg.has_prediction, "no ok trial yet, no scale to predict in");
        tell(o, sg.schedule, i % 2 ? TRIAL_TIMEOUT : TRIAL_FAILED, -1);
        suggestion_clear(&sg);
    }
    /* Then trials succeed, some are cancelled or unreachable (ignored), some fail. */
    for (int i = 0; i < 10; i++) {
        Suggestion sg;
        Error e;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "%s", e.msg);
        cr_assert_eq(schedule_validate(sg.schedule, &e), 0, "%s", e.msg);
        TrialStatus st = i % 5 == 3 ? TRIAL_FAILED : i % 5 == 4 ? TRIAL_UNREACHABLE : TRIAL_OK;
        if (i % 7 == 6)
            st = TRIAL_CANCELLED;
        tell(o, sg.schedule, st, st == TRIAL_OK ? simcluster_noiseless_time(sim, sg.schedule) : -1);
        suggestion_clear(&sg);
    }
    Suggestion sg;
    Error e;
    cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "%s", e.msg);
    cr_assert(sg.has_prediction);
    cr_assert(isfinite(sg.mean_s) && sg.mean_s > 0);
    suggestion_clear(&sg);
    optimizer_free(o);
    simcluster_free(sim);
}

Test(opt_gp, predicts_observed_schedules_and_rejects_others)
{
    SimCluster *sim = fixture_sim("A:googlenet");
    SimCluster *other = fixture_sim("B:googlenet");
    Optimizer *o = gp_or_die(sim, 2);
    Schedule *seen[8];
    Suggestion sg;
    Error e;
    /* Before any trial there is no scale: a schedule back, no prediction. */
    Schedule *known = NULL;
    simcluster_best_known(sim, &known);
    cr_assert_not_null(known);
    cr_assert_eq(optimizer_predict(o, known, &sg, &e), 0, "%s", e.msg);
    cr_assert(!sg.has_prediction);
    suggestion_clear(&sg);
    schedule_free(known);
    run_trials(sim, o, 8, seen);
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(optimizer_predict(o, seen[i], &sg, &e), 0, "%s", e.msg);
        cr_assert(sg.has_prediction);
        cr_assert(schedule_equal(sg.schedule, seen[i]));
        double t = simcluster_noiseless_time(sim, seen[i]);
        /* Noiseless observations: the posterior passes close to them. */
        cr_assert(fabs(log(sg.mean_s / t)) < 0.25, "trial %d: predicted %g s, measured %g s", i,
                  sg.mean_s, t);
        cr_assert(sg.p10_s <= t * 1.1 && t <= sg.p90_s * 1.1, "trial %d: %g outside [%g, %g]", i, t,
                  sg.p10_s, sg.p90_s);
        suggestion_clear(&sg);
    }
    Schedule *foreign = NULL;
    simcluster_best_known(other, &foreign);
    cr_assert_not_null(foreign);
    cr_assert_lt(optimizer_predict(o, foreign, &sg, &e), 0);
    cr_assert_not_null(strstr(e.msg, "another cluster"), "%s", e.msg);
    schedule_free(foreign);
    for (int i = 0; i < 8; i++)
        schedule_free(seen[i]);
    optimizer_free(o);
    simcluster_free(other);
    simcluster_free(sim);
}

Test(opt_gp, cluster_without_devices_or_too_large_is_an_error)
{
    DeviceSpec none = {0}; /* a valid pointer to zero devices */
    MachineType t = {0};
    strcpy(t.name, "nodev");
    t.bandwidth_gbps = 1;
    t.devices = &none;
    Cluster *c = fixture_cluster("bare", &t, 1);
    JobSpec job = {0};
    strcpy(job.name, "tiny");
    job.model_mb = 1;
    job.batch = 8;
    Error e;
    cr_assert_null(optimizer_new("gp", c, &job, 1, &e));
    cr_assert_not_null(strstr(e.msg, "no device"), "%s", e.msg);
    cluster_free(c);

    SimCluster *big = fixture_sim("G40:googlenet");
    cr_assert_null(optimizer_new("gp", simcluster_cluster(big), simcluster_job(big), 1, &e));
    cr_assert_not_null(strstr(e.msg, "at most"), "%s", e.msg);
    simcluster_free(big);
}

/* One machine with one CPU has one schedule: once it ran, gp repeats it instead of failing. */
Test(opt_gp, a_cluster_with_one_schedule_repeats_it)
{
    DeviceSpec cpu = {0};
    strcpy(cpu.id, "cpu");
    cpu.kind = DEVICE_CPU;
    cpu.threads = 4;
    MachineType t = {0};
    strcpy(t.name, "solo");
    t.bandwidth_gbps = 1;
    t.devices = &cpu;
    t.n_devices = 1;
    Cluster *c = fixture_cluster("one", &t, 1);
    JobSpec job = {0};
    strcpy(job.name, "tiny");
    job.model_mb = 1;
    job.batch = 8;
    Error e;
    Optimizer *o = optimizer_new("gp", c, &job, 1, &e);
    cr_assert_not_null(o, "%s", e.msg);
    for (int i = 0; i < 8; i++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "trial %d: %s", i, e.msg);
        cr_assert_eq(schedule_validate(sg.schedule, &e), 0, "%s", e.msg);
        cr_assert_eq(sg.schedule->inputs[0], 8);
        tell(o, sg.schedule, TRIAL_OK, 1.0 + 0.01 * i);
        suggestion_clear(&sg);
    }
    optimizer_free(o);
    cluster_free(c);
}
