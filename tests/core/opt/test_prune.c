#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/opt/prune.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

/* A trial of 40 iterations with 10 of warm-up, best 1 s: thresholds 5 s in warm-up (k 2 x
 * allowance 2.5), 2 s after it. */
static PruneDecision decide(const double *t, size_t n, double p10, double best)
{
    PrunePolicy p = prune_policy_default();
    PruneInput in = {.iter_s = t, .n = n, .warmup = 10, .iterations = 40,
                     .predicted_p10_s = p10, .best_s = best};
    PruneDecision d;
    int rc = prune_decide(&p, &in, &d);
    cr_assert_eq(rc, d.prune);
    return d;
}

Test(prune, slow_trial_pruned_in_warmup_with_reason)
{
    double t[] = {9.0, 7.5};
    PruneDecision d = decide(t, 2, -1, 1.0);
    cr_assert(d.prune);
    cr_assert_eq(d.seen, 2);
    cr_assert_float_eq(d.fastest_s, 7.5, 1e-12);
    cr_assert_float_eq(d.threshold_s, 5.0, 1e-12);
    cr_assert(strstr(d.reason, "in warm-up"), "%s", d.reason);
    cr_assert(strstr(d.reason, "2 of 40"), "%s", d.reason);
}

Test(prune, warmup_slowness_within_the_allowance_is_not_pruned_until_after_warmup)
{
    /* 3x the best through warm-up: warm-up may be that slow, so it runs on ... */
    double t[13];
    for (int i = 0; i < 13; i++)
        t[i] = 3.0;
    cr_assert_not(decide(t, 10, -1, 1.0).prune);
    cr_assert_not(decide(t, 11, -1, 1.0).prune, "one steady iteration is not enough");
    /* ... and two steady iterations at 3x settle it. */
    PruneDecision d = decide(t, 12, -1, 1.0);
    cr_assert(d.prune);
    cr_assert_float_eq(d.threshold_s, 2.0, 1e-12);
    cr_assert_null(strstr(d.reason, "in warm-up"), "%s", d.reason);
    cr_assert(strstr(d.reason, "after warm-up"), "%s", d.reason);
}

Test(prune, slow_warmup_then_fast_steady_iterations_keep_it)
{
    /* A real worker: warm-up far slower than its steady state, which is near the best. */
    double t[14];
    for (int i = 0; i < 10; i++)
        t[i] = 4.9;
    for (int i = 10; i < 14; i++)
        t[i] = 1.1;
    cr_assert_not(decide(t, 14, -1, 1.0).prune);
}

Test(prune, one_slow_first_iteration_is_not_enough)
{
    double t[] = {30.0};
    cr_assert_not(decide(t, 1, -1, 1.0).prune);
    cr_assert_not(decide(t, 1, 1.5, 1.0).prune, "the model expects it fast");
}

Test(prune, one_iteration_enough_when_the_model_agrees)
{
    double t[] = {30.0};
    PruneDecision d = decide(t, 1, 2.5, 1.0);
    cr_assert(d.prune);
    cr_assert(strstr(d.reason, "model agreed"), "%s", d.reason);
}

Test(prune, one_fast_iteration_keeps_it_running)
{
    /* Slow start, then one iteration near the best: the schedule may be good. */
    double t[] = {9.0, 8.0, 1.9, 8.5};
    cr_assert_not(decide(t, 4, -1, 1.0).prune);
}

Test(prune, nothing_to_compare_with)
{
    double t[] = {9.0, 9.0, 9.0};
    cr_assert_not(decide(t, 3, -1, -1).prune);
    cr_assert_not(decide(t, 3, -1, INFINITY).prune);
    cr_assert_not(decide(t, 3, -1, NAN).prune);
    cr_assert_not(decide(t, 0, 100, 1.0).prune);
}

