/* The tuning session state machine: suggest → launch → observe, one trial at a time. */
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
#include "core/journal/journal_override.h"
#include "core/opt/prune.h"
#include "core/opt/stoprule.h"

/* PREPARING: the trial is started (its event emitted) but before_launch said it is not ready
 * yet (a leftover group being stopped on its hosts): asked again on every step. */
typedef enum { PHASE_IDLE, PHASE_SUGGESTING, PHASE_PREPARING, PHASE_RUNNING, PHASE_STOPPED } Phase;

/* While PREPARING the tuner asks again at least this often: the hook waits on something the
 * caller's loop steps after the tuner (the hosts' pool), so its answer may land after the
 * tuner's step of that round. */
enum { TUNER_PREPARE_RECHECK_MS = 50 };

struct Tuner {
    TunerConfig cfg;
    Optimizer *opt;
    pthread_mutex_t opt_lock;
    Phase phase;
    int budget, paused;
    int number_offset; /* tuner_set_number_offset */
    TrialRecord *trials;
    size_t n_trials, cap_trials;
    size_t best; /* 1 + the index of tuner_best's trial, kept by record_outcome; 0: none */
    void *run;                 /* the launcher's run of the current trial */
    OverrideQueue queue;       /* the operator's overrides; ids grow over resumes too */
    int stop_requested;        /* tuner_stop(): launch nothing more */
    int cancel_requested;      /* tuner_cancel() while PREPARING: the trial is not launched */
    PruneWatch prune;          /* the running trial's iteration stream */
    /* the stop rule */
    int stop_when_converged;
    size_t converged_from;     /* trials before this index do not count (budget raised) */
    char converged[ERROR_MSG_MAX];
    char last_error[ERROR_MSG_MAX];
    /* background suggestion */
    pthread_t thread;
    int thread_live;
    int wake[2];
    Suggestion pending;
    int pending_rc;
    double pending_ms;
    Error pending_err;
};

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
    }
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

static void emit(Tuner *t, TunerEvent ev, const TrialRecord *rec)
{
    if (t->cfg.on_event)
        t->cfg.on_event(t->cfg.userdata, ev, rec);
}

static TrialRecord *add_record(Tuner *t)
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

static void record_outcome(Tuner *t, TrialRecord *rec, Observation *o)
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
    emit(t, TUNER_EVENT_FINISHED, rec);
}

static double best_ok_s(const Tuner *t)
{
    const TrialRecord *b = tuner_best(t);
    return b ? b->obs->time_s : -1;
}

/* What the prune rule compares with: the best measured trial; while only probes and pruned
 * trials have been measured, the fastest of those (their few warm-up-heavy iterations overstate
 * the time, so the comparison errs on the side of running on). -1: nothing measured yet. */
static double prune_reference_s(const Tuner *t)
{
    double ref = best_ok_s(t);
    if (ref > 0)
        return ref;
    for (size_t i = 0; i < t->n_trials; i++) {
        const Observation *o = t->trials[i].obs;
        if (o && o->status == TRIAL_PRUNED && o->time_s > 0 && (ref < 0 || o->time_s < ref))
            ref = o->time_s;
    }
    return ref;
}

/* The launcher's iteration hook: the prune rule on the running trial. */
static int on_iteration(void *ud, int iter, double time_s)
{
    Tuner *t = ud;
    if (t->n_trials == 0)
        return 0;
    const Suggestion *sg = &t->trials[t->n_trials - 1].suggestion;
    return prune_watch_iteration(&t->prune, sg->schedule, iter, time_s,
                                 sg->has_prediction ? sg->p10_s : -1, prune_reference_s(t));
}

/* Whether any trial so far measured something (ran ok, or was pruned with its iterations): until
 * one has, a trial is a probe (core/opt/prune.h). */
