/* The orphans glue shared by `tunedeck tune` and the console (see tune_orphans.h). */
#include "remote/session/tune_orphans.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/plural.h"
#include "remote/session/sweep_unchecked.h"

void tune_procs_on_proc(void *userdata, int trial, const char *machine, long pgid,
                        const char *mark)
{
    TuneProcs *pl = userdata;
    /* `trial` is the number its schedule carried (the file's: tuner_outside_number), the one
     * its processes' TUNEDECK_TRIAL holds; the mark is what a later stop looks for. */
    cJSON *ev = orphans_proc_json(trial, machine, pgid, mark);
    if (ev)
        tune_journal_append(pl->tj, ev);
    orphans_add(&pl->seen, trial, machine, pgid, mark);
}

static void journal_stop_result(TuneJournal *tj, int trial, const char *machine, long pgid,
                                const char *mark, const char *result)
{
    /* Whole or not written: a stop line without its result reads to a resume as decided, and
     * the line before it (a drop's "not stopped") would no longer be the last word. */
    cJSON *ev = orphans_proc_json(trial, machine, pgid, mark);
    cJSON *event = ev ? cJSON_CreateString("remote_process_stop") : NULL;
    if (!event || !cJSON_ReplaceItemInObject(ev, "event", event)) {
        cJSON_Delete(event);
        cJSON_Delete(ev);
        return;
    }
    if (!cJSON_AddStringToObject(ev, "result", result)) {
        cJSON_Delete(ev);
        return;
    }
    tune_journal_append(tj, ev);
}

static void journal_stop(TuneJournal *tj, const Orphan *o)
{
    journal_stop_result(tj, o->trial, o->machine, o->pgid, o->mark, o->result);
}

const char *tune_procs_lost_result(ProcLostCause cause)
{
    /* "its end was not seen" first, for every cause: what a reader of the journal looks for */
    switch (cause) {
    case PROC_LOST_DROPPED:
        return "not stopped: its end was not seen (its connection dropped, which stops nothing "
               "there)";
    case PROC_LOST_FAILED:
        return "not stopped: its end was not seen (its command failed, and what it started may "
               "still run)";
    case PROC_LOST_STOP_UNANSWERED:
        break;
    }
    return "not stopped: its end was not seen (the stop of its group went unanswered)";
}

void tune_procs_on_proc_lost(void *userdata, int trial, const char *machine, long pgid,
                             const char *mark, ProcLostCause cause)
{
    TuneProcs *pl = userdata;
    /* Journaled now, before its trial's outcome: a session killed before the stop before the
     * next trial or its end's sweep left a finished trial's group that no resume looked at
     * (a resume stops a finished trial's group only when its last stop line says "not
     * stopped"). The stop that decides it writes the line after this one. Kept even out of
     * memory for the list: the resume still finds it. The reason is this group's cause: one
     * sentence naming all three left the operator to guess which. */
    journal_stop_result(pl->tj, trial, machine, pgid, mark, tune_procs_lost_result(cause));
    orphans_add(&pl->lost, trial, machine, pgid, mark);
}

/* One stop under way (tune_orphans.h): the groups it owns, what to do with each result. */
struct TuneStop {
    int before_trial; /* else a sweep (resume, end of session) */
    TuneJournal *tj;
    OrphanList here;  /* the groups stopped, its own (the caller's lists may change meanwhile) */
    OrphanList *lost; /* before a trial: where a group not stopped goes back */
    int trial;        /* before a trial: its number */
    char what[32];    /* a sweep's lines start with it */
    char check[48];   /* a sweep's line for a host that did not answer starts with it */
    HostPool *pool;   /* where the host's login is read for that line */
    int quiet;
    int announced; /* before a trial: "stopping N leftover process groups..." was said */
    TuneOrphanReportFn report;
    void *userdata;
    OrphanStop *run; /* NULL: out of memory, nothing sent */
};