Test(prune, missing_iterations_skipped)
{
    /* Iterations counted from 1 leave slot 0 empty; a host that has not reported is NaN. */
    double t[] = {-1, NAN, 6.0, 7.0};
    PruneDecision d = decide(t, 4, -1, 1.0);
    cr_assert_eq(d.seen, 2);
    cr_assert(d.prune);
    cr_assert(strstr(d.reason, "after 2 of 40 iterations (in warm-up)"), "%s", d.reason);
}

Test(prune, at_the_threshold_continues)
{
    double t[] = {5.0, 5.0, 5.0};
    cr_assert_not(decide(t, 3, -1, 1.0).prune, "exactly the threshold is not above it");
    double u[] = {5.01, 5.02};
    cr_assert(decide(u, 2, -1, 1.0).prune);
}

Test(prune, a_complete_trial_is_never_pruned)
{
    double t[12];
    for (int i = 0; i < 12; i++)
        t[i] = 30.0;
    PrunePolicy p = prune_policy_default();
    PruneInput in = {.iter_s = t, .n = 12, .warmup = 2, .iterations = 12, .predicted_p10_s = -1,
                     .best_s = 1.0};
    PruneDecision d;
    cr_assert_not(prune_decide(&p, &in, &d), "nothing left to save");
    in.iterations = 13;
    cr_assert(prune_decide(&p, &in, &d));
}

Test(prune, k_of_one_or_less_never_prunes)
{
    double t[] = {50.0, 50.0, 50.0};
    PrunePolicy p = {.k = 1.0, .min_iterations = 2, .warmup_allowance = 2.5};
    PruneInput in = {.iter_s = t, .n = 3, .warmup = 1, .iterations = 10, .predicted_p10_s = 60,
                     .best_s = 1.0};
    PruneDecision d;
    cr_assert_not(prune_decide(&p, &in, &d));
    p.k = 0;
    cr_assert_not(prune_decide(&p, &in, &d));
    p.k = 3;
    cr_assert(prune_decide(&p, &in, &d));
}

/* The probe: a trial run before anything was measured stops after PRUNE_PROBE_ITERATIONS,
 * whatever its times, and only then. */
static int probe(const double *t, size_t n, int iterations, PrunePolicy p, PruneDecision *d)
{
    PruneInput in = {.iter_s = t, .n = n, .warmup = 10, .iterations = iterations,
                     .predicted_p10_s = -1, .best_s = -1, .probe = 1};
    return prune_decide(&p, &in, d);
}

Test(prune, a_probe_stops_after_its_iterations_with_reason)
{
    double t[PRUNE_PROBE_ITERATIONS + 1];
    for (int i = 0; i <= PRUNE_PROBE_ITERATIONS; i++)
        t[i] = 1.0 + i;
    PruneDecision d;
    PrunePolicy p = prune_policy_default();
    cr_assert_eq(p.probe_iterations, PRUNE_PROBE_ITERATIONS);
    for (int n = 0; n < PRUNE_PROBE_ITERATIONS; n++)
        cr_assert_not(probe(t, (size_t)n, 20, p, &d), "after %d iterations", n);
    cr_assert(probe(t, PRUNE_PROBE_ITERATIONS, 20, p, &d));
    cr_assert_eq(d.seen, PRUNE_PROBE_ITERATIONS);
    char want[64];
    snprintf(want, sizeof want, "probe: stopped after %d of 20", PRUNE_PROBE_ITERATIONS);
    cr_assert(strstr(d.reason, want), "%s", d.reason);
    /* a missing iteration is not evidence */
    double gap[PRUNE_PROBE_ITERATIONS + 1];
    memcpy(gap, t, sizeof gap);
    gap[0] = NAN;
    cr_assert_not(probe(gap, PRUNE_PROBE_ITERATIONS, 20, p, &d));
    cr_assert(probe(gap, PRUNE_PROBE_ITERATIONS + 1, 20, p, &d));
}

