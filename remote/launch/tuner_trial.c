/* A trial's way from IDLE to its outcome: a queued override or the optimizer's suggestion
 * (on a background thread in the console), before_launch's wait, the launch, and the prune
 * rule on its iterations. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/launch/tuner_priv.h"

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

/* Launches the trial of a filled-in record; a launch that cannot start is a failed trial. */
static void launch(Tuner *t, TrialRecord *rec)
{
    /* The number its command (TUNEDECK_TRIAL, its input), its process groups and the
     * journal know it by. */
    rec->suggestion.schedule->trial = tuner_outside_number(t, rec->trial);
    rec->started_s = clock_now_s();
    /* A probe only where a trial follows that its measurement can guide. */
    prune_watch_reset(&t->prune, !measured_any(t) && (int)t->n_trials < t->budget);
    tuner_emit(t, TUNER_EVENT_STARTED, rec);
    if (t->stop_requested) { /* tuner_stop() from the event handler: do not launch */
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "not launched: %s", t->last_error);
        tuner_record_outcome(t, rec, o);
        t->phase = PHASE_STOPPED;
        return;
    }
    t->phase = PHASE_PREPARING;
    tuner_prepare(t);
}

/* The trial of the last record, once before_launch lets it go. */
void tuner_prepare(Tuner *t)
{
    TrialRecord *rec = &t->trials[t->n_trials - 1];
    /* Room for "not launched: " before it in the trial's reason: a verdict that filled the
     * buffer (every group a stop left running) lost its last words, how to go on. */
    char why[sizeof((Observation *)0)->reason - (sizeof "not launched: " - 1)];
    int ready =
        t->cfg.before_launch
            ? t->cfg.before_launch(t->cfg.userdata, rec->suggestion.schedule, why, sizeof why)
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
        tuner_record_outcome(t, rec, o);
        t->phase = PHASE_STOPPED;
        return;
    }
    /* its handler may stop it (a failed journal write): then it is not launched either */
    if (!t->stop_requested && !t->cancel_requested)
        tuner_emit(t, TUNER_EVENT_LAUNCHED, rec);
    if (t->stop_requested || t->cancel_requested) { /* asked for while PREPARING */
        Observation *o = observation_new(rec->suggestion.schedule);
        o->status = TRIAL_CANCELLED;
        snprintf(o->reason, sizeof o->reason, "not launched: %s",
                 t->stop_requested ? t->last_error : "cancelled");
        t->cancel_requested = 0;
        tuner_record_outcome(t, rec, o);
        t->phase = t->stop_requested ? PHASE_STOPPED : PHASE_IDLE;
        return;
    }
    Error err;
    rec->launched = 1;
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
        tuner_record_outcome(t, rec, o);
        t->phase = t->stop_requested ? PHASE_STOPPED : PHASE_IDLE;
        return;
    }
    t->phase = PHASE_RUNNING;
}

/* No room for the next trial's record: the session stops as on any failure of its own, with
 * the reason in last_error (tuner_last_error, the run's error). */
static void stop_out_of_memory(Tuner *t)
{
    snprintf(t->last_error, sizeof t->last_error, "tuner: out of memory for trial %zu's record",
             t->n_trials + 1);
    t->phase = PHASE_STOPPED;
}

/* The machines the session cannot reach now (machine_usable refuses them), one flag each;
 * NULL without machine_usable (or out of memory: none then). */
static unsigned char *unusable_now(Tuner *t)
{
    const Cluster *c = t->cfg.cluster;
    unsigned char *out = t->cfg.machine_usable ? calloc(c->n_machines + 1, 1) : NULL;
    for (size_t m = 0; out && m < c->n_machines; m++) {
        char why[ERROR_MSG_MAX];
        out[m] = !t->cfg.machine_usable(t->cfg.userdata, m, why, sizeof why);
    }
    return out;
}