static TuneStop *tune_stop_new(TuneJournal *tj, TuneOrphanReportFn report, void *userdata)
{
    TuneStop *st = calloc(1, sizeof *st);
    if (st) {
        st->tj = tj;
        st->report = report;
        st->userdata = userdata;
    }
    return st;
}

/* Sends the stop commands for st->here. Out of memory for them, each group's result says so,
 * as a kill that failed would: a before-trial stop keeps the group for a later trial, a sweep
 * reports and journals it. */
static void stop_run_begin(TuneStop *st, HostPool *pool, double timeout_s)
{
    st->pool = pool;
    st->run = orphans_stop_begin(pool, &st->here, timeout_s);
    if (!st->run)
        for (size_t i = 0; i < st->here.n; i++)
            snprintf(st->here.items[i].result, sizeof st->here.items[i].result,
                     "not stopped: out of memory");
}

/* A sweep of the groups in *owned, which it takes over (*owned is left empty; out of memory,
 * they are freed and NULL is returned). */
static TuneStop *sweep_begin(HostPool *pool, TuneJournal *tj, OrphanList *owned, const char *what,
                             int quiet, TuneOrphanReportFn report, void *userdata)
{
    TuneStop *st = tune_stop_new(tj, report, userdata);
    if (!st) {
        orphans_clear(owned);
        return NULL;
    }
    snprintf(st->what, sizeof st->what, "%s", what);
    snprintf(st->check, sizeof st->check, "%s",
             strcmp(what, "interrupted") == 0 ? "interrupted trials' check" : "leftover check");
    st->quiet = quiet;
    st->here = *owned;
    *owned = (OrphanList){0};
    stop_run_begin(st, pool, 15);
    /* A host down at the first ask that the pool connects again within the 15 s is asked once
     * more, for the groups that may still run there: a sweep is the last look at them. */
    if (st->run)
        orphans_stop_retry_when_back(st->run);
    return st;
}

TuneStop *tune_orphans_stop_begin(HostPool *pool, TuneJournal *tj, const OrphanList *l,
                                  const char *what, int quiet, TuneOrphanReportFn report,
                                  void *userdata)
{
    if (!l->n)
        return NULL;
    /* One allocation: all of the list or none of it (the stop fills in the results). */
    OrphanList copy = {malloc(l->n * sizeof *l->items), l->n};
    if (!copy.items)
        return NULL;
    memcpy(copy.items, l->items, l->n * sizeof *l->items);
    return sweep_begin(pool, tj, &copy, what, quiet, report, userdata);
}

int tune_stop_settled(const TuneStop *st, int64_t now_ms)
{
    return !st->run || orphans_stop_settled(st->run, now_ms);
}

int64_t tune_stop_deadline(const TuneStop *st)
{
    return st->run ? orphans_stop_deadline(st->run) : 0;
}

void tune_stop_wait(TuneStop *st)
{
    if (st->run)
        orphans_stop_wait(st->run);
}

/* What a group's stop said, without the "not stopped: " a line about it says in its own
 * words. */
static const char *said_of(const Orphan *o)
{
    return strncmp(o->result, "not stopped: ", 13) == 0 ? o->result + 13 : o->result;
}

/* A host that did not answer: nothing was checked there, so one line for the host, naming
 * only the groups that may still run (those a trial's own stop saw end were swept for safety
 * and say nothing), with how to stop them by hand; those are journaled `not stopped: why`, as
 * a resume or an operator reading the journal must see them. */
static void say_unchecked_host(TuneStop *st, size_t first)
{
    const Orphan *o = &st->here.items[first];
    const char *why = said_of(o);
    for (size_t i = first; i < st->here.n; i++) {
        const Orphan *g = &st->here.items[i];
        if (g->silent && !g->seen_end && strcmp(g->machine, o->machine) == 0)
            journal_stop(st->tj, g);
    }
    long h = st->pool ? hostpool_find(st->pool, o->machine) : -1;
    HostInfo info;
    if (h >= 0)
        hostpool_info(st->pool, (size_t)h, &info);
    char *line = sweep_unchecked_line(&st->here, o->machine, h >= 0 ? &info : NULL, st->check, why);
    if (st->report)
        st->report(st->userdata, line ? line : "a leftover check: out of memory for its line");
    free(line);
}

