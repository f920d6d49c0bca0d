/* Hosts the pool refused for good (a host key unknown, changed or revoked; a login or an
 * identity refused; a configuration, proxy or algorithm it will not use): each is refused
 * again at every attempt until a file is fixed, so no trial of the session reaches it again,
 * since each would fail the same way and spend the budget. Their machines are left out of the
 * optimizer's schedules, each said once; once no trial can run (the single launcher's host
 * refused, or every machine's) the session stops, or, on the console (spec.holds_refused),
 * where the operator can accept a key or reconnect a host, the next trial waits. A host down
 * for a passing reason (connection refused, timeout) is not refused: its trials still try it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/midcut.h"
#include "remote/session/session_priv.h"

/* Whether machine m's host is down refused: refused again at every attempt until a file is
 * fixed (hostkey.c, hostauth.c, hostconn.c), so for the rest of the session. */
static int host_refused(const Session *s, size_t m, HostInfo *hi)
{
    if (!s->pool || m >= hostpool_size(s->pool))
        return 0;
    hostpool_info(s->pool, m, hi);
    return hi->refused;
}

static int key_refused(const HostInfo *hi)
{
    return hi->key == HOSTKEY_UNKNOWN || hi->key == HOSTKEY_CHANGED || hi->key == HOSTKEY_REVOKED;
}

/* Says once per machine that it is left out, with the pool's own words on the refusal. */
static void say_refused(Session *s, size_t m, const HostInfo *hi)
{
    if (!s->refused_said) {
        s->refused_said = calloc(s->cluster->n_machines + 1, 1);
        if (!s->refused_said)
            return;
    }
    if (s->refused_said[m])
        return;
    s->refused_said[m] = 1;
    char line[ERROR_MSG_MAX + 256];
    /* a resume's host left out before too (session_recheck.c): refused again, checked now */
    snprintf(line, sizeof line,
             session_recheck_was_left_out(s, m)
                 ? "%s is still left out of the trials (refused when the session last ran, and "
                   "again now): %s"
                 : "%s is left out of the trials from now on: %s",
             s->cluster->machines[m].name, hi->last_error);
    if (s->spec.on_report)
        s->spec.on_report(s->spec.report_userdata, line);
}

long session_launch_machine(const Session *s)
{
    if (strcmp(s->launcher, "single") != 0)
        return -1;
    return cluster_launch_machine(s->cluster);
}

int session_machine_usable(void *userdata, size_t machine, char *why, size_t cap)
{
    Session *s = userdata;
    HostInfo hi;
    /* The single launcher reaches its launch host alone: only it is left out, recorded for
     * the journal (and a resume's check) and not told to the optimizer (TunerConfig.
     * usable_is_launch_host): no schedule avoids it, and while it is refused no trial runs. */
    long launch = session_launch_machine(s);
    if (strcmp(s->launcher, "per-host") != 0 && (launch < 0 || (size_t)launch != machine))
        return 1;
    session_recheck_say(s, machine); /* a resume's host used again: said before its trials */
    if (!host_refused(s, machine, &hi))
        return 1;
    say_refused(s, machine, &hi);
    midcut(why, cap, hi.last_error); /* its end says what was refused and the fix */
    return 0;
}

/* An attempt under way (the first, an accepted key being checked, a reconnect): with
 * holds_refused, a trial waits for it when no host is ready, rather than launch a trial that
 * may meet a refusal (its exec would wait for that attempt anyway). */
static int attempt_under_way(const HostInfo *hi)
{
    return hi->state != HOST_IDLE && hi->state != HOST_READY && hi->state != HOST_DOWN;
}

static void report(Session *s, const char *line)
{
    if (s->spec.on_report)
        s->spec.on_report(s->spec.report_userdata, line);
}

/* spec.holds_refused: the trial waits, said once per hold with what lets it go on. Only an
 * unknown key can be accepted on the console (a changed or revoked one never is there). */
