/* A resume's trials fed back to the tuning session: the optimizer's suggestions re-made so
 * its random state and model advance as they did, and the journaled outcomes observed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/tuner_priv.h"

void tuner_replay(Tuner *t, const Suggestion *sg, const Observation *o, double suggest_ms)
{
    tuner_replay_trial(t, sg, 0, NULL, o, suggest_ms, NULL);
}

/* Whether the journal's schedule is the optimizer's moved off machines it could not reach
 * (leave_out_unusable, tuner_trial.c): those the suggestion uses and the journal's does not. */
static int moved_off(const Schedule *suggested, const Schedule *ran)
{
    const Cluster *c = suggested->cluster;
    unsigned char *out = calloc(c->n_machines + 1, 1);
    Schedule *moved = out ? schedule_copy(suggested) : NULL;
    for (size_t m = 0; moved && m < c->n_machines; m++)
        out[m] = (suggested->worker[m] || suggested->ps[m]) && !ran->worker[m] && !ran->ps[m];
    int same = moved && schedule_leave_out(moved, out, NULL) == 0 && schedule_equal(moved, ran);
    schedule_free(moved);
    free(out);
    return same;
}

int tuner_replay_trial(Tuner *t, const Suggestion *sg, int overridden,
                       const unsigned char *left_out, const Observation *o, double suggest_ms,
                       Error *err)
{
    Suggestion again;
    memset(&again, 0, sizeof again);
    int differs = 0;
    if (!overridden) {
        /* the machines it left out then (journaled), whatever the hosts say now */
        tuner_tell_left_out(t, left_out);
        pthread_mutex_lock(&t->opt_lock);
        int rc = optimizer_suggest(t->opt, &again, err);
        pthread_mutex_unlock(&t->opt_lock);
        if (rc < 0) {
            suggestion_clear(&again);
            return -1;
        }
        differs = !schedule_equal(again.schedule, sg->schedule);
    }
    int moved = differs && moved_off(again.schedule, sg->schedule);
    TrialRecord *rec = tuner_add_record(t);
    if (!rec) {
        suggestion_clear(&again);
        return error_set(err, "tuner: out of memory for trial %zu's record", t->n_trials + 1);
    }
    if (!overridden) {
        rec->left_out = t->suggest_left_out;
        t->suggest_left_out = NULL;
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
    Observation *measured = observation_copy(o);
    if (!rec->suggestion.schedule || !measured) {
        /* the record goes: one without its schedule or outcome would be read through NULL */
        observation_free(measured);
        suggestion_clear(&rec->suggestion);
        free(rec->left_out);
        t->n_trials--;
        return error_set(err, "tuner: out of memory for trial %zu's record", t->n_trials + 1);
    }
    rec->overridden = overridden;
    rec->suggest_ms = suggest_ms;
    tuner_record_outcome(t, rec, measured);
    return differs && !moved;
}