static int measured_any(const Tuner *t)
{
    for (size_t i = 0; i < t->n_trials; i++) {
        const Observation *o = t->trials[i].obs;
        if (o && (o->status == TRIAL_OK || o->status == TRIAL_PRUNED))
            return 1;
    }
    return 0;
}

void tuner_set_number_offset(Tuner *t, int offset)
{
    t->number_offset = offset;
}

int tuner_outside_number(const Tuner *t, int trial)
{
    return trial + t->number_offset;
}

static void prepare(Tuner *t);

/* Launches the trial of a filled-in record; a launch that cannot start is a failed trial. */
static void launch(Tuner *t, TrialRecord *rec)
{
    /* The number its command (TUNEDECK_TRIAL, its input), its process groups and the
     * journal know it by. */
    rec->suggestion.schedule->trial = tuner_outside_number(t, rec->trial);
    rec->started_s = clock_now_s();
    /* A probe only where a trial follows that its measurement can guide. */
    prune_watch_reset(&t->prune, !measured_any(t) && (int)t->n_trials < t->budget);
    emit(t, TUNER_EVENT_STARTED, rec);
    if (t->stop_requested) { /* tuner_stop() from the event handler: do not launch */
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "not launched: %s", t->last_error);
        record_outcome(t, rec, o);
        t->phase = PHASE_STOPPED;
        return;
    }
    t->phase = PHASE_PREPARING;
    prepare(t);
}

/* The trial of the last record, once before_launch lets it go. */
static void prepare(Tuner *t)
{
    TrialRecord *rec = &t->trials[t->n_trials - 1];
    char why[ERROR_MSG_MAX];
    int ready = t->cfg.before_launch ? t->cfg.before_launch(t->cfg.userdata,
                                                            rec->suggestion.schedule, why,
                                                            sizeof why)
                                     : 0;
    if (ready > 0)
        return; /* still PREPARING: asked again on the next step */
    if (ready < 0) {
        /* The session stops: a failed trial would tell the optimizer nothing about the
         * schedule, and every later one would fail the same way, spending the budget. */
        tuner_stop(t, why);
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "not launched: %s", why);
        record_outcome(t, rec, o);
        t->phase = PHASE_STOPPED;
        return;
    }
    if (t->stop_requested || t->cancel_requested) { /* asked for while PREPARING */
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "not launched: %s",
                 t->stop_requested ? t->last_error : "cancelled");
        t->cancel_requested = 0;
        record_outcome(t, rec, o);
        t->phase = t->stop_requested ? PHASE_STOPPED : PHASE_IDLE;
        return;
    }
    Error err;
    LaunchConfig lc = t->cfg.launch;
    if (!t->cfg.no_prune) {
        lc.on_iteration = on_iteration;
        lc.iter_userdata = t;
    }
    t->run = t->cfg.launcher->start(&lc, rec->suggestion.schedule, &err);
    if (!t->run) {
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_FAILED;
        snprintf(o->reason, sizeof o->reason, "could not start: %s", err.msg);
        record_outcome(t, rec, o);
        t->phase = t->stop_requested ? PHASE_STOPPED : PHASE_IDLE;
        return;
    }
    t->phase = PHASE_RUNNING;
}

/* No room for the next trial's record: the session stops as on any failure of its own, with
 * the reason in last_error (tuner_last_error, the run's error). */
static void stop_out_of_memory(Tuner *t)
{
    snprintf(t->last_error, sizeof t->last_error,
             "tuner: out of memory for trial %zu's record", t->n_trials + 1);
    t->phase = PHASE_STOPPED;
}

static void accept_suggestion(Tuner *t, Suggestion *sg, double ms)
{
    TrialRecord *rec = add_record(t);
    if (!rec) {
        suggestion_clear(sg);
        stop_out_of_memory(t);
        return;
    }
    rec->suggestion = *sg;
    memset(sg, 0, sizeof *sg);
    rec->suggest_ms = ms;
    emit(t, TUNER_EVENT_SUGGESTED, rec);
    launch(t, rec);
}