/* The first silent group of its host in the list (the host's line is said there). */
static int first_silent_of_host(const OrphanList *l, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (l->items[k].silent && strcmp(l->items[k].machine, l->items[i].machine) == 0)
            return 0;
    return 1;
}

static void sweep_end(TuneStop *st)
{
    for (size_t i = 0; i < st->here.n; i++) {
        const Orphan *o = &st->here.items[i];
        if (o->silent) {
            if (first_silent_of_host(&st->here, i))
                say_unchecked_host(st, i);
            continue;
        }
        /* A group no stop saw end is journaled "not stopped" (tune_procs_on_proc_lost): its
         * "gone" is written, or a resume would look for it again, but not said. */
        if (st->quiet && strcmp(o->result, "gone") == 0) {
            if (!o->seen_end)
                journal_stop(st->tj, o);
            continue;
        }
        /* A resume's sweep takes finished trials' groups too, that an earlier stop left
         * running: those are no interrupted trial's. */
        const char *what = o->finished && strcmp(st->what, "interrupted") == 0 ? "leftover of"
                                                                               : st->what;
        char line[512];
        snprintf(line, sizeof line, "%s trial %d: process group %ld on %s: %s", what, o->trial,
                 o->pgid, o->machine, o->result);
        if (st->report)
            st->report(st->userdata, line);
        journal_stop(st->tj, o);
    }
}

void tune_orphans_stop(HostPool *pool, TuneJournal *tj, OrphanList *l, const char *what, int quiet,
                       TuneOrphanReportFn report, void *userdata)
{
    TuneStop *st = tune_orphans_stop_begin(pool, tj, l, what, quiet, report, userdata);
    if (!st)
        return;
    tune_stop_wait(st);
    tune_stop_end(st, NULL, 0);
}

int tune_orphans_worth_trying(const Orphan *o, HostState host_state)
{
    return !o->unreached || host_state == HOST_READY;
}

/* Room kept for "; and N more" while a group that may not fit follows (cmd/gpu_errors.c). */
enum { MORE_MAX = 32 };

int tune_orphans_verdict(const OrphanList *tried, int trial, const char *session_id, char *why,
                         size_t cap)
{
    size_t running = 0, first = 0;
    for (size_t i = tried->n; i-- > 0;)
        if (orphans_still_running(&tried->items[i])) {
            running++;
            first = i;
        }
    if (!running)
        return 0;
    const char *id = session_id && session_id[0] ? session_id : "ID";
    const Orphan *o = &tried->items[first];
    if (running == 1) {
        /* Short enough for a trial's reason (256) with usual names: it is what the console
         * shows. */
        snprintf(why, cap,
                 "trial %d's leftover process group %ld on %s still runs (%s): stop it by hand "
                 "(kill -KILL -- -%ld on %s), then --resume %s; trial %d was not launched",
                 o->trial, o->pgid, o->machine, said_of(o), o->pgid, o->machine, id, trial);
        return -1;
    }
    /* Every group that still runs, each whole with its host and what its kill said (an
     * operator stops each by hand), then how many more when they do not all fit: a verdict
     * that named only the first sent the operator back to a session that stopped again. */
    char tail[160];
    snprintf(tail, sizeof tail,
             ": stop them by hand (kill -KILL -- -PGID on its host), then --resume %s; trial %d "
             "was not launched",
             id, trial);
    int head = snprintf(why, cap, "%zu leftover process groups still run: ", running);
    size_t len = head > 0 && (size_t)head < cap ? (size_t)head : 0, shown = 0,
           tail_len = strlen(tail);
    for (size_t i = first; i < tried->n && len; i++) {
        const Orphan *g = &tried->items[i];
        if (!orphans_still_running(g))
            continue;
        char entry[sizeof g->machine + sizeof g->result + 64];
        int need = snprintf(entry, sizeof entry, "%strial %d's %ld on %s (%s)", shown ? "; " : "",
                            g->trial, g->pgid, g->machine, said_of(g));
        size_t keep = shown + 1 < running ? MORE_MAX : 0;
        if (need < 0 || len + (size_t)need + keep + tail_len >= cap)
            break;
        memcpy(why + len, entry, (size_t)need + 1);
        len += (size_t)need;
        shown++;
    }
    if (!shown) /* not even one fits: the journal's remote_process_stop lines name them */
        len = (size_t)snprintf(why, cap,
                               "%zu leftover process groups still run (the journal's "
                               "remote_process_stop lines name them)",
                               running);
    else if (shown < running)
        len += (size_t)snprintf(why + len, cap - len, "; and %zu more", running - shown);
    if (len < cap)
        snprintf(why + len, cap - len, "%s", tail);
    return -1;
}

