/* Pruning in the tuning session: hopeless trials stop early with their few iterations kept,
 * a slow local trial's process is gone, resume replays the same decisions, the stop rule. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/opt/prune.h"
#include "core/opt/stoprule.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/timeout.h"

static Tuner *on_sim(SimCluster *sim, const char *optimizer, int budget, int no_prune, uint64_t seed)
{
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = optimizer,
        .seed = seed,
        .budget = budget,
        .launcher = launcher_find("sim"),
        .launch = {.sim = sim, .seed = seed, .timeout_s = 60},
        .no_prune = no_prune,
    };
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

static SimCluster *sim_new(const char *spec)
{
    Error err;
    SimCluster *sim = simcluster_new(spec, &err);
    cr_assert_not_null(sim, "%s", err.msg);
    return sim;
}

TestSuite(tuner_prune, .timeout = TEST_TIMEOUT_S);

Test(tuner_prune, random_search_prunes_slow_schedules_and_no_prune_runs_them)
{
    SimCluster *sim = sim_new("B:googlenet");
    const JobSpec *job = simcluster_job(sim);
    Error err;
    Tuner *pruned = on_sim(sim, "random", 10, 0, 1), *full = on_sim(sim, "random", 10, 1, 1);
    cr_assert_eq(tuner_run_blocking(pruned, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(full, &err), 0, "%s", err.msg);
    int n_pruned = 0, in_warmup = 0;
    for (size_t i = 0; i < 10; i++) {
        const TrialRecord *p = tuner_trial(pruned, i), *f = tuner_trial(full, i);
        /* random search does not read outcomes: the same schedules either way */
        cr_assert(schedule_equal(p->suggestion.schedule, f->suggestion.schedule));
        cr_assert_eq(f->obs->status, TRIAL_OK, "--no-prune trial %zu: %s", i + 1, f->obs->reason);
        cr_assert_eq(f->obs->iterations_seen, job->iterations);
        if (p->obs->status != TRIAL_PRUNED) {
            cr_assert_eq(p->obs->status, TRIAL_OK);
            continue;
        }
        if (i == 0) {
            /* nothing measured before it: the first trial is a probe */
            cr_assert_eq(p->obs->iterations_seen, PRUNE_PROBE_ITERATIONS);
            cr_assert(strstr(p->obs->reason, "probe: stopped after"), "%s", p->obs->reason);
            cr_assert_gt(p->obs->time_s, 0);
            continue;
        }
        n_pruned++;
        /* stopped early, with what it measured kept, and slower than k x the best so far */
        cr_assert_lt(p->obs->iterations_seen, job->iterations, "trial %zu", i + 1);
        cr_assert_geq(p->obs->iterations_seen, PRUNE_MIN_ITERATIONS);
        in_warmup += p->obs->iterations_seen < job->warmup;
        cr_assert(strstr(p->obs->reason, "pruned after"), "%s", p->obs->reason);
        cr_assert_gt(p->obs->time_s, 0);
        cr_assert_gt(f->obs->time_s, tuner_best(pruned)->obs->time_s, "trial %zu", i + 1);
        for (size_t d = 0; d < simcluster_cluster(sim)->n_devices; d++)
            if (p->suggestion.schedule->inputs[d] > 0)
                cr_assert_geq(p->obs->device_time_s[d], 0, "part measurements are kept");
    }
    cr_assert_gt(n_pruned, 0, "random search on B:googlenet runs hopeless schedules");
    cr_assert_gt(in_warmup, 0, "the most hopeless are stopped in warm-up");
    cr_assert(schedule_equal(tuner_best(pruned)->suggestion.schedule,
                             tuner_best(full)->suggestion.schedule),
              "pruning never drops the best");
    tuner_free(pruned);
    tuner_free(full);
    simcluster_free(sim);
}

/* A run of 12 equals 7 replayed into a fresh tuner and run on to 12: pruned trials come back
 * pruned and the trials after them are decided the same way. */
