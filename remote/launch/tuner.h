/* A tuning session: ask the optimizer, launch the trial, tell it the outcome, until the
 * budget is spent. Non-blocking: the caller's poll loop drives it (pollfds/step), and
 * suggest() can run on a background thread that wakes the loop through a pipe. */
#ifndef TUNEDECK_TUNER_H
#define TUNEDECK_TUNER_H

#include "core/base/evloop.h"
#include "core/opt/optimizer.h"
#include "core/opt/stoprule.h"
#include "remote/launch/launcher.h"
#include "remote/launch/overridequeue.h"

typedef struct {
    int trial;              /* 1-based */
    int overridden;         /* the operator's schedule, not the optimizer's */
    int override_id;        /* the queued override it ran (tuner_override_id); 0: none */
    Suggestion suggestion;  /* the schedule run and what the model predicted for it */
    double suggest_ms;      /* wall time suggest() took */
    Observation *obs;       /* NULL while the trial runs */
    /* The launcher was asked to start it (after TUNER_EVENT_LAUNCHED): 0 while before_launch
     * holds it, so a trial halted then is told apart from one halted while it ran. 0 for
     * replayed trials (tuner_replay_trial: their outcome says what became of them). */
    int launched;
    double started_s, finished_s; /* clock_now_s() */
    /* TUNER_EVENT_DROPPED: why the tuner dropped the override itself, unrun (it names a
     * machine machine_usable refuses), a line to say to the operator; NULL: the operator's drop */
    const char *dropped_why;
    /* The machines the optimizer was told to leave out when it made this suggestion (those
     * machine_usable refused then: optimizer_leave_out), one flag per cluster machine, owned;
     * NULL: none (every machine usable, or the operator's override). The journal keeps it
     * (the suggested line's `left_out`), so that a resume re-makes the suggestion with the
     * same machines left out. */
    unsigned char *left_out;
} TrialRecord;

/* CONVERGED: the stop rule ended the session (rec: the last trial; tuner_converged says why).
 * BUDGET: the budget changed (rec: NULL; tuner_budget says it, tuner_budget_raised how much
 * of it overrides raised), or only that part of it: tuner_set_budget (of the same number, it
 * makes a raise the operator's), tuner_override_fitted or
 * tuner_override_fit_budget raising it for the queue, or tuner_override_drop giving that back.
 * QUEUED, DROPPED: an override joined or left the queue without running (rec: a record of it
 * that lives for the call only: trial 0, overridden 1, its override_id and schedule, no
 * prediction; DROPPED by the tuner itself: its dropped_why), so the journal keeps the queue a
 * resume restores. */
/* STARTED: the trial is begun (its number, the prune rule's reset) and before_launch is asked;
 * LAUNCHED: before_launch let it go and nothing cancelled it: the launcher starts it right
 * after (rec: the trial). A trial cancelled or halted while before_launch held it (a leftover
 * group being stopped) had STARTED and never LAUNCHED: the journal's `started` line is
 * written at LAUNCHED, so that a resume knows it never ran. */
typedef enum {
    TUNER_EVENT_SUGGESTED,
    TUNER_EVENT_STARTED,
    TUNER_EVENT_LAUNCHED,
    TUNER_EVENT_FINISHED,
    TUNER_EVENT_CONVERGED,
    TUNER_EVENT_BUDGET,
    TUNER_EVENT_QUEUED,
    TUNER_EVENT_DROPPED
} TunerEvent;
typedef void (*TunerEventFn)(void *userdata, TunerEvent ev, const TrialRecord *rec);
/* Called after TUNER_EVENT_STARTED, just before a trial is launched (its schedule carries its
 * number): returning -1 with why filled stops the session there, as tuner_stop(why) does: the
 * trial is cancelled ("not launched: why") and tuner_last_error says why. Returning 1 says
 * "not yet" (a leftover group is being stopped on its hosts by the caller's loop): the trial
 * waits, tuner_running() holds, and the hook is asked again on every step until it returns 0
 * or -1; a tuner_stop or tuner_cancel meanwhile cancels the trial once the hook lets go. */
