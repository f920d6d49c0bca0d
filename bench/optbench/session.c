/* Running one tuning session of one contender on one cell and seed: ask, run the trial on the
 * simulator (stopped early by the prune rule, or by the peer study's pruner), tell; and the
 * per-cell summaries of the quality curves. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/optbench/optbench.h"
#include "core/base/clock.h"
#include "core/base/median.h"
#include "core/opt/prune.h"
#include "remote/launch/launcher.h"

/* Who may stop a running trial: the tuner's prune rule (registered optimizers, as `tunedeck
 * tune` runs them) or the peer study's pruner (optuna-tpe-median), from each iteration. */
typedef struct {
    Bench *b;
    PruneWatch *watch; /* records every iteration; decides unless the peer's pruner does */
    int peer;          /* the peer study's pruner decides */
    const Schedule *s;
    double p10_s, best_s;
    int peer_pruned;
    char peer_error[300];
} Stopper;

static int on_iteration(void *ud, int iter, double time_s)
{
    Stopper *st = ud;
    int stop = prune_watch_iteration(st->watch, st->s, iter, time_s, st->p10_s, st->best_s);
    if (!st->peer)
        return stop;
    if (st->peer_pruned || st->peer_error[0])
        return st->peer_pruned;
    Error err;
    int rc = peer_report(st->b, iter, time_s, &err);
    if (rc < 0)
        snprintf(st->peer_error, sizeof st->peer_error, "%s", err.msg);
    st->peer_pruned = rc > 0;
    return st->peer_pruned;
}

