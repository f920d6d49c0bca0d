/* The tuning session's life and loop: made and freed, stepped by the caller's poll loop
 * (suggest → launch → observe, one trial at a time), its records, budget, stop and cancel. */
#include "remote/launch/tuner.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/launch/tuner_priv.h"

Tuner *tuner_new(const TunerConfig *cfg, Error *err)
{
    if (!cfg->launcher) {
        error_set(err, "tuner: no launcher given");
        return NULL;
    }
    Optimizer *opt = optimizer_new(cfg->optimizer, cfg->cluster, cfg->job, cfg->seed, err);
    if (!opt)
        return NULL;
    Tuner *t = calloc(1, sizeof *t);
    if (!t) {
        optimizer_free(opt);
        error_set(err, "tuner: out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    t->opt = opt;
    t->budget = cfg->budget;
    t->stop_when_converged = cfg->stop_when_converged;
    prune_watch_init(&t->prune, prune_policy_default());
    t->wake[0] = t->wake[1] = -1;
    pthread_mutex_init(&t->opt_lock, NULL);
    if (cfg->async_suggest) {
        /* Close-on-exec from birth: a trial forked meanwhile must not inherit the pipe. */
        if (pipe2(t->wake, O_CLOEXEC) < 0) {
            t->wake[0] = t->wake[1] = -1;
            error_set(err, "tuner: pipe: %s", strerror(errno));
            tuner_free(t);
            return NULL;
        }
        fcntl(t->wake[0], F_SETFL, O_NONBLOCK);
    }
    return t;
}

static int run_finished(void *ctx)
{
    const Tuner *t = ctx;
    return t->cfg.launcher->finished(t->run);
}

static void wake_only(void *ctx, int64_t now_ms)
{
    (void)ctx;
    (void)now_ms;
}

/* A cancelled run still has to collect its processes: served alone, waking at least every
 * 50 ms in case the launcher sets no deadline while it stops. */
static void drain_cancelled_run(Tuner *t)
{
    EvLoop *l = evloop_new();
    if (l && evloop_add(l, t->cfg.launcher->pollfds, t->cfg.launcher->step, t->run) > 0 &&
        evloop_wake_every(l, 50, wake_only, NULL) > 0)
        evloop_run(l, run_finished, t, -1);
    evloop_free(l);
}

void tuner_free(Tuner *t)
{
    if (!t)
        return;
    tuner_halt(t); /* the suggestion thread joined, the running trial stopped and freed */
    suggestion_clear(&t->pending);
    for (size_t i = 0; i < t->n_trials; i++) {
        suggestion_clear(&t->trials[i].suggestion);
        observation_free(t->trials[i].obs);
        free(t->trials[i].left_out);
    }
    free(t->suggest_left_out);
    free(t->trials);
    prune_watch_clear(&t->prune);
    overridequeue_clear(&t->queue);
    optimizer_free(t->opt);
    pthread_mutex_destroy(&t->opt_lock);
    if (t->wake[0] >= 0)
        close(t->wake[0]);
    if (t->wake[1] >= 0)
        close(t->wake[1]);
    free(t);
}

void tuner_emit(Tuner *t, TunerEvent ev, const TrialRecord *rec)
{
    if (t->cfg.on_event)
        t->cfg.on_event(t->cfg.userdata, ev, rec);
}

TrialRecord *tuner_add_record(Tuner *t)
{
    if (t->n_trials == t->cap_trials) {
        size_t cap = t->cap_trials ? t->cap_trials * 2 : 32;
        TrialRecord *grown = realloc(t->trials, cap * sizeof *grown);
        if (!grown)
            return NULL;
        t->trials = grown;
        t->cap_trials = cap;
    }
    TrialRecord *r = &t->trials[t->n_trials++];
    memset(r, 0, sizeof *r);
    r->trial = (int)t->n_trials;
    return r;
}

void tuner_record_outcome(Tuner *t, TrialRecord *rec, Observation *o)
{
    rec->obs = o;
    /* the best as a scan in trial order finds it: the fastest ok trial, the first of a tie */
    size_t i = (size_t)(rec - t->trials);
    const Observation *b = t->best ? t->trials[t->best - 1].obs : NULL;
    if (o && o->status == TRIAL_OK &&
        (!b || o->time_s < b->time_s || (o->time_s == b->time_s && i < t->best - 1)))
        t->best = i + 1;
    rec->finished_s = clock_now_s();
    pthread_mutex_lock(&t->opt_lock);
    optimizer_observe(t->opt, o);
    pthread_mutex_unlock(&t->opt_lock);
    tuner_emit(t, TUNER_EVENT_FINISHED, rec);
}

void tuner_set_number_offset(Tuner *t, int offset)
{
    t->number_offset = offset;
}

int tuner_outside_number(const Tuner *t, int trial)
{
    return trial + t->number_offset;
}

static int may_begin(const Tuner *t)
{
    return !t->cfg.may_begin || t->cfg.may_begin(t->cfg.userdata);
}

size_t tuner_pollfds(Tuner *t, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    size_t n = 0;
    if (t->phase == PHASE_SUGGESTING && cap > 0)
        fds[n++] = (struct pollfd){.fd = t->wake[0], .events = POLLIN};
    if (t->phase == PHASE_PREPARING) {
        int64_t again = clock_now_ms() + TUNER_PREPARE_RECHECK_MS;
        if (*deadline_ms < 0 || again < *deadline_ms)
            *deadline_ms = again;
    }
    if (t->phase == PHASE_RUNNING) {
        n += t->cfg.launcher->pollfds(t->run, fds + n, cap - n, deadline_ms);
        if (t->cfg.launcher->finished(t->run))
            *deadline_ms = clock_now_ms(); /* a run that is over (sim) is collected now */
    }
    if (t->phase == PHASE_IDLE && !t->paused && (int)t->n_trials < t->budget) {
        if (may_begin(t)) {
            *deadline_ms = clock_now_ms(); /* work to start now */
        } else { /* asked again soon: what it waits for is stepped by another source */
            int64_t again = clock_now_ms() + TUNER_PREPARE_RECHECK_MS;
            if (*deadline_ms < 0 || again < *deadline_ms)
                *deadline_ms = again;
        }
    }
    return n;
}

void tuner_step(Tuner *t, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (t->phase == PHASE_SUGGESTING) {
        tuner_collect_suggestion(t);
        return;
    }
    if (t->phase == PHASE_PREPARING) {
        tuner_prepare(t); /* a launch now is stepped from the next poll, with its own fds */
        return;
    }
    if (t->phase == PHASE_RUNNING) {
        const LauncherKind *k = t->cfg.launcher;
        k->step(t->run, fds, n, now_ms);
        if (!k->finished(t->run))
            return;
        Observation *o = k->result(t->run);
        k->free(t->run);
        t->run = NULL;
        prune_watch_finish(&t->prune, o);
        t->phase = PHASE_IDLE;
        tuner_record_outcome(t, &t->trials[t->n_trials - 1], o);
        if (t->stop_requested)
            t->phase = PHASE_STOPPED;
    }
    if (t->phase == PHASE_IDLE && !t->paused && (int)t->n_trials < t->budget && may_begin(t))
        tuner_begin_trial(t);
}

static size_t source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return tuner_pollfds(ctx, fds, cap, deadline_ms);
}

static void source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    tuner_step(ctx, fds, n, now_ms);
}

