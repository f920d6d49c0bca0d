/* A resume checks again, before its first new trial, the hosts its journal last left out as
 * refused (the last suggestion's `left_out`: a per-host session's machines, a single one's
 * launch host), and those a trial lost unreachable since that suggestion did not reach, or a
 * trial interrupted since used (a refusal met there, which no later `suggested` line names):
 * a fresh pool knows nothing of them, so the first new trial could try one still
 * refused and be lost unreachable, spending the budget. Each is connected (host key and login,
 * nothing run); one refused is left out from the start, said once; one left out before that
 * answers now (a known_hosts or login fixed meanwhile) is used again, said once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/session/session_priv.h"

/* recheck[m], of a host left out before: under way (not said yet), refused again (said by the
 * refusal's line), or in the trials again (said here). Of a host only in a trial lost
 * unreachable since: under way, or answered (a refusal said by its line as any first one, an
 * answer not said: it was never left out). */
enum {
    RECHECK_UNDER_WAY = 1,
    RECHECK_REFUSED = 2,
    RECHECK_USED = 3,
    RECHECK_LOST_UNDER_WAY = 4,
    RECHECK_LOST_ANSWERED = 5
};

static int recheck_under_way(unsigned char state)
{
    return state == RECHECK_UNDER_WAY || state == RECHECK_LOST_UNDER_WAY;
}

/* Whether trial r since the last suggestion may have met a refusal no `left_out` names, and
 * which of its machines: one lost unreachable, on those it did not reach (its `unreachable`;
 * a journal without the field: every host it used, as the reason says the refusal in words
 * only); one interrupted (the session killed while it ran, or about to run it: its outcome,
 * a refusal met included, never journaled), on every host it used. The single launcher uses
 * its launch host alone (`launch`; -1: another launcher, whose hosts are the schedule's). */
static int lost_on(const TrialRecord *r, size_t m, long launch)
{
    const Schedule *sc = r->suggestion.schedule;
    if (!r->obs || !sc)
        return 0;
    int used = launch >= 0 ? (long)m == launch : sc->worker[m] || sc->ps[m];
    if (r->obs->status == TRIAL_UNREACHABLE)
        return r->obs->unreachable ? r->obs->unreachable[m] != 0 : used;
    return r->obs->status == TRIAL_INTERRUPTED && used;
}

/* Into check (n machines), the hosts to check again: RECHECK_UNDER_WAY for those the journal's
 * last optimizer suggestion was made leaving out (an override's record has none of its own:
 * the one before it says), RECHECK_LOST_UNDER_WAY for the others a trial from that suggestion
 * on may have met refused (lost_on). A refusal ends the trial that meets it unreachable, and
 * is left out only from the next suggestion on: met by the session's last trial (or an
 * override after the last suggestion), no `left_out` names it, and the pool, not the
 * journal, says which is refused now. Returns how many are checked. */
static size_t hosts_to_check(const Tuner *t, unsigned char *check, size_t n, long launch)
{
    size_t from = tuner_n_trials(t);
    while (from > 0 && tuner_trial(t, from - 1)->overridden)
        from--;
    if (from > 0) /* the last suggestion the optimizer made, itself included: run after it */
        from--;
    const TrialRecord *last = from < tuner_n_trials(t) ? tuner_trial(t, from) : NULL;
    const unsigned char *out = last && !last->overridden ? last->left_out : NULL;
    size_t count = 0;
    for (size_t m = 0; m < n; m++)
        if (out && out[m]) {
            check[m] = RECHECK_UNDER_WAY;
            count++;
        }
    for (size_t i = from; i < tuner_n_trials(t); i++)
        for (size_t m = 0; m < n; m++)
            if (!check[m] && lost_on(tuner_trial(t, i), m, launch)) {
                check[m] = RECHECK_LOST_UNDER_WAY;
                count++;
            }
    return count;
}

static int attempt_under_way(const HostInfo *hi)
{
    return hi->state != HOST_IDLE && hi->state != HOST_READY && hi->state != HOST_DOWN;
}

/* The attempt the recheck began has ended: no attempt is under way, or a later one began (the
 * console's pool retries a kept host that is down, so two hosts taking turns in attempts could
 * otherwise hold the first trial for ever). */
static int recheck_answered(const Session *s, size_t m, const HostInfo *hi)
{
    return !attempt_under_way(hi) || hi->attempts > s->recheck_attempts[m];
}

/* hostpool_run_until's done: no rechecked host's attempt is still under way. */
static int rechecks_settled(void *ctx)
{
    const Session *s = ctx;
    for (size_t m = 0; m < s->cluster->n_machines; m++) {
        HostInfo hi;
        if (!recheck_under_way(s->recheck[m]))
            continue;
        hostpool_info(s->pool, m, &hi);
        if (!recheck_answered(s, m, &hi))
            return 0;
    }
    return 1;
}

