/* A tuning session's stops of the remote process groups its trials, or a killed session's,
 * left behind: begun, stepped on the caller's loop or waited for, one at a time
 * (remote/session/session.h). */
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/session/session_priv.h"

int session_stop_busy(const Session *s)
{
    return s->stop != NULL;
}

int64_t session_stop_deadline(const Session *s)
{
    return s->stop ? tune_stop_deadline(s->stop) : -1;
}

static void end_stop(Session *s)
{
    TuneStop *st = s->stop;
    s->stop = NULL;
    s->verdict_rc = tune_stop_end(st, s->verdict_why, sizeof s->verdict_why);
    /* A trial's own stop decides its launch once (a group left unanswered is not tried again
     * for it); a sweep's end lets the hook look for the trial's own groups next. */
    s->verdict_ready = s->stop_before_trial;
    s->stop_before_trial = 0;
}

int session_stop_step(Session *s, int64_t now_ms)
{
    if (s->stop && tune_stop_settled(s->stop, now_ms))
        end_stop(s);
    return s->stop != NULL;
}

/* A stop begun while another is under way waits for that one first: one at a time, so the
 * results come in the order the stops were asked for. */
void session_stop_wait(Session *s)
{
    if (!s->stop)
        return;
    tune_stop_wait(s->stop);
    end_stop(s);
}

/* A group an earlier trial's dropped connection left on a host is stopped before the next
 * trial runs there: it would hold the trial's ports and devices and skew its timing. On the
 * caller's loop (stops_on_loop) the trial waits ("not yet") while the stop runs in steps. On
 * Slurm through a login node, the trial waits while that node is down (login_hold.h). Once
 * the hosts are refused for good, the session stops, or the trial waits (holds_refused). */
int session_before_launch(void *userdata, const Schedule *sched, char *why, size_t cap)
{
    Session *s = userdata;
    if (s->stop && session_stop_step(s, clock_now_ms()))
        return 1; /* this trial's stop, or the resume's: not answered yet */
    int refused = session_refused_check(s, why, cap);
    if (refused)
        return refused; /* every later trial would fail on the same keys: stop, or hold */
    if (s->verdict_ready) {
        s->verdict_ready = 0;
        if (s->verdict_rc < 0)
            snprintf(why, cap, "%s", s->verdict_why);
        return s->verdict_rc;
    }
    HostPool *pool = s->pool;
    const char *login_host = NULL;
    if (strcmp(s->launcher, "slurm") == 0 && s->slurm) { /* its groups run on the login node */
        pool = slurm_ctl_login_pool(s->slurm, &login_host);
        /* first: a leftover's stop there needs it too */
        if (login_hold_check(&s->login_hold, pool, login_host, s->spec.on_report,
                             s->spec.report_userdata))
            return 1;
        /* then what its drop left running there: it holds the allocation's nodes */
        if (login_steps_check(&s->login_steps, pool, login_host, s->spec.on_report,
                              s->spec.report_userdata))
            return 1;
    }
    if (!pool || !s->procs.lost.n)
        return 0;
    TuneStop *st = NULL;
    tune_orphans_before_trial_begin(pool, s->journal, &s->procs.lost, sched, s->spec.on_report,
                                    s->spec.report_userdata, &st);
    if (!st)
        return 0;
    /* Only the session's own pool is stepped by the caller's loop (a login node's is not). */
    if (s->spec.stops_on_loop && pool == s->pool) {
        s->stop = st;
        s->stop_before_trial = 1;
        return 1;
    }
    tune_stop_wait(st);
    return tune_stop_end(st, why, cap);
}

/* A sweep begun: left to the caller's loop, or waited for here. */
static void sweep(Session *s, TuneStop *st)
{
    if (!st)
        return;
    s->stop = st;
    if (!s->spec.stops_on_loop)
        session_stop_wait(s);
}

void session_stop_interrupted(Session *s, TuneOrphanReportFn report, void *userdata)
{
    if (!s->resume || !s->journal_open || !s->pool)
        return;
    session_stop_wait(s);
    TuneStop *st = tune_orphans_stop_interrupted_begin(s->pool, s->journal, report, userdata);
    tune_journal_release_events(s->journal); /* the groups to stop are the stop's own now */
    sweep(s, st);
}

/* The steps the login node's drops left running, at the end: cancelled if it answers, else
 * said, with the allocation whose release (session_close) ends them. */
static void end_login_steps(Session *s, TuneOrphanReportFn report, void *userdata)
{
    const char *host = NULL;
    HostPool *pool = s->slurm ? slurm_ctl_login_pool(s->slurm, &host) : NULL;
    if (s->login_steps.n || s->login_steps.scancel)
        login_steps_end(&s->login_steps, pool, host, s->alloc.job_id, report, userdata);
}

void session_stop_leftovers(Session *s, TuneOrphanReportFn report, void *userdata)
{
    end_login_steps(s, report, userdata);
    if (!s->pool || !s->procs.seen.n)
        return;
    session_stop_wait(s);
    /* Every group is looked at once more, for safety; only those no stop saw end (a dropped
     * connection's, a failed command's, one a stop before a trial could not reach) may still
     * run, and only those are named when their host does not answer. */
    orphans_mark_seen_end(&s->procs.seen, &s->procs.lost);
    sweep(s, tune_orphans_stop_begin(s->pool, s->journal, &s->procs.seen, "leftover of", 1,
                                     report, userdata));
}

void session_stop_lost(Session *s, TuneOrphanReportFn report, void *userdata)
{
    end_login_steps(s, report, userdata);
    if (!s->pool || !s->procs.lost.n)
        return;
    session_stop_wait(s);
    sweep(s, tune_orphans_stop_begin(s->pool, s->journal, &s->procs.lost, "leftover of", 0,
                                     report, userdata));
    orphans_clear(&s->procs.lost); /* the stop has its own copy; its results are journaled */
}