static HostState host_state(HostPool *pool, const char *machine, double *connect_timeout_s)
{
    long h = hostpool_find(pool, machine);
    if (h < 0)
        return HOST_DOWN; /* no such host: nothing to wait for */
    HostInfo info;
    hostpool_info(pool, (size_t)h, &info);
    *connect_timeout_s = info.connect_timeout_s > 0 ? info.connect_timeout_s : 5;
    return info.state;
}

/* The most the stop may hold up the caller (its hosts are asked at once): a host not connected
 * now gets one attempt (its connect timeout), each group on it up to 3 s (TERM, KILL after
 * 2 s, 1 s more), plus a second for the round trip. */
static double stop_wait_s(HostPool *pool, const OrphanList *l)
{
    double most = 0;
    for (size_t i = 0; i < l->n; i++) {
        double connect_s = 0, s = 1;
        if (hostpool_find(pool, l->items[i].machine) < 0)
            continue; /* nothing is sent there */
        if (host_state(pool, l->items[i].machine, &connect_s) == HOST_READY)
            connect_s = 0;
        for (size_t k = 0; k < l->n; k++)
            s += strcmp(l->items[k].machine, l->items[i].machine) == 0 ? 3 : 0;
        if (connect_s + s > most)
            most = connect_s + s;
    }
    return most;
}

/* -1: out of memory, the group is not kept (no later trial's stop tries it). */
static int keep_for_later(OrphanList *lost, const Orphan *o, int unreached)
{
    if (orphans_add(lost, o->trial, o->machine, o->pgid, o->mark) < 0)
        return -1;
    lost->items[lost->n - 1].unreached = unreached;
    return 0;
}

/* Whether a trial's stop takes a group: one of an earlier trial, on a machine of the trial (or
 * on none of the cluster's: its host is not in the pool, said so by the stop), unless a stop
 * could not reach it before and its host is still not connected (not waited for again: it
 * stays for a later trial or the end of the session). A group a stop could not reach whose
 * host is connected again is taken by the next trial whatever its machines: waiting for a
 * trial on that host left it running (its GPUs held) until the session's end when no later
 * trial used the host; connected, its stop costs a few seconds, and, taken here, before the
 * launch, it races no launch there. */
static int taken_before(const Orphan *o, const Schedule *s, HostPool *pool)
{
    if (o->trial >= s->trial)
        return 0;
    double connect_s;
    HostState state = host_state(pool, o->machine, &connect_s);
    long k = cluster_find_machine(s->cluster, o->machine);
    if (k >= 0 && !s->worker[k] && !s->ps[k] && !(o->unreached && state == HOST_READY))
        return 0; /* not a machine of this trial: left for one that uses it */
    return tune_orphans_worth_trying(o, state);
}