typedef int (*TunerBeforeLaunchFn)(void *userdata, const Schedule *s, char *why, size_t cap);
/* Whether machine `machine` can take part in a trial: 0 for one the session cannot reach for
 * good (its host refused for good: a host key, a login, ...), with why filled (the refusal in
 * the pool's words). The optimizer knows nothing of hosts: before each suggestion it is told
 * which machines are left out (optimizer_leave_out, TrialRecord.left_out), and its search
 * skips schedules that use one, so that it proposes new schedules on the machines left rather
 * than one it would run again once moved. A schedule of its that still uses such a machine
 * (the first design, an optimizer without such a search, no candidate left) is moved off it
 * (schedule_leave_out) and predicted again before it is suggested; one that cannot be moved
 * (no machine left, or the batch does not fit on the rest) is left as it is: before_launch
 * decides. An operator's override is the operator's schedule, never
 * moved: one that uses such a machine is not queued (tuner_override's error says which and
 * why), and one already queued when its machine is refused is dropped unrun when its turn comes
 * (TUNER_EVENT_DROPPED with dropped_why), as each would fail unreachable and spend a trial. */
typedef int (*TunerUsableFn)(void *userdata, size_t machine, char *why, size_t cap);
/* Whether the next trial may begin now, before its suggestion is made: 0 holds it (a resume
 * checking, on the caller's loop, the hosts its journal left out, whose answers decide which
 * machines the suggestion leaves out); asked again every TUNER_PREPARE_RECHECK_MS. */
typedef int (*TunerMayBeginFn)(void *userdata);

typedef struct {
    const Cluster *cluster;
    const JobSpec *job;
    const char *optimizer;     /* by name */
    uint64_t seed;
    int budget;                /* trials */
    const LauncherKind *launcher;
    LaunchConfig launch;
    int async_suggest;         /* suggest() on a background thread (the console) */
    int no_prune;              /* run every trial to its end (--no-prune) */
    int stop_when_converged;   /* stop when EI stays tiny (--stop-when-converged) */
    TunerEventFn on_event;
    TunerBeforeLaunchFn before_launch; /* optional; shares userdata with on_event */
    TunerUsableFn machine_usable;      /* optional (NULL: every machine); the same */
    /* machine_usable speaks of the host a launcher runs every trial from, not of the
     * schedule's machines (the single launcher's launch host): one it refuses is recorded
     * left out (TrialRecord.left_out, journaled, so that a resume checks it again) but not
     * told to the optimizer, no schedule is moved off it and no override refused or dropped
     * for it (no schedule avoids it; while it is refused no trial runs: before_launch) */
    int usable_is_launch_host;
    TunerMayBeginFn may_begin;         /* optional (NULL: always); the same */
    void *userdata;
} TunerConfig;

typedef struct Tuner Tuner;

Tuner *tuner_new(const TunerConfig *cfg, Error *err);
void tuner_free(Tuner *t);

size_t tuner_pollfds(Tuner *t, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void tuner_step(Tuner *t, const struct pollfd *fds, size_t n, int64_t now_ms);
/* Registers the session on a loop (its pollfds/step); returns the source id or -1. */
long tuner_attach(Tuner *t, EvLoop *l);
/* Runs to the end of the budget with its own poll loop (headless). */
int tuner_run_blocking(Tuner *t, Error *err);

int tuner_done(const Tuner *t);        /* budget spent and nothing running */
int tuner_running(const Tuner *t);     /* a trial or a suggestion is in flight */
size_t tuner_n_trials(const Tuner *t);
const TrialRecord *tuner_trial(const Tuner *t, size_t i);
const TrialRecord *tuner_best(const Tuner *t); /* fastest ok trial, or NULL */
const char *tuner_last_error(const Tuner *t);  /* why the session stopped early, or NULL */
int tuner_budget(const Tuner *t);
/* The operator's budget: from now on no override's raise is in it to give back. */
void tuner_set_budget(Tuner *t, int budget);
/* How much of the budget tuner_override_fit_budget raised for the queue, to be given back when
 * an override is dropped; 0 after tuner_set_budget. The journal keeps it beside the budget
 * (its `raised`), or a resumed session would keep a raise nobody asked for. */
int tuner_budget_raised(const Tuner *t);
/* Resume: that part of the budget as the journal last said it (held within 0..budget); no
 * event: it is journaled. */
void tuner_restore_budget_raised(Tuner *t, int raised);
void tuner_set_paused(Tuner *t, int paused); /* paused: no new trial starts */
int tuner_paused(const Tuner *t);
/* The operator's overrides wait in a FIFO queue (overridequeue.h): each runs as the next
 * trial, in the order queued, before the optimizer suggests again. At most
 * OVERRIDEQUEUE_MAX wait: an operator planning more is told so rather than one being lost. */
/* Queues this schedule (validated first) behind those already queued. -1 with why in err when
 * it is invalid, uses a machine the session left out (TunerUsableFn) or the queue is full;
 * emits TUNER_EVENT_QUEUED. A session the stop rule ended
 * goes on for the queue (the rule decides again after it). */
int tuner_override(Tuner *t, const Schedule *s, Error *err);
/* The same, and the budget raised where short to the trial it runs as, as
 * tuner_override_fit_budget does (the console: each override is promised its trial). The raise
 * comes before TUNER_EVENT_QUEUED, so that its handler sees (and the journal's line holds) the
 * budget that runs it; TUNER_EVENT_BUDGET follows when it changed. */
int tuner_override_fitted(Tuner *t, const Schedule *s, Error *err);
/* The queued overrides, 0 the next to run. */
size_t tuner_overrides(const Tuner *t);
const Schedule *tuner_override_at(const Tuner *t, size_t i);
/* Its id: 1, 2, ... in the order queued over the whole session (the journal's), kept by a
 * resume. 0 when there is no such override. */
int tuner_override_id(const Tuner *t, size_t i);
/* The trial number (TrialRecord.trial) the i-th queued override will run as, if nothing is
 * dropped before it: after the trials so far and a suggestion being made. */
int tuner_override_trial(const Tuner *t, size_t i);
/* Raises the budget, where it is short, to the trial the last queued override runs as (the
 * console's override launched past the budget: each is promised its trial); emits
 * TUNER_EVENT_BUDGET when it changes. The raise is remembered for tuner_override_drop. */
void tuner_override_fit_budget(Tuner *t);
/* Resume: the budget raised to `to` where short, the raise counted as the overrides' (for
 * tuner_override_drop to give back). Emits nothing: the resume's own line says the budget. */
void tuner_override_raise_budget_to(Tuner *t, int to);
/* Takes the i-th override out of the queue unrun (emits TUNER_EVENT_DROPPED); -1 if none.
 * What tuner_override_fit_budget raised the budget by and the queue no longer needs is given
 * back (TUNER_EVENT_BUDGET); a budget set by tuner_set_budget since is the operator's, kept.
 * The budget is given back before TUNER_EVENT_DROPPED is emitted, so that its handler sees
 * (and the journal's line holds) the budget the drop leaves. */
int tuner_override_drop(Tuner *t, size_t i);
/* Resume: the last override id the journal used (queued, dropped or run; at most
 * JOURNAL_OVERRIDE_ID_MAX), so that the ids of overrides queued from now on are new ones. */
void tuner_override_ids_from(Tuner *t, int last);
/* Resume: puts an override the journal shows queued and never run back in the queue under
 * its id, validated against this tuner's cluster, without an event (it is journaled). */
int tuner_override_restore(Tuner *t, int id, const Schedule *s, Error *err);
/* tuner_predict's answer while a suggestion holds the model: ask again later. Its own code, so
 * that no caller tells it by the message (a machine named busybox-3 is not a busy model). */
enum { TUNER_PREDICT_BUSY = -2 };
/* The model's prediction for any schedule; safe while suggest() runs in the background. 0, -1
 * with err when the model cannot predict it (it will not get better), or TUNER_PREDICT_BUSY
 * with err saying so. */
int tuner_predict(Tuner *t, const Schedule *s, Suggestion *out, Error *err);
/* Feeds a trial measured before (a resumed journal) to the optimizer as if just run. */
void tuner_replay(Tuner *t, const Suggestion *sg, const Observation *o, double suggest_ms);
/* The same, saying whether the trial was the operator's: for the optimizer's own trials
 * suggest() runs again first, so that its random state and model advance exactly as they did
 * and the next suggestion is the one it would have made. Returns 1 when the re-made schedule
 * differs from the journal's (the optimizer or its inputs changed), 0 when it is the same
 * or the journal's is it moved off machines the session could not reach (TunerUsableFn),
 * -1 with why in err when suggest() failed or memory for the trial's record ran out. Emits
 * only TUNER_EVENT_FINISHED. */
/* left_out: the machines the optimizer was told to leave out when it made the suggestion (the
 * journal's TrialRecord.left_out; NULL: none), told it again before it re-makes it. */
int tuner_replay_trial(Tuner *t, const Suggestion *sg, int overridden,
                       const unsigned char *left_out, const Observation *o, double suggest_ms,
                       Error *err);
/* Stops launching: the trial about to start (if any) is recorded as cancelled with this
 * reason, nothing more starts, and tuner_last_error() says why. Safe from on_event. */
void tuner_stop(Tuner *t, const char *reason);
/* The session was interrupted (tune's SIGINT/SIGTERM): the running trial is stopped as
 * tuner_free stops it (its processes, its steps, waited for) but gets no outcome, so its
 * record keeps obs NULL and no event is emitted: the journal shows it started and never
 * finished, as a killed session's, and a resume marks it interrupted. Nothing more starts.
 * The records stay readable (the caller's summary) until tuner_free. */
void tuner_halt(Tuner *t);
/* Stops the running trial; it is recorded as cancelled. */
void tuner_cancel(Tuner *t);
const char *tuner_optimizer_name(const Tuner *t);
/* A trial's number outside the tuner: in its schedule when launched (so TUNEDECK_TRIAL, its
 * input, the process groups the launchers report and the journal's events), where a resumed
 * journal's trials lost to damaged lines keep their numbers taken. TrialRecord.trial stays
 * 1..n (the screen, the budget); the outside number is it plus the offset set here (0 unless
 * a resume crossed such a gap). */
void tuner_set_number_offset(Tuner *t, int offset);
int tuner_outside_number(const Tuner *t, int trial);
/* The stop rule (core/opt/stoprule.h, stoprule_default): for the last TUNER_CONVERGED_STREAK
 * suggestions, what each could still gain over the best time (its lower end, the model's band
 * rescaled to its errors and corrected by its bias on recent trials) was within the model's
 * error on those trials, and each expected less
 * than TUNER_CONVERGED_EI_FRACTION of it (when it says); then no new trial starts. Trials before
 * a raised budget do not count toward a new stop. The default rule's values, for help texts. */
#define TUNER_CONVERGED_STREAK STOPRULE_REGRET_STREAK
#define TUNER_CONVERGED_EI_FRACTION STOPRULE_REGRET_EI_FRACTION
/* A trial as the stop rule sees it: what its suggestion predicted and what it measured. The
 * tuner, its tests and bench/stoprule judge the same trials. */
StopTrial tuner_stop_trial(const TrialRecord *r);
void tuner_set_stop_when_converged(Tuner *t, int on);
int tuner_stop_when_converged(const Tuner *t);
/* Why tuning stopped by the stop rule, or NULL while it has not. */
const char *tuner_converged(const Tuner *t);

#endif
