/* Internal: the tuning session's state, shared by remote/launch/tuner.c (its life and loop),
 * tuner_trial.c (a trial begun, launched and recorded), tuner_converge.c (the stop rule),
 * tuner_override.c (the operator's queue) and tuner_replay.c (a resume's trials). Not a
 * public API. */
#ifndef TUNEDECK_TUNER_PRIV_H
#define TUNEDECK_TUNER_PRIV_H

#include <pthread.h>

#include "core/opt/prune.h"
#include "remote/launch/tuner.h"

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
    /* Trials the budget was raised by so that queued overrides run (tuner_override_fit_budget);
     * the operator's own budget is budget minus this. 0 once the budget is set outright.
     * Journaled beside the budget (`raised`) and restored by a resume. */
    int budget_raised;
    int number_offset; /* tuner_set_number_offset */
    TrialRecord *trials;
    size_t n_trials, cap_trials;
    size_t best; /* 1 + the index of tuner_best's trial, kept by tuner_record_outcome; 0: none */
    void *run;   /* the launcher's run of the current trial */
    OverrideQueue queue;  /* the operator's overrides; ids grow over resumes too */
    int stop_requested;   /* tuner_stop(): launch nothing more */
    int cancel_requested; /* tuner_cancel() while PREPARING: the trial is not launched */
    PruneWatch prune;     /* the running trial's iteration stream */
    /* the stop rule */
    int stop_when_converged;
    size_t converged_from; /* trials before this index do not count (budget raised) */
    char converged[ERROR_MSG_MAX];
    char last_error[ERROR_MSG_MAX];
    /* background suggestion */
    pthread_t thread;
    int thread_live;
    int wake[2];
    Suggestion pending;
    /* the machines the suggestion being made leaves out (TrialRecord.left_out, owned until
     * its record takes it); NULL: none */
    unsigned char *suggest_left_out;
    int pending_rc;
    double pending_ms;
    Error pending_err;
};

void tuner_emit(Tuner *t, TunerEvent ev, const TrialRecord *rec);
/* Tells the optimizer which machines its next suggestion leaves out (out: one flag per
 * cluster machine; NULL: none) and keeps a copy in t->suggest_left_out for the trial's record.
 * Out of memory the optimizer is told none, and the record says none: a resume re-makes the
 * suggestion as it was made. Takes opt_lock. */
void tuner_tell_left_out(Tuner *t, const unsigned char *out);
/* A new zeroed record at the end, numbered; NULL when memory runs out. */
TrialRecord *tuner_add_record(Tuner *t);
/* The one place a trial gets its outcome (o, kept; NULL: none): the best, the optimizer,
 * TUNER_EVENT_FINISHED. */
void tuner_record_outcome(Tuner *t, TrialRecord *rec, Observation *o);
/* The next trial from IDLE: a queued override, or the optimizer's suggestion (in the
 * background when async_suggest), unless the stop rule ends the session. */
void tuner_begin_trial(Tuner *t);
/* A suggestion made in the background (PHASE_SUGGESTING) is in: join it and launch it. */
void tuner_collect_suggestion(Tuner *t);
/* PHASE_PREPARING: before_launch asked again, and the trial launched once it lets go. */
void tuner_prepare(Tuner *t);
/* Whether override schedule s uses a machine the session left out (cfg.machine_usable): 1
 * with why naming it and the refusal. An override is the operator's schedule, never moved off
 * it: it would fail unreachable there and spend a trial. */
int tuner_override_unusable(const Tuner *t, const Schedule *s, char *why, size_t cap);
/* Before the next trial: the queued overrides at the head of the queue that use such a machine
 * (refused since they were queued) are dropped unrun, each TUNER_EVENT_DROPPED with its
 * dropped_why, and what the budget was raised for them given back. */
void tuner_override_drop_unusable(Tuner *t);
/* Whether the stop rule ends the optimizer's suggestions now (tuner->converged says why). */
int tuner_converged_now(Tuner *t);
/* Sets the budget (at least 0; TUNER_EVENT_BUDGET when it changes) and lets a session the
 * budget or the stop rule ended go on. budget_raised is the caller's to keep. */
void tuner_budget_to(Tuner *t, int budget);
/* The same without the event: whether it changed (the caller emits, once its own event that
 * carries the budget is out). */
int tuner_budget_set(Tuner *t, int budget);

#endif