int tune_orphans_before_trial_begin(HostPool *pool, TuneJournal *tj, OrphanList *lost,
                                    const Schedule *s, TuneOrphanReportFn report, void *userdata,
                                    TuneStop **out)
{
    *out = NULL;
    size_t n = 0;
    for (size_t i = 0; i < lost->n; i++)
        n += taken_before(&lost->items[i], s, pool);
    if (!n)
        return 0;
    /* Everything the stop needs is had before a group moves, and the stop's groups then move
     * with no allocation, so that out of memory leaves every group in lost, for a later trial
     * and the session's end; and before "stopping ..." is said, which promises a result. */
    OrphanList here = {malloc(n * sizeof *here.items), 0};
    TuneStop *st = here.items ? tune_stop_new(tj, report, userdata) : NULL;
    if (!st) {
        free(here.items);
        return 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < lost->n; i++) {
        if (here.n < n && taken_before(&lost->items[i], s, pool))
            here.items[here.n++] = lost->items[i];
        else
            lost->items[kept++] = lost->items[i];
    }
    lost->n = kept;
    double wait_s = stop_wait_s(pool, &here);
    int announced = report && wait_s > 2;
    if (announced) { /* the wait can be seen: say why */
        char line[512];
        snprintf(line, sizeof line,
                 "stopping %zu leftover process group%s of earlier trials before trial %d "
                 "(%s%s; up to %.0f s)",
                 here.n, plural_s(here.n), s->trial, here.items[0].machine,
                 here.n > 1 ? ", ..." : "", wait_s);
        report(userdata, line);
    }
    st->before_trial = 1;
    st->announced = announced;
    st->here = here;
    st->lost = lost;
    st->trial = s->trial;
    stop_run_begin(st, pool, wait_s);
    *out = st;
    return 0;
}

/* Whether a group the stop took is in `lost` again (keep_for_later): out of memory, it is
 * not, and no later trial's stop tries it. */
static int kept_in(const OrphanList *lost, const Orphan *o)
{
    for (size_t k = 0; k < lost->n; k++)
        if (lost->items[k].pgid == o->pgid && lost->items[k].trial == o->trial &&
            strcmp(lost->items[k].machine, o->machine) == 0)
            return 1;
    return 0;
}

/* The first of a host's silent groups that were kept (or not) in the list: the line for them
 * is said there. */
static int first_of_host_kept(const TuneStop *st, size_t i, int kept)
{
    const Orphan *o = &st->here.items[i];
    if (!o->silent || kept_in(st->lost, o) != kept)
        return 0;
    for (size_t k = 0; k < i; k++) {
        const Orphan *g = &st->here.items[k];
        if (g->silent && strcmp(g->machine, o->machine) == 0 && kept_in(st->lost, g) == kept)
            return 0;
    }
    return 1;
}

/* What becomes of n groups a stop did not reach on o's host, the end of the line that says
 * so: kept, tried again (keep_for_later, taken_before); not kept (out of memory for the kept
 * list) or on a host the pool has not, stopped by hand. One sentence for every such line. */
typedef enum { NEXT_KEPT, NEXT_NOT_KEPT, NEXT_NO_HOST } NextStop;
enum { NEXT_MAX = sizeof((Orphan *)0)->machine * 2 + 160 };

static void say_next(char *out, size_t cap, const Orphan *o, size_t n, NextStop next)
{
    const char *it = n == 1 ? "it" : "them";
    char by_hand[sizeof o->machine + 64];
    if (n == 1)
        snprintf(by_hand, sizeof by_hand, "stop it by hand (kill -KILL -- -%ld on %s)", o->pgid,
                 o->machine);
    else
        snprintf(by_hand, sizeof by_hand, "stop them by hand (kill -KILL -- -PGID on %s, for each)",
                 o->machine);
    if (next == NEXT_KEPT)
        snprintf(out, cap,
                 "%s tried again before the next trial after %s is connected again, and at the "
                 "session's end",
                 n == 1 ? "is" : "are", o->machine);
    else if (next == NEXT_NOT_KEPT)
        snprintf(out, cap, "no later trial's stop tries %s (out of memory to keep %s): %s", it, it,
                 by_hand);
    else
        snprintf(out, cap, "no later stop can reach %s: %s", o->machine, by_hand);
}