static Observation *evaluate(Bench *b, Cell *cell, const Schedule *s, uint64_t seed,
                             Stopper *st, Error *err)
{
    LaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_s = 600;
    cfg.seed = seed;
    if (st) {
        cfg.on_iteration = on_iteration;
        cfg.iter_userdata = st;
    }
    if (!b->eval_sim_trial) {
        cfg.sim = cell->sim;
        return launcher_run_blocking(launcher_find("sim"), &cfg, s, err);
    }
    /* The real subcommand: same simulator, same seed, the trial number from the schedule. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' sim-trial '%s' --seed %llu", b->tunedeck, cell->spec,
             (unsigned long long)seed);
    cfg.command = cmd;
    return launcher_run_blocking(launcher_find("local"), &cfg, s, err);
}

/* One suggestion from a contender: a registered optimizer or the Optuna peer; *p10_s is
 * the optimizer's lower end for it (-1 when none). */
static Schedule *ask(Bench *b, Optimizer *opt, const Cell *cell, double *p10_s, Error *err)
{
    *p10_s = -1;
    if (!opt)
        return peer_ask(b, cell, err);
    Suggestion sg;
    if (optimizer_suggest(opt, &sg, err) < 0) {
        suggestion_clear(&sg);
        return NULL;
    }
    if (sg.has_prediction)
        *p10_s = sg.p10_s;
    Schedule *s = sg.schedule;
    sg.schedule = NULL;
    suggestion_clear(&sg);
    return s;
}

void run_alloc(Run *r, int trials)
{
    r->observed_s = calloc((size_t)trials, sizeof(double));
    r->noiseless_s = calloc((size_t)trials, sizeof(double));
    r->ratio = calloc((size_t)trials, sizeof(double));
    r->incumbent_ratio = calloc((size_t)trials, sizeof(double));
    r->suggest_ms = calloc((size_t)trials, sizeof(double));
    r->cost_s = calloc((size_t)trials, sizeof(double));
    for (int t = 0; t < trials; t++) {
        r->observed_s[t] = r->noiseless_s[t] = NAN;
        r->ratio[t] = r->incumbent_ratio[t] = INFINITY;
        r->suggest_ms[t] = NAN;
        r->cost_s[t] = NAN;
    }
}

void run_free(Run *r)
{
    free(r->observed_s);
    free(r->noiseless_s);
    free(r->ratio);
    free(r->incumbent_ratio);
    free(r->suggest_ms);
    free(r->cost_s);
}

/* One tuning session of `trials` trials: ask, run on the simulator, tell. Mirrors the
 * tuner (remote/launch/tuner.c): trial numbers from 1, the seed for the optimizer and the noise. */
void run_session(Bench *b, Cell *cell, const Contender *k, uint64_t seed, Run *r)
{
    Error err;
    run_alloc(r, b->trials);
    const Cluster *c = simcluster_cluster(cell->sim);
    Optimizer *opt = NULL;
    if (k->peer_sampler < 0) {
        opt = optimizer_new(k->optimizer, c, simcluster_job(cell->sim), seed, &err);
        if (!opt) {
            snprintf(r->error, sizeof r->error, "%s", err.msg);
            return;
        }
    } else if (peer_new_study(b, k, cell, seed, &err) < 0) {
        snprintf(r->error, sizeof r->error, "%s", err.msg);
        return;
    }
    r->ran = 1;
    double best_obs = INFINITY, incumbent = INFINITY, best_true = INFINITY, worst_ok = 0;
    double cost = 0;
    /* What the prune rule compares with, as the tuner's: the best ok trial, or while there is
     * none the fastest pruned one (a probe); a trial ran ok or was pruned: no more probes. */
    double best_pruned = INFINITY;
    int measured_any = 0;
    /* The peers' trials are watched only to count what they cost (k = 0 never prunes). */
    PruneWatch watch;
    PrunePolicy policy = prune_policy_default();
    if (!opt || k->no_prune)
        policy.k = 0;
    prune_watch_init(&watch, policy);
    for (int t = 1; t <= b->trials; t++) {
        double t0 = clock_now_s(), p10 = -1;
        Schedule *s = ask(b, opt, cell, &p10, &err);
        double ms = (clock_now_s() - t0) * 1000.0;
        if (!s) {
            snprintf(r->error, sizeof r->error, "trial %d: %s", t, err.msg);
            for (int u = t; u <= b->trials; u++) {
                r->ratio[u - 1] = best_true / cell->best_known_s;
                r->incumbent_ratio[u - 1] = incumbent / cell->best_known_s;
            }
            break;
        }
        s->trial = t;
        r->suggest_ms[t - 1] = ms;
        prune_watch_reset(&watch, !measured_any && t < b->trials);
        Stopper st = {.b = b, .watch = &watch, .peer = !opt && b->peer_pruning, .s = s,
                      .p10_s = p10, .best_s = isfinite(best_obs)      ? best_obs
                                : isfinite(best_pruned) ? best_pruned
                                                        : -1};
        Observation *o = evaluate(b, cell, s, seed, &st, &err);
        if (!o) {
            o = observation_new(s);
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s", err.msg);
        }
        prune_watch_finish(&watch, o);
        if (st.peer_pruned && o->status == TRIAL_CANCELLED) {
            o->status = TRIAL_PRUNED; /* the study's pruner decided */
            o->time_s = prune_watch_mean(&watch);
        }
        if (st.peer_error[0]) {
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s", st.peer_error);
        }
        int ok = o->status == TRIAL_OK;
        r->pruned += o->status == TRIAL_PRUNED;
        measured_any |= ok || o->status == TRIAL_PRUNED;
        if (o->status == TRIAL_PRUNED && o->time_s > 0 && o->time_s < best_pruned)
            best_pruned = o->time_s;
        /* What the trial cost: the iterations it ran, each at its measured time (a pruned
         * trial's mean over the iterations it ran; the tuner keeps the same for the model). */
        double per_iter = o->time_s > 0 ? o->time_s : 0;
        cost += o->iterations_seen * per_iter;
        r->cost_s[t - 1] = cost;
        double noiseless = simcluster_noiseless_time(cell->sim, s);
        r->noiseless_s[t - 1] = noiseless;
        r->observed_s[t - 1] = ok ? o->time_s : NAN;
        r->failed += !ok && o->status != TRIAL_PRUNED;
        if (ok && o->time_s > worst_ok)
            worst_ok = o->time_s;
        /* Best-so-far is judged by the true (noiseless) time of the schedules tried, so a
         * lucky noisy measurement earns nothing; the incumbent (what measured fastest, what
         * an operator would deploy) is kept too. */
        if (ok && noiseless < best_true)
            best_true = noiseless;
        if (ok && o->time_s < best_obs) {
            best_obs = o->time_s;
            incumbent = noiseless;
        }
        r->ratio[t - 1] = best_true / cell->best_known_s;
        r->incumbent_ratio[t - 1] = incumbent / cell->best_known_s;
        if (opt)
            optimizer_observe(opt, o);
        else {
            /* A failed trial is told as twice the worst time seen: generic samplers rank. */
            double value = ok ? o->time_s : worst_ok > 0 ? 2 * worst_ok : 100.0;
            if (peer_tell(b, value, o->status == TRIAL_PRUNED, &err) < 0) {
                snprintf(r->error, sizeof r->error, "trial %d: %s", t, err.msg);
                for (int u = t + 1; u <= b->trials; u++) {
                    r->ratio[u - 1] = r->ratio[t - 1];
                    r->incumbent_ratio[u - 1] = r->incumbent_ratio[t - 1];
                }
                observation_free(o);
                schedule_free(s);
                break;
            }
        }
        observation_free(o);
        schedule_free(s);
    }
    prune_watch_clear(&watch);
    optimizer_free(opt);
}

void summarize(const Bench *b, Cell *cell, size_t ki)
{
    Summary *sm = &cell->summary[ki];
    memset(sm, 0, sizeof *sm);
    double *v = calloc((size_t)(b->n_seeds * b->trials) + 1, sizeof *v);
    size_t n = 0;
    for (int ci = 0; ci < N_CHECKPOINTS; ci++) {
        n = 0;
        for (int s = 0; s < b->n_seeds; s++) {
            const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
            if (r->ran && CHECKPOINTS[ci] <= b->trials)
                v[n++] = r->ratio[CHECKPOINTS[ci] - 1];
        }
        sm->ratio_at[ci] = n ? median_sorting(v, n) : NAN;
    }
    n = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (!r->ran)
            continue;
        int first = b->trials + 1;
        for (int t = 0; t < b->trials; t++)
            if (r->ratio[t] <= WITHIN) {
                first = t + 1;
                break;
            }
        sm->censored += first > b->trials;
        v[n++] = first;
        sm->runs++;
    }
    sm->trials_to_within = n ? median_sorting(v, n) : NAN;
    n = 0;
    sm->suggest_ms_max = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        for (int t = 0; r->ran && t < b->trials; t++)
            if (!isnan(r->suggest_ms[t])) {
                v[n++] = r->suggest_ms[t];
                if (r->suggest_ms[t] > sm->suggest_ms_max)
                    sm->suggest_ms_max = r->suggest_ms[t];
            }
    }
    sm->suggest_ms_median = n ? median_sorting(v, n) : NAN;
    n = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (r->ran && !isnan(r->suggest_ms[b->trials - 1]))
            v[n++] = r->suggest_ms[b->trials - 1];
    }
    sm->last_suggest_ms = n ? median_sorting(v, n) : NAN;
    free(v);
}