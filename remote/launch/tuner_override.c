/* The operator's overrides in a tuning session: queued in order, each run as the next trial,
 * dropped unrun, restored by a resume; the budget raised so that each runs, and given back
 * when one is dropped. */
#include <stdio.h>
#include <string.h>

#include "core/journal/journal_override.h"
#include "remote/launch/tuner_priv.h"

static void emit_queue(Tuner *t, TunerEvent ev, int id, Schedule *s, const char *dropped_why)
{
    TrialRecord rec;
    memset(&rec, 0, sizeof rec);
    rec.overridden = 1;
    rec.override_id = id;
    rec.suggestion.schedule = s;
    rec.dropped_why = dropped_why;
    tuner_emit(t, ev, &rec);
}

int tuner_override_unusable(const Tuner *t, const Schedule *s, char *why, size_t cap)
{
    const Cluster *c = t->cfg.cluster;
    if (t->cfg.usable_is_launch_host)
        return 0; /* not the schedule's machines: an override waits as any trial does */
    for (size_t m = 0; t->cfg.machine_usable && m < c->n_machines; m++) {
        if (!s->worker[m] && !s->ps[m])
            continue;
        char refusal[ERROR_MSG_MAX] = "";
        if (t->cfg.machine_usable(t->cfg.userdata, m, refusal, sizeof refusal))
            continue;
        snprintf(why, cap, "%s is left out of the trials, its host refused for good: %s",
                 c->machines[m].name, refusal[0] ? refusal : "(no reason given)");
        return 1;
    }
    return 0;
}

/* The budget raised, where short, to the trial the n-th queued override runs as (the raise
 * remembered for a drop to give back). Returns whether it changed; the caller emits. */
static int raise_for_first(Tuner *t, size_t n)
{
    if (n > t->queue.n)
        n = t->queue.n;
    if (!n)
        return 0;
    int last = tuner_override_trial(t, n - 1);
    if (last <= t->budget)
        return 0;
    t->budget_raised += last - t->budget;
    return tuner_budget_set(t, last);
}

/* Queues s; with fit, raises the budget (where short) to the trial it runs as before
 * TUNER_EVENT_QUEUED, so that the journal's override_queued line holds the budget that runs
 * it: no cut of the file keeps the override queued without it. */
static int queue(Tuner *t, const Schedule *s, int fit, Error *err)
{
    OverrideQueue *q = &t->queue;
    char why[ERROR_MSG_MAX];
    if (tuner_override_unusable(t, s, why, sizeof why))
        return error_set(err, "%s", why); /* it would fail unreachable, a trial spent */
    if (q->last_id >= JOURNAL_OVERRIDE_ID_MAX)
        return error_set(err, "override: every override id up to %d is taken",
                         JOURNAL_OVERRIDE_ID_MAX);
    if (overridequeue_push(q, q->last_id + 1, s, err) < 0)
        return -1;
    /* The stop rule ends the optimizer's suggestions, not the operator's trials: the queue
     * runs, and the rule decides again after it (an override is not a trial it counts). */
    if (t->phase == PHASE_STOPPED && t->converged[0] && !t->last_error[0]) {
        t->converged[0] = 0;
        t->phase = PHASE_IDLE;
    }
    int raised = fit && raise_for_first(t, q->n);
    emit_queue(t, TUNER_EVENT_QUEUED, q->id[q->n - 1], q->s[q->n - 1], NULL);
    if (raised)
        tuner_emit(t, TUNER_EVENT_BUDGET, NULL);
    return 0;
}

int tuner_override(Tuner *t, const Schedule *s, Error *err)
{
    return queue(t, s, 0, err);
}

int tuner_override_fitted(Tuner *t, const Schedule *s, Error *err)
{
    return queue(t, s, 1, err);
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

void tuner_override_fit_budget(Tuner *t)
{
    if (raise_for_first(t, t->queue.n))
        tuner_emit(t, TUNER_EVENT_BUDGET, NULL);
}

void tuner_override_raise_budget_to(Tuner *t, int to)
{
    if (to <= t->budget)
        return;
    t->budget_raised += to - t->budget;
    tuner_budget_set(t, to);
}

/* What was raised for the queue and is no longer needed goes back: the budget falls to the
 * operator's own, or to what the trials begun and those still queued need if that is more
 * (an override that ran used its raise). A budget never raised for overrides stays. Returns
 * whether it changed; the caller emits. */
static int give_back_budget(Tuner *t)
{
    if (t->budget_raised <= 0)
        return 0;
    int own = t->budget - t->budget_raised;
    int needed = (int)t->n_trials + (t->phase == PHASE_SUGGESTING) + (int)t->queue.n;
    int to = needed > own ? needed : own;
    if (to >= t->budget)
        return 0;
    t->budget_raised -= t->budget - to;
    t->budget = to;
    return 1;
}

/* why: the tuner's own drop (TrialRecord.dropped_why); NULL: the operator's. */
static int drop(Tuner *t, size_t i, const char *why)
{
    int id;
    Schedule *s = overridequeue_take(&t->queue, i, &id);
    if (!s)
        return -1;
    /* The budget given back before DROPPED is emitted: the journal's override_dropped line
     * carries it, so no cut of the file leaves the override gone and its raise kept. */
    int changed = give_back_budget(t);
    emit_queue(t, TUNER_EVENT_DROPPED, id, s, why);
    schedule_free(s);
    if (changed)
        tuner_emit(t, TUNER_EVENT_BUDGET, NULL);
    return 0;
}

int tuner_override_drop(Tuner *t, size_t i)
{
    return drop(t, i, NULL);
}

void tuner_override_drop_unusable(Tuner *t)
{
    char why[ERROR_MSG_MAX], line[ERROR_MSG_MAX + 96];
    while (t->queue.n && tuner_override_unusable(t, t->queue.s[0], why, sizeof why)) {
        snprintf(line, sizeof line, "override queued as trial %d not launched, dropped: %s",
                 tuner_override_trial(t, 0), why);
        drop(t, 0, line);
    }
}