/* Before a trial, a host that did not answer: one line for its groups that were kept, one
 * for those out of memory left out, after the "stopping ..." line that promised a result,
 * naming its groups and what becomes of them. The kept ones (unreached: keep_for_later) are
 * tried again before the next trial once the host is connected, whatever its machines
 * (taken_before, tune_orphans_worth_trying), and in the sweep at the session's end
 * (session_stop_leftovers, the console's quit); the others by no later trial's stop: the
 * operator is told how to stop them by hand, as say_not_reached does. */
static void say_unanswered_host(const TuneStop *st, size_t first, int kept)
{
    const Orphan *o = &st->here.items[first];
    const char *said = said_of(o);
    /* Whole groups only, then how many more: a group cut at the buffer's end named a
     * process group that is not there ("trial 1's 10" for 100019). */
    char groups[256] = "";
    size_t n = 0, used = 0, listed = 0;
    for (size_t i = first; i < st->here.n; i++) {
        const Orphan *g = &st->here.items[i];
        if (!g->silent || strcmp(g->machine, o->machine) != 0 || kept_in(st->lost, g) != kept)
            continue;
        char part[80];
        int len = snprintf(part, sizeof part, "%strial %d's %ld", n ? ", " : "", g->trial, g->pgid);
        /* room kept for ", and N more" */
        if (listed == n && len > 0 && used + (size_t)len + 32 < sizeof groups) {
            memcpy(groups + used, part, (size_t)len + 1);
            used += (size_t)len;
            listed++;
        }
        n++;
    }
    if (listed < n)
        snprintf(groups + used, sizeof groups - used, ", and %zu more", n - listed);
    char next[NEXT_MAX];
    say_next(next, sizeof next, o, n, kept ? NEXT_KEPT : NEXT_NOT_KEPT);
    /* two machine names, the reason, the groups and what comes next: room for all of them at
     * their longest */
    char line[sizeof o->machine * 2 + sizeof o->result + sizeof groups + sizeof next + 256];
    if (n == 1)
        snprintf(line, sizeof line,
                 "trial %d's leftover process group %ld on %s was not stopped before trial %d: "
                 "%s did not answer (%s); it may still run, and %s",
                 o->trial, o->pgid, o->machine, st->trial, o->machine, said, next);
    else
        snprintf(line, sizeof line,
                 "%zu leftover process groups on %s (%s) were not stopped before trial %d: %s did "
                 "not answer (%s); they may still run, and %s",
                 n, o->machine, groups, st->trial, o->machine, said, next);
    st->report(st->userdata, line);
}

/* Before a trial, a group whose stop got no answer from its host for another reason than
 * the host's silence: no command was sent (out of memory for the stop or its command, no such
 * host in the pool), or the host's answer was cut short. One line for it, after the
 * "stopping ..." line that promised a result. A host the pool has is tried again as an
 * unanswered one is (keep_for_later, unreached); a host it has not, never: every stop there
 * fails the same way. `kept`: 0 when out of memory left the group out of the kept list. */
static void say_not_reached(const TuneStop *st, const Orphan *o, int kept)
{
    const char *said = said_of(o);
    char next[NEXT_MAX];
    say_next(next, sizeof next, o, 1,
             !st->pool || hostpool_find(st->pool, o->machine) < 0 ? NEXT_NO_HOST
             : kept                                               ? NEXT_KEPT
                                                                  : NEXT_NOT_KEPT);
    char line[sizeof o->machine + sizeof o->result + sizeof next + 128];
    snprintf(line, sizeof line,
             "trial %d's leftover process group %ld on %s was not stopped before trial %d (%s); "
             "it may still run, and %s",
             o->trial, o->pgid, o->machine, st->trial, said, next);
    st->report(st->userdata, line);
}