Test(prune, a_probe_saves_nothing_on_a_short_trial_and_is_off_without_pruning)
{
    double t[PRUNE_PROBE_ITERATIONS];
    for (int i = 0; i < PRUNE_PROBE_ITERATIONS; i++)
        t[i] = 1.0;
    PruneDecision d;
    PrunePolicy p = prune_policy_default();
    cr_assert_not(probe(t, PRUNE_PROBE_ITERATIONS, PRUNE_PROBE_ITERATIONS, p, &d),
                  "a trial of no more iterations than the probe runs to its end");
    cr_assert_not(probe(t, PRUNE_PROBE_ITERATIONS, 2 * PRUNE_PROBE_ITERATIONS - 1, p, &d),
                  "a probe of more than half the trial saves too little");
    cr_assert(probe(t, PRUNE_PROBE_ITERATIONS, 2 * PRUNE_PROBE_ITERATIONS, p, &d));
    p.probe_iterations = 0;
    cr_assert_not(probe(t, PRUNE_PROBE_ITERATIONS, 20, p, &d));
    p = prune_policy_default();
    p.k = 0;
    cr_assert_not(probe(t, PRUNE_PROBE_ITERATIONS, 20, p, &d), "k <= 1: nothing is stopped");
}

Test(prune, not_a_probe_once_something_was_measured)
{
    /* The same fast iterations with a best to compare with run on. */
    double t[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
    PruneDecision d = decide(t, 6, -1, 1.0);
    cr_assert_not(d.prune);
    cr_assert_not(decide(t, 6, -1, -1).prune, "not a probe and no best: runs on");
}

/* The watch carries the probe flag from its reset to the decision, and turns the stopped
 * trial into a pruned observation with the mean of its iterations. */
Test(prune, the_watch_probes_only_when_reset_as_a_probe)
{
    SimCluster *sim = fixture_sim("B:googlenet");
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    cr_assert_not_null(s);
    cr_assert_gt(s->job.iterations, PRUNE_PROBE_ITERATIONS);
    PruneWatch w;
    prune_watch_init(&w, prune_policy_default());
    prune_watch_reset(&w, 0);
    for (int it = 1; it <= PRUNE_PROBE_ITERATIONS + 1; it++)
        cr_assert_not(prune_watch_iteration(&w, s, it, 3.0, -1, -1));
    prune_watch_reset(&w, 1);
    int stopped_at = 0;
    for (int it = 1; it <= s->job.iterations && !stopped_at; it++)
        if (prune_watch_iteration(&w, s, it, 2.0 + it, -1, -1))
            stopped_at = it;
    cr_assert_eq(stopped_at, PRUNE_PROBE_ITERATIONS);
    Observation *o = observation_new(s);
    o->status = TRIAL_CANCELLED;
    prune_watch_finish(&w, o);
    cr_assert_eq(o->status, TRIAL_PRUNED);
    cr_assert_float_eq(o->time_s, 2.0 + (PRUNE_PROBE_ITERATIONS + 1) / 2.0, 1e-12);
    cr_assert(strstr(o->reason, "probe"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "cancelled"), "%s", o->reason);
    observation_free(o);
    /* Regression: the slurm launcher's note of a step its stop may not have reached was lost
     * to the pruning's reason. */
    o = observation_new(s);
    o->status = TRIAL_CANCELLED;
    snprintf(o->reason, sizeof o->reason,
             "cancelled; its step 57.3 may still run: cancelled once the login node answers again");
    prune_watch_finish(&w, o);
    cr_assert_eq(o->status, TRIAL_PRUNED);
    cr_assert(strstr(o->reason, "probe"), "%s", o->reason);
    cr_assert(strstr(o->reason, "; its step 57.3 may still run: cancelled once the login node "
                                "answers again"),
              "%s", o->reason);
    observation_free(o);
    prune_watch_clear(&w);
    schedule_free(s);
    simcluster_free(sim);
}