static void *suggest_thread(void *arg)
{
    Tuner *t = arg;
    double t0 = clock_now_s();
    pthread_mutex_lock(&t->opt_lock);
    t->pending_rc = optimizer_suggest(t->opt, &t->pending, &t->pending_err);
    pthread_mutex_unlock(&t->opt_lock);
    t->pending_ms = (clock_now_s() - t0) * 1000.0;
    char byte = 1;
    while (write(t->wake[1], &byte, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

StopTrial tuner_stop_trial(const TrialRecord *r)
{
    const Suggestion *sg = &r->suggestion;
    return (StopTrial){.own = !r->overridden,
                       .has_ei = sg->has_ei,
                       .ei_s = sg->ei_s,
                       .has_prediction = sg->has_prediction,
                       .mean_s = sg->mean_s,
                       .p10_s = sg->p10_s,
                       .p90_s = sg->p90_s,
                       .ok = r->obs && r->obs->status == TRIAL_OK,
                       .time_s = r->obs ? r->obs->time_s : 0};
}

/* The stop rule (core/opt/stoprule.h), checked before each of the optimizer's suggestions, on
 * what the trials' suggestions predicted and what they measured: a resumed session, whose
 * suggestions are re-made by replay, decides the same. */
static int converged(Tuner *t)
{
    if (!t->stop_when_converged || t->n_trials <= t->converged_from)
        return 0;
    StopTrial *st = calloc(t->n_trials, sizeof *st);
    if (!st)
        return 0; /* out of memory: go on tuning, the budget still ends it */
    for (size_t i = 0; i < t->n_trials; i++)
        st[i] = tuner_stop_trial(&t->trials[i]);
    int stop = stoprule_default()->decide(st, t->n_trials, t->converged_from, t->converged,
                                          sizeof t->converged);
    free(st);
    if (!stop)
        t->converged[0] = 0;
    return stop;
}

static void begin_trial(Tuner *t)
{
    if (!t->queue.n && converged(t)) {
        t->phase = PHASE_STOPPED;
        emit(t, TUNER_EVENT_CONVERGED, &t->trials[t->n_trials - 1]);
        return;
    }
    if (t->queue.n) {
        /* the record first: without one the override stays queued, for the journal's
         * resume to run (taken first, it was lost, and the record written through NULL) */
        TrialRecord *rec = add_record(t);
        if (!rec) {
            stop_out_of_memory(t);
            return;
        }
        int id;
        Schedule *mine = overridequeue_take(&t->queue, 0, &id);
        Suggestion sg;
        memset(&sg, 0, sizeof sg);
        pthread_mutex_lock(&t->opt_lock);
        Error err;
        if (optimizer_predict(t->opt, mine, &sg, &err) < 0) {
            suggestion_clear(&sg);
            memset(&sg, 0, sizeof sg);
        }
        pthread_mutex_unlock(&t->opt_lock);
        schedule_free(sg.schedule);
        sg.schedule = mine;
        rec->suggestion = sg;
        rec->overridden = 1;
        rec->override_id = id;
        emit(t, TUNER_EVENT_SUGGESTED, rec);
        launch(t, rec);
        return;
    }
    if (t->cfg.async_suggest) {
        memset(&t->pending, 0, sizeof t->pending);
        if (pthread_create(&t->thread, NULL, suggest_thread, t) == 0) {
            t->thread_live = 1;
            t->phase = PHASE_SUGGESTING;
            return;
        }
    }
    Suggestion sg;
    Error err;
    double t0 = clock_now_s();
    pthread_mutex_lock(&t->opt_lock);
    int rc = optimizer_suggest(t->opt, &sg, &err);
    pthread_mutex_unlock(&t->opt_lock);
    if (rc < 0) {
        suggestion_clear(&sg);
        snprintf(t->last_error, sizeof t->last_error, "%s", err.msg);
        t->phase = PHASE_STOPPED;
        return;
    }
    accept_suggestion(t, &sg, (clock_now_s() - t0) * 1000.0);
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
    if (t->phase == PHASE_IDLE && !t->paused && (int)t->n_trials < t->budget)
        *deadline_ms = clock_now_ms(); /* work to start now */
    return n;
}

void tuner_step(Tuner *t, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (t->phase == PHASE_SUGGESTING) {
        char buf[16];
        if (read(t->wake[0], buf, sizeof buf) <= 0)
            return;
        pthread_join(t->thread, NULL);
        t->thread_live = 0;
        if (t->pending_rc < 0) {
            suggestion_clear(&t->pending);
            snprintf(t->last_error, sizeof t->last_error, "%s", t->pending_err.msg);
            t->phase = PHASE_STOPPED;
            return;
        }
        accept_suggestion(t, &t->pending, t->pending_ms);
        return;
    }
    if (t->phase == PHASE_PREPARING) {
        prepare(t); /* a launch now is stepped from the next poll, with its own fds */
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
        record_outcome(t, &t->trials[t->n_trials - 1], o);
        if (t->stop_requested)
            t->phase = PHASE_STOPPED;
    }
    if (t->phase == PHASE_IDLE && !t->paused && (int)t->n_trials < t->budget)
        begin_trial(t);
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
    return t->phase == PHASE_RUNNING || t->phase == PHASE_SUGGESTING ||
           t->phase == PHASE_PREPARING;
}

size_t tuner_n_trials(const Tuner *t)
{
    return t->n_trials;
}

const TrialRecord *tuner_trial(const Tuner *t, size_t i)
{
    return i < t->n_trials ? &t->trials[i] : NULL;
}

/* Kept as outcomes are recorded (record_outcome, the one place a trial gets one): a scan of
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
    budget = budget < 0 ? 0 : budget;
    int changed = budget != t->budget;
    t->budget = budget;
    if (changed)
        emit(t, TUNER_EVENT_BUDGET, NULL);
    if (t->phase == PHASE_STOPPED && !t->last_error[0]) {
        t->phase = PHASE_IDLE;
        if (t->converged[0]) { /* more trials wanted: a new streak is needed to stop again */
            t->converged[0] = 0;
            t->converged_from = t->n_trials;
        }
    }
}

