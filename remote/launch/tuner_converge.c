/* The stop rule in a tuning session (core/opt/stoprule.h): when the optimizer's suggestions
 * stop gaining, no new one starts; a raised budget or an override lets the session go on. */
#include <stdlib.h>

#include "core/opt/stoprule.h"
#include "remote/launch/tuner_priv.h"

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
int tuner_converged_now(Tuner *t)
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