long tuner_attach(Tuner *t, EvLoop *l)
{
    return evloop_add(l, source_pollfds, source_step, t);
}

static int session_done(void *ctx)
{
    return tuner_done(ctx);
}

int tuner_run_blocking(Tuner *t, Error *err)
{
    if (evloop_run_source(source_pollfds, source_step, t, session_done, t, -1) < 0)
        return error_set(err, "poll: %s", strerror(errno));
    if (t->last_error[0])
        return error_set(err, "%s", t->last_error);
    return 0;
}

int tuner_done(const Tuner *t)
{
    if (t->phase == PHASE_STOPPED)
        return 1;
    return t->phase == PHASE_IDLE && ((int)t->n_trials >= t->budget);
}

int tuner_running(const Tuner *t)
{
    return t->phase == PHASE_RUNNING || t->phase == PHASE_SUGGESTING || t->phase == PHASE_PREPARING;
}

size_t tuner_n_trials(const Tuner *t)
{
    return t->n_trials;
}

const TrialRecord *tuner_trial(const Tuner *t, size_t i)
{
    return i < t->n_trials ? &t->trials[i] : NULL;
}

/* Kept as outcomes are recorded (tuner_record_outcome, the one place a trial gets one): a scan of
 * every trial here ran at each iteration of a trial (the prune rule's reference) and at
 * every frame, a third of a resumed 20,000-trial console's CPU. */