void tuner_set_stop_when_converged(Tuner *t, int on)
{
    t->stop_when_converged = on;
    if (!on && t->converged[0] && t->phase == PHASE_STOPPED && !t->last_error[0]) {
        t->converged[0] = 0;
        t->phase = PHASE_IDLE;
    }
}

int tuner_stop_when_converged(const Tuner *t)
{
    return t->stop_when_converged;
}

const char *tuner_converged(const Tuner *t)
{
    return t->converged[0] ? t->converged : NULL;
}

void tuner_set_paused(Tuner *t, int paused)
{
    t->paused = paused;
}

int tuner_paused(const Tuner *t)
{
    return t->paused;
}

/* The queue's change as the journal sees it: a record made for the call (trial 0). */
static void emit_queue(Tuner *t, TunerEvent ev, int id, Schedule *s)
{
    TrialRecord rec;
    memset(&rec, 0, sizeof rec);
    rec.overridden = 1;
    rec.override_id = id;
    rec.suggestion.schedule = s;
    emit(t, ev, &rec);
}

int tuner_override(Tuner *t, const Schedule *s, Error *err)
{
    OverrideQueue *q = &t->queue;
    if (q->last_id >= JOURNAL_OVERRIDE_ID_MAX)
        return error_set(err, "override: every override id up to %d is taken",
                         JOURNAL_OVERRIDE_ID_MAX);
    if (overridequeue_push(q, q->last_id + 1, s, err) < 0)
        return -1;
    emit_queue(t, TUNER_EVENT_QUEUED, q->id[q->n - 1], q->s[q->n - 1]);
    /* The stop rule ends the optimizer's suggestions, not the operator's trials: the queue
     * runs, and the rule decides again after it (an override is not a trial it counts). */
    if (t->phase == PHASE_STOPPED && t->converged[0] && !t->last_error[0]) {
        t->converged[0] = 0;
        t->phase = PHASE_IDLE;
    }
    return 0;
}