static int hold(Session *s, const char *names, int several, int unknown_only, int any_unknown)
{
    if (s->refused_hold[0])
        return 1;
    const char *id = s->journal_open ? tune_journal_id(s->journal) : "";
    char *line = s->refused_hold;
    if (unknown_only)
        snprintf(line, sizeof s->refused_hold,
                 "trials wait: the host key of %s is unknown (said above), and no trial can "
                 "run without %s: check the fingerprint and accept %s with a in the hosts "
                 "view (3); q quits, resumable%s%s",
                 names, several ? "them" : "it", several ? "each" : "it",
                 id[0] ? " with tunedeck tune --resume " : "", id);
    else
        snprintf(line, sizeof s->refused_hold,
                 "trials wait: %s %s refused (said above), and no trial can run without %s: "
                 "fix the files as said above, then reconnect with c in the hosts view (3)%s; "
                 "q quits, resumable%s%s",
                 names, several ? "are" : "is", several ? "them" : "it",
                 any_unknown ? " (an unknown host key is accepted there with a)" : "",
                 id[0] ? " with tunedeck tune --resume " : "", id);
    report(s, line);
    return 1;
}

int session_refused_check(Session *s, char *why, size_t cap)
{
    const Cluster *c = s->cluster;
    int single = strcmp(s->launcher, "single") == 0;
    if (!s->pool || (!single && strcmp(s->launcher, "per-host") != 0))
        return 0;
    long launch = single ? session_launch_machine(s) : 0;
    /* a resume's launch host used again: said before its trial (an override's asks no
     * machine_usable of it) */
    if (single && launch >= 0)
        session_recheck_say(s, (size_t)launch);
    char names[256] = "";
    size_t used = 0;
    int keys_only = 1, unknown_only = 1, any_unknown = 0, settling = 0;
    /* per-host: while any machine is left, the optimizer's schedules were moved off the
     * refused ones (an operator's override that names one fails as it would have) */
    for (size_t m = 0; m < c->n_machines; m++) {
        HostInfo hi;
        if (single && (long)m != launch)
            continue;
        if (!host_refused(s, m, &hi)) {
            if (s->spec.holds_refused && attempt_under_way(&hi)) {
                settling = 1;
                continue;
            }
            if (s->refused_hold[0]) {
                s->refused_hold[0] = 0;
                char line[300];
                snprintf(line, sizeof line, "trials go on: %s is no longer refused",
                         c->machines[m].name);
                report(s, line);
            }
            return 0;
        }
        say_refused(s, m, &hi);
        keys_only = keys_only && key_refused(&hi);
        unknown_only = unknown_only && hi.key == HOSTKEY_UNKNOWN;
        any_unknown = any_unknown || hi.key == HOSTKEY_UNKNOWN;
        int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                         c->machines[m].name);
        used = n < 0 || (size_t)n >= sizeof names - used ? sizeof names - 1 : used + (size_t)n;
    }
    if (settling)
        return 1; /* until that attempt says whether it is refused (again) */
    if (!used)
        return 0;
    int several = strchr(names, ',') != NULL;
    if (s->spec.holds_refused)
        return hold(s, names, several, unknown_only, any_unknown);
    s->refused_stopped = 1;
    const char *id = s->journal_open ? tune_journal_id(s->journal) : "";
    /* This trial, cancelled unlaunched, counts against the budget as every begun trial does:
     * when it was the budget's last, a plain resume would run nothing. */
    char more[96] = "";
    int budget = tuner_budget(s->tuner);
    size_t begun = tuner_n_trials(s->tuner);
    if (id[0] && budget > 0 && begun >= (size_t)budget)
        snprintf(more, sizeof more, " --budget N (N above %d: the budget is spent, this trial "
                 "included)", budget);
    /* the files to fix are those each refusal named: known_hosts, an identity, a config */
    snprintf(why, cap,
             "%s%s %s refused (said above), and no trial can run without %s: fix the files as "
             "said above%s%s%s",
             keys_only ? "the host key of " : "", names, several && !keys_only ? "are" : "is",
             several ? "them" : "it", id[0] ? ", then tunedeck tune --resume " : "", id, more);
    return -1;
}

int session_refused_stopped(const Session *s)
{
    return s && s->refused_stopped;
}

const char *session_refused_hold(const Session *s)
{
    return s ? s->refused_hold : "";
}