const TrialRecord *tuner_best(const Tuner *t)
{
    return t->best ? &t->trials[t->best - 1] : NULL;
}

const char *tuner_last_error(const Tuner *t)
{
    return t->last_error[0] ? t->last_error : NULL;
}

int tuner_budget(const Tuner *t)
{
    return t->budget;
}

void tuner_set_budget(Tuner *t, int budget)
{
    /* The operator's number: no override's raise is in it to give back. The number in force
     * that clears a raise changes the budget too (the journal's `raised` would outlive it). */
    int had_raise = t->budget_raised > 0;
    t->budget_raised = 0;
    if (tuner_budget_set(t, budget) || had_raise)
        tuner_emit(t, TUNER_EVENT_BUDGET, NULL);
}

int tuner_budget_raised(const Tuner *t)
{
    return t->budget_raised;
}

void tuner_restore_budget_raised(Tuner *t, int raised)
{
    t->budget_raised = raised < 0 ? 0 : raised > t->budget ? t->budget : raised;
}

void tuner_budget_to(Tuner *t, int budget)
{
    if (tuner_budget_set(t, budget))
        tuner_emit(t, TUNER_EVENT_BUDGET, NULL);
}

int tuner_budget_set(Tuner *t, int budget)
{
    budget = budget < 0 ? 0 : budget;
    int changed = budget != t->budget;
    t->budget = budget;
    if (t->phase == PHASE_STOPPED && !t->last_error[0]) {
        t->phase = PHASE_IDLE;
        if (t->converged[0]) { /* more trials wanted: a new streak is needed to stop again */
            t->converged[0] = 0;
            t->converged_from = t->n_trials;
        }
    }
    return changed;
}

void tuner_set_paused(Tuner *t, int paused)
{
    t->paused = paused;
}

int tuner_paused(const Tuner *t)
{
    return t->paused;
}

void tuner_stop(Tuner *t, const char *reason)
{
    if (!t->stop_requested)
        snprintf(t->last_error, sizeof t->last_error, "%s", reason);
    t->stop_requested = 1;
    if (t->phase == PHASE_IDLE)
        t->phase = PHASE_STOPPED; /* a running trial or suggestion ends first */
}

void tuner_halt(Tuner *t)
{
    if (t->thread_live) {
        pthread_join(t->thread, NULL);
        t->thread_live = 0;
        suggestion_clear(&t->pending);
        memset(&t->pending, 0, sizeof t->pending);
    }
    if (t->run) {
        t->cfg.launcher->cancel(t->run);
        drain_cancelled_run(t);
        observation_free(t->cfg.launcher->result(t->run));
        t->cfg.launcher->free(t->run);
        t->run = NULL;
    }
    t->phase = PHASE_STOPPED;
}

void tuner_cancel(Tuner *t)
{
    if (t->phase == PHASE_RUNNING)
        t->cfg.launcher->cancel(t->run);
    if (t->phase == PHASE_PREPARING)
        t->cancel_requested = 1;
}

const char *tuner_optimizer_name(const Tuner *t)
{
    return t->opt->kind->name;
}