static int before_trial_end(TuneStop *st, char *why, size_t cap)
{
    /* Every group is journaled and kept first: a host's line names all its groups, and says
     * of each whether a later trial's stop tries it (kept_in). */
    for (size_t i = 0; i < st->here.n; i++) {
        const Orphan *o = &st->here.items[i];
        /* Every result, those no answer decided too ("not stopped: why"): the group's last
         * line is its state, should the session be killed before a later stop. */
        journal_stop(st->tj, o);
        /* Kept: tried again before a later trial (a stopped or gone group needs nothing more). */
        if (strcmp(o->result, "stopped") != 0 && strcmp(o->result, "gone") != 0)
            keep_for_later(st->lost, o, !o->answered);
    }
    for (size_t i = 0; i < st->here.n; i++) {
        const Orphan *o = &st->here.items[i];
        int stopped = strcmp(o->result, "stopped") == 0, gone = strcmp(o->result, "gone") == 0;
        int kept = stopped || gone || kept_in(st->lost, o);
        if (stopped && st->report) {
            char line[512];
            snprintf(line, sizeof line,
                     "stopped trial %d's leftover process group %ld on %s before trial %d",
                     o->trial, o->pgid, o->machine, st->trial);
            st->report(st->userdata, line);
        }
        /* Said once the stop was: a group the guard (or its own end) had ended left the
         * operator with "stopping ..." and no word of how it went. */
        if (gone && st->announced && st->report) {
            char line[512];
            snprintf(line, sizeof line,
                     "trial %d's leftover process group %ld on %s had already ended: nothing "
                     "to stop before trial %d",
                     o->trial, o->pgid, o->machine, st->trial);
            st->report(st->userdata, line);
        }
        /* Said too: "stopping ..." and then nothing left the operator waiting for an end. */
        if (o->silent && st->announced && st->report) {
            if (first_of_host_kept(st, i, 1))
                say_unanswered_host(st, i, 1);
            if (first_of_host_kept(st, i, 0))
                say_unanswered_host(st, i, 0);
        }
        /* And the rest that no answer decided (one that did, still running, is the verdict's):
         * out of memory, or no such host, left "stopping ..." without an end as well. */
        if (!stopped && !gone && !o->silent && !o->answered && st->announced && st->report)
            say_not_reached(st, o, kept);
    }
    return tune_orphans_verdict(&st->here, st->trial, tune_journal_id(st->tj), why, cap);
}

int tune_stop_end(TuneStop *st, char *why, size_t cap)
{
    if (!st)
        return 0;
    if (st->run)
        orphans_stop_end(st->run);
    int rc = 0;
    if (st->before_trial)
        rc = before_trial_end(st, why, cap);
    else
        sweep_end(st);
    orphans_clear(&st->here);
    free(st);
    return rc;
}

int tune_orphans_before_trial(HostPool *pool, TuneJournal *tj, OrphanList *lost, const Schedule *s,
                              TuneOrphanReportFn report, void *userdata, char *why, size_t cap)
{
    TuneStop *st = NULL;
    tune_orphans_before_trial_begin(pool, tj, lost, s, report, userdata, &st);
    if (!st)
        return 0;
    tune_stop_wait(st);
    return tune_stop_end(st, why, cap);
}

TuneStop *tune_orphans_stop_interrupted_begin(HostPool *pool, TuneJournal *tj,
                                              TuneOrphanReportFn report, void *userdata)
{
    OrphanList l;
    Error err;
    if (orphans_collect(tune_journal_log(tj), &l, &err) < 0)
        return NULL;
    if (!l.n) {
        orphans_clear(&l); /* every trial finished: its groups were dropped, the room kept */
        return NULL;
    }
    return sweep_begin(pool, tj, &l, "interrupted", 0, report, userdata); /* the stop's now */
}

void tune_orphans_stop_interrupted(HostPool *pool, TuneJournal *tj, TuneOrphanReportFn report,
                                   void *userdata)
{
    TuneStop *st = tune_orphans_stop_interrupted_begin(pool, tj, report, userdata);
    if (!st)
        return;
    tune_stop_wait(st);
    tune_stop_end(st, NULL, 0);
}