static void recheck_drop(Session *s)
{
    free(s->recheck);
    free(s->recheck_attempts);
    s->recheck = NULL;
    s->recheck_attempts = NULL;
}

void session_recheck_begin(Session *s)
{
    long launch = session_launch_machine(s);
    if (s->recheck_decided || !s->resume || !s->journal_open || !s->pool || !s->tuner ||
        (strcmp(s->launcher, "per-host") != 0 && launch < 0))
        return;
    const Tuner *t = s->tuner;
    size_t n = s->cluster->n_machines;
    /* No new trial to keep off them: decided when a raised budget gives one (the console's
     * :budget, on_event's TUNER_EVENT_BUDGET). No trial runs before it: the journal's are all
     * the tuner has. */
    if ((int)tuner_n_trials(t) >= tuner_budget(t))
        return;
    s->recheck_decided = 1;
    if (n > hostpool_size(s->pool))
        return;
    recheck_drop(s);
    s->recheck = calloc(n + 1, 1);
    s->recheck_attempts = calloc(n + 1, sizeof *s->recheck_attempts);
    if (!s->recheck || !s->recheck_attempts) {
        recheck_drop(s);
        if (s->spec.on_report) /* the first trial finds out, as before */
            s->spec.on_report(s->spec.report_userdata,
                              "out of memory: the hosts the session last left out as refused "
                              "(or lost its last trial on) are not checked again before its "
                              "first new trial");
        return;
    }
    if (!hosts_to_check(t, s->recheck, n, launch)) {
        recheck_drop(s); /* nothing left out, no trial lost unreachable since */
        return;
    }
    double timeout_s = 0;
    for (size_t m = 0; m < n; m++) {
        if (!s->recheck[m])
            continue;
        HostInfo hi;
        hostpool_info(s->pool, m, &hi);
        /* the console's pool (keep_hosts) is connecting them already */
        if (hi.state == HOST_IDLE)
            hostpool_connect(s->pool, m, 0);
        hostpool_info(s->pool, m, &hi);
        s->recheck_attempts[m] = hi.attempts; /* the one under way now is the recheck's */
        if (hi.connect_timeout_s > timeout_s)
            timeout_s = hi.connect_timeout_s;
    }
    /* `tune` steps the pool only while a trial runs: the answers are waited for here, at most
     * one attempt's deadline. The console's loop steps it, and its next trial waits for them
     * (session_recheck_may_begin), keys and redraws going on. */
    if (!s->spec.stops_on_loop)
        hostpool_run_until(s->pool, rechecks_settled, s,
                           clock_now_ms() + (int64_t)(timeout_s * 1000) + 1000);
}

int session_recheck_may_begin(void *userdata)
{
    Session *s = userdata;
    /* `tune` waited already (session_recheck_begin); nothing would step the pool here */
    return !s->recheck || !s->spec.stops_on_loop || rechecks_settled(s);
}

void session_recheck_say(Session *s, size_t m)
{
    if (!s->recheck || !recheck_under_way(s->recheck[m]))
        return;
    HostInfo hi;
    hostpool_info(s->pool, m, &hi);
    if (!recheck_answered(s, m, &hi))
        return; /* `tune` after its wait: a host that never answered, tried as any such */
    if (s->recheck[m] == RECHECK_LOST_UNDER_WAY) {
        s->recheck[m] = RECHECK_LOST_ANSWERED; /* never left out: a refusal says itself */
        return;
    }
    s->recheck[m] = hi.refused ? RECHECK_REFUSED : RECHECK_USED;
    if (hi.refused) /* said by the refusals' own line, which knows it was checked again */
        return;
    char line[ERROR_MSG_MAX + 256];
    const char *name = s->cluster->machines[m].name;
    if (hi.state == HOST_READY)
        snprintf(line, sizeof line,
                 "%s is in the trials again: it was left out when the session last ran (its "
                 "host refused), and its host key and login are accepted now",
                 name);
    else /* down for a passing reason (a timeout, a connection refused): tried, as any such */
        snprintf(line, sizeof line,
                 "%s is in the trials again: it was left out when the session last ran (its "
                 "host refused), and is not refused now, though down (%s): its trials try it",
                 name, hi.last_error[0] ? hi.last_error : "no answer yet");
    if (s->spec.on_report)
        s->spec.on_report(s->spec.report_userdata, line);
}

int session_recheck_was_left_out(const Session *s, size_t m)
{
    /* under way: only a refused host's line asks, so this check refused it */
    return s->recheck && (s->recheck[m] == RECHECK_UNDER_WAY || s->recheck[m] == RECHECK_REFUSED);
}