static void resume_replays_prunes(const char *optimizer, int want_pruned_before)
{
    SimCluster *sim = sim_new("B:googlenet");
    Error err;
    Tuner *whole = on_sim(sim, optimizer, 12, 0, 1);
    cr_assert_eq(tuner_run_blocking(whole, &err), 0, "%s", err.msg);
    Tuner *resumed = on_sim(sim, optimizer, 12, 0, 1);
    int pruned_before = 0, pruned_after = 0;
    for (size_t i = 0; i < 7; i++) {
        const TrialRecord *r = tuner_trial(whole, i);
        pruned_before += r->obs->status == TRIAL_PRUNED;
        cr_assert_eq(tuner_replay_trial(resumed, &r->suggestion, 0, NULL, r->obs, r->suggest_ms, &err),
                     0, "%s: trial %zu re-made another schedule", optimizer, i + 1);
    }
    if (want_pruned_before)
        cr_assert_gt(pruned_before, 0, "%s: no prune in the replayed part", optimizer);
    cr_assert_eq(tuner_run_blocking(resumed, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < 12; i++) {
        const TrialRecord *a = tuner_trial(whole, i), *b = tuner_trial(resumed, i);
        pruned_after += i >= 7 && b->obs->status == TRIAL_PRUNED;
        cr_assert(schedule_equal(a->suggestion.schedule, b->suggestion.schedule),
                  "%s: trial %zu differs after resume", optimizer, i + 1);
        cr_assert_eq(a->obs->status, b->obs->status, "%s: trial %zu", optimizer, i + 1);
        cr_assert_eq(a->obs->iterations_seen, b->obs->iterations_seen);
        cr_assert_str_eq(a->obs->reason, b->obs->reason);
    }
    if (want_pruned_before)
        cr_assert_gt(pruned_after, 0, "%s: no prune after the resume", optimizer);
    tuner_free(whole);
    tuner_free(resumed);
    simcluster_free(sim);
}

Test(tuner_prune, resume_reproduces_the_prune_decisions_random)
{
    resume_replays_prunes("random", 1);
}

Test(tuner_prune, resume_reproduces_the_decisions_bespoke)
{
    resume_replays_prunes("bespoke", 0);
}

/* A local trial command: trial 1 is fast (and a probe); trial 2 is ten times slower, takes 0.2 s per
 * iteration of real time and writes its pid. It must be stopped after two iterations, in its
 * warm-up, and its process must be gone. */
Test(tuner_prune, slow_local_trial_is_stopped_in_warmup_and_its_process_is_gone)
{
    SimCluster *sim = sim_new("A:alexnet");
    char dir[] = "/tmp/tunedeck-prune-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cat >/dev/null; t=1; [ \"$TUNEDECK_TRIAL\" = 1 ] || { t=10; echo $$ >'%s/pid'; }; "
             "i=1; while [ $i -le 20 ]; do "
             "printf '{\"event\":\"iteration\",\"iter\":%%d,\"time_s\":%%s}\\n' $i $t; "
             "[ $t = 1 ] || sleep 0.2; i=$((i+1)); done",
             dir);
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = "random",
        .seed = 1,
        .budget = 2,
        .launcher = launcher_find("local"),
        .launch = {.command = cmd, .timeout_s = 60},
    };
    Error err;
    Tuner *t = tuner_new(&cfg, &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    const TrialRecord *fast = tuner_trial(t, 0), *slow = tuner_trial(t, 1);
    /* The first trial is a probe; the second is compared with what the probe measured. */
    cr_assert_eq(fast->obs->status, TRIAL_PRUNED, "%s", fast->obs->reason);
    cr_assert(strstr(fast->obs->reason, "probe"), "%s", fast->obs->reason);
    /* its lines come in one burst: those past the stop are not part of the measurement */
    cr_assert_eq(fast->obs->iterations_seen, PRUNE_PROBE_ITERATIONS);
    cr_assert_eq(slow->obs->status, TRIAL_PRUNED, "%s: %s", trial_status_name(slow->obs->status),
                 slow->obs->reason);
    cr_assert_lt(slow->obs->iterations_seen, simcluster_job(sim)->warmup, "in warm-up");
    cr_assert(strstr(slow->obs->reason, "in warm-up"), "%s", slow->obs->reason);
    cr_assert_float_eq(slow->obs->time_s, 10, 1e-9);
    char path[1100];
    snprintf(path, sizeof path, "%s/pid", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long pid = 0;
    cr_assert_eq(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    cr_assert_gt(pid, 1);
    cr_assert_eq(kill((pid_t)pid, 0), -1, "the pruned trial's process %ld still runs", pid);
    cr_assert_eq(errno, ESRCH);
    unlink(path);
    rmdir(dir);
    tuner_free(t);
    simcluster_free(sim);
}

/* The tuner's trials as the stop rule sees them. */
static StopTrial *stop_trials(const Tuner *t)
{
    size_t n = tuner_n_trials(t);
    StopTrial *st = calloc(n, sizeof *st);
    cr_assert_not_null(st);
    for (size_t i = 0; i < n; i++)
        st[i] = tuner_stop_trial(tuner_trial(t, i));
    return st;
}

Test(tuner_prune, stop_rule_ends_the_session_before_the_budget)
{
    SimCluster *sim = sim_new("B:googlenet");
    /* Seed 3 stops at trial 18 (seed 1 at 27): room for a BLAS with other rounding. */
    Tuner *t = on_sim(sim, "bespoke", 40, 0, 3);
    tuner_set_stop_when_converged(t, 1);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    size_t n = tuner_n_trials(t);
    cr_assert_lt(n, 40, "bespoke converges on B:googlenet well within 40 trials (took %zu)", n);
    cr_assert_not_null(tuner_converged(t));
    cr_assert(strstr(tuner_converged(t), "converged"), "%s", tuner_converged(t));
    /* It stopped where the rule first said so, on the suggestions the session made. */
    StopTrial *st = stop_trials(t);
    char why[512];
    const StopRule *rule = stoprule_default();
    cr_assert_eq(rule->decide(st, n, 0, why, sizeof why), 1, "stopped at %zu", n);
    cr_assert_str_eq(why, tuner_converged(t));
    for (size_t k = 1; k < n; k++)
        cr_assert_eq(rule->decide(st, k, 0, why, sizeof why), 0, "it could stop at %zu", k);
    free(st);
    /* More budget: a new streak is needed before it stops again. Room for exactly one streak
     * shows it: stopping again on the old streak, or before a whole new one, ends it short. */
    tuner_set_budget(t, (int)(n + TUNER_CONVERGED_STREAK));
    cr_assert_null(tuner_converged(t));
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_geq(tuner_n_trials(t), n + TUNER_CONVERGED_STREAK);
    tuner_free(t);
    simcluster_free(sim);
}

Test(tuner_prune, stop_rule_ends_an_allreduce_session)
{
    /* The allreduce form's suggestions carry no EI, so the EI streak never stopped them
     * (bench/stoprule: 60 of 60 trials on M1-M3); the bound does (M3 at trial 9). */
    SimCluster *sim = sim_new("M3:googlenet:4096");
    Tuner *t = on_sim(sim, "bespoke", 20, 0, 1);
    tuner_set_stop_when_converged(t, 1);
    Error err;
    cr_assert_eq(tuner_run_blocking(t, &err), 0, "%s", err.msg);
    cr_assert_lt(tuner_n_trials(t), 20, "ran %zu", tuner_n_trials(t));
    cr_assert_not_null(tuner_converged(t));
    cr_assert_null(strstr(tuner_converged(t), "expected"), "%s", tuner_converged(t));
    tuner_free(t);
    simcluster_free(sim);
}