void tuner_override_ids_from(Tuner *t, int last)
{
    if (last > JOURNAL_OVERRIDE_ID_MAX)
        last = JOURNAL_OVERRIDE_ID_MAX;
    if (last > t->queue.last_id)
        t->queue.last_id = last;
}

int tuner_override_restore(Tuner *t, int id, const Schedule *s, Error *err)
{
    if (id <= 0 || id > JOURNAL_OVERRIDE_ID_MAX)
        return error_set(err, "override id %d: expected 1 to %d", id, JOURNAL_OVERRIDE_ID_MAX);
    return overridequeue_push(&t->queue, id, s, err);
}

size_t tuner_overrides(const Tuner *t)
{
    return t->queue.n;
}

const Schedule *tuner_override_at(const Tuner *t, size_t i)
{
    return i < t->queue.n ? t->queue.s[i] : NULL;
}

int tuner_override_id(const Tuner *t, size_t i)
{
    return i < t->queue.n ? t->queue.id[i] : 0;
}

int tuner_override_trial(const Tuner *t, size_t i)
{
    /* a suggestion being made takes the next trial: the queue waits for it */
    return (int)t->n_trials + (t->phase == PHASE_SUGGESTING) + (int)i + 1;
}

int tuner_override_drop(Tuner *t, size_t i)
{
    int id;
    Schedule *s = overridequeue_take(&t->queue, i, &id);
    if (!s)
        return -1;
    emit_queue(t, TUNER_EVENT_DROPPED, id, s);
    schedule_free(s);
    return 0;
}

int tuner_predict(Tuner *t, const Schedule *s, Suggestion *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (pthread_mutex_trylock(&t->opt_lock) != 0)
        return error_set(err, "the model is busy with a suggestion; try again");
    int rc = optimizer_predict(t->opt, s, out, err);
    pthread_mutex_unlock(&t->opt_lock);
    return rc;
}

void tuner_replay(Tuner *t, const Suggestion *sg, const Observation *o, double suggest_ms)
{
    tuner_replay_trial(t, sg, 0, o, suggest_ms, NULL);
}

int tuner_replay_trial(Tuner *t, const Suggestion *sg, int overridden, const Observation *o,
                       double suggest_ms, Error *err)
{
    Suggestion again;
    memset(&again, 0, sizeof again);
    int differs = 0;
    if (!overridden) {
        pthread_mutex_lock(&t->opt_lock);
        int rc = optimizer_suggest(t->opt, &again, err);
        pthread_mutex_unlock(&t->opt_lock);
        if (rc < 0) {
            suggestion_clear(&again);
            return -1;
        }
        differs = !schedule_equal(again.schedule, sg->schedule);
    }
    TrialRecord *rec = add_record(t);
    if (!rec) {
        suggestion_clear(&again);
        return error_set(err, "tuner: out of memory for trial %zu's record", t->n_trials + 1);
    }
    if (!overridden && !differs) {
        /* The re-made suggestion is the one that ran, with all its part predictions. */
        rec->suggestion = again;
        rec->suggestion.schedule->trial = sg->schedule->trial;
    } else {
        suggestion_clear(&again);
        rec->suggestion = *sg;
        rec->suggestion.schedule = schedule_copy(sg->schedule);
        rec->suggestion.machine_mean_s = rec->suggestion.machine_p10_s = NULL;
        rec->suggestion.machine_p90_s = rec->suggestion.device_mean_s = NULL;
    }
    rec->overridden = overridden;
    rec->suggest_ms = suggest_ms;
    record_outcome(t, rec, observation_copy(o));
    return differs;
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