void tuner_tell_left_out(Tuner *t, const unsigned char *out)
{
    const Cluster *c = t->cfg.cluster;
    free(t->suggest_left_out);
    t->suggest_left_out = NULL;
    int any = 0;
    for (size_t m = 0; out && m < c->n_machines; m++)
        any |= out[m] != 0;
    if (any && (t->suggest_left_out = calloc(c->n_machines, 1)))
        for (size_t m = 0; m < c->n_machines; m++)
            t->suggest_left_out[m] = out[m] != 0;
    if (t->cfg.usable_is_launch_host)
        return; /* recorded only: no schedule avoids the launch host */
    pthread_mutex_lock(&t->opt_lock);
    optimizer_leave_out(t->opt, t->suggest_left_out);
    pthread_mutex_unlock(&t->opt_lock);
}

/* The optimizer's schedule moved off the machines the session cannot reach (machine_usable),
 * with the model's prediction for the schedule that will run (none when it cannot say): a
 * trial there would fail unreachable, teach the optimizer nothing, and spend the budget. The
 * optimizer was told which machines to leave out (tuner_tell_left_out), so this is for the
 * schedules it could not keep off them (its first design, one refused since it was told, an
 * optimizer without a search, no candidate left). */
static void leave_out_unusable(Tuner *t, Suggestion *sg)
{
    const Cluster *c = t->cfg.cluster;
    const Schedule *s = sg->schedule;
    if (t->cfg.usable_is_launch_host)
        return;
    unsigned char *out = unusable_now(t);
    int uses = 0;
    for (size_t m = 0; out && m < c->n_machines; m++)
        uses |= out[m] && (s->worker[m] || s->ps[m]);
    Schedule *moved = uses ? schedule_copy(s) : NULL;
    if (moved && schedule_leave_out(moved, out, NULL) == 0) {
        Suggestion again;
        memset(&again, 0, sizeof again);
        Error err;
        pthread_mutex_lock(&t->opt_lock);
        if (optimizer_predict(t->opt, moved, &again, &err) < 0)
            suggestion_clear(&again);
        pthread_mutex_unlock(&t->opt_lock);
        schedule_free(again.schedule);
        again.schedule = moved;
        moved = NULL;
        suggestion_clear(sg);
        *sg = again;
    }
    schedule_free(moved);
    free(out);
}

static void accept_suggestion(Tuner *t, Suggestion *sg, double ms)
{
    leave_out_unusable(t, sg);
    TrialRecord *rec = tuner_add_record(t);
    if (!rec) {
        suggestion_clear(sg);
        stop_out_of_memory(t);
        return;
    }
    rec->left_out = t->suggest_left_out; /* what the suggestion was made leaving out */
    t->suggest_left_out = NULL;
    rec->suggestion = *sg;
    memset(sg, 0, sizeof *sg);
    rec->suggest_ms = ms;
    tuner_emit(t, TUNER_EVENT_SUGGESTED, rec);
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

void tuner_collect_suggestion(Tuner *t)
{
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
}

void tuner_begin_trial(Tuner *t)
{
    /* an override whose host was refused for good since it was queued would fail unreachable */
    tuner_override_drop_unusable(t);
    if ((int)t->n_trials >= t->budget)
        return; /* what was raised for it given back: nothing left to run */
    if (!t->queue.n && tuner_converged_now(t)) {
        t->phase = PHASE_STOPPED;
        tuner_emit(t, TUNER_EVENT_CONVERGED, &t->trials[t->n_trials - 1]);
        return;
    }
    if (t->queue.n) {
        /* the record first: without one the override stays queued, for the journal's
         * resume to run (taken first, it was lost, and the record written through NULL) */
        TrialRecord *rec = tuner_add_record(t);
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
        tuner_emit(t, TUNER_EVENT_SUGGESTED, rec);
        launch(t, rec);
        return;
    }
    /* The machines refused for good so far: the optimizer's search skips schedules on them
     * (told here, on the loop's thread, where machine_usable may be asked). */
    unsigned char *out = unusable_now(t);
    tuner_tell_left_out(t, out);
    free(out);
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

int tuner_predict(Tuner *t, const Schedule *s, Suggestion *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (pthread_mutex_trylock(&t->opt_lock) != 0) {
        error_set(err, "the model is busy with a suggestion; try again");
        return TUNER_PREDICT_BUSY;
    }
    int rc = optimizer_predict(t->opt, s, out, err);
    pthread_mutex_unlock(&t->opt_lock);
    return rc;
}
