/* What `tunedeck sessions` says of one journal, read in one pass (journal_scan): the listing
 * of 400 journals of 300 trials held each one's parse trees whole, and spent most of its time
 * in malloc and free. */
#include "cmd/session_summary.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_override.h"
#include "core/journal/journal_override_tally.h"
#include "core/journal/journal_trial.h"
#include "core/model/cluster.h"
#include "core/model/observation.h"
#include "core/sim/simcluster.h"
#include "remote/launch/overridequeue.h"
#include "remote/session/tune_journal.h"

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The trials kept (journal_suggested_read's reading, the resume's: the tally counts them) and
 * which finished: a line that resume would skip (a trial not kept or finished twice, a line
 * journal_finished_kept refuses) is a problem, never a count. Kept numbers only
 * grow: a finished line's trial is found by bisection, whatever its number. */
typedef struct {
    int *trial;
    unsigned char *finished;
    size_t n, cap;
} TrialMarks;

static int mark_kept(TrialMarks *m, int trial)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        int *t = realloc(m->trial, cap * sizeof *t);
        if (!t)
            return -1;
        m->trial = t;
        unsigned char *f = realloc(m->finished, cap);
        if (!f)
            return -1;
        m->finished = f;
        m->cap = cap;
    }
    m->trial[m->n] = trial;
    m->finished[m->n++] = 0;
    return 0;
}

static unsigned char *mark_of(TrialMarks *m, const cJSON *ev)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    if (!cJSON_IsNumber(t))
        return NULL;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->trial[mid] < t->valuedouble)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->trial[lo] == t->valuedouble ? &m->finished[lo] : NULL;
}

static void marks_clear(TrialMarks *m)
{
    free(m->trial);
    free(m->finished);
    memset(m, 0, sizeof *m);
}

/* An event's budget as resume reads it (1 to 100000 trials: the session line's any number,
 * cut to an integer; a later line's a whole one, or resume keeps the budget before it);
 * `dflt` for any other value (casting 1e999 to long is undefined and printed a negative
 * budget). */
static long budget_of(const cJSON *ev, int whole, long dflt)
{
    double b = num(ev, "budget", -1);
    if (!(b >= 1 && b <= 100000) || (whole && b != floor(b)))
        return dflt;
    return (long)b;
}

/* Why `tune --resume` would refuse the journal at path, read into log (taken), in its words
 * (its file, line and field): the same reading of the session line, so that the list never
 * calls resumable what resume refuses, of the same reading of the file (it was read twice,
 * half of the listing's time). 0 when it would read it. */
static int resume_refusal(const char *path, JournalLog *log, char *why, size_t cap)
{
    TuneJournal *tj = tune_journal_new(NULL);
    TuneSetup setup;
    Error err;
    int rc = tj ? tune_journal_load_log(tj, path, log, &setup, &err)
                : error_set(&err, "out of memory");
    journal_log_clear(log); /* not taken without a TuneJournal */
    if (rc == 0)
        tune_setup_clear(&setup);
    else
        snprintf(why, cap, "%s", err.msg);
    tune_journal_free(tj);
    return rc;
}

/* What the pass keeps between events. */
typedef struct {
    SessionSummary *s;
    const char *path;
    TrialMarks marks;
    JournalOverrideTally queue;   /* what a resume queues again, for the budget it goes on with */
    int last_ended, last_stopped; /* of the last valid event */
    int seen;                     /* events taken */
    /* the cluster a resume reads the trials on, from the session line as it builds it */
    SimCluster *sim;
    Cluster *cluster;
    char cluster_refused[ERROR_MSG_MAX]; /* why it could not be built; "" it was, or none tried */
} Pass;

/* The cluster a resume reads the journal's trials on, built from its session line as the
 * resume builds it (session.c's open_cluster: the simulator it names, or the inventory it
 * recorded), so that a suggested line counts as a trial only when a resume keeps it
 * (journal_suggested_read, through the tally). When it cannot be built the resume refuses the
 * journal, and the trials are counted by their numbers alone. */
static void open_cluster(Pass *p, const cJSON *session)
{
    Error err;
    const char *sim = str(session, "sim");
    const cJSON *inventory = cJSON_GetObjectItemCaseSensitive(session, "cluster");
    if (sim) {
        p->sim = simcluster_new(sim, &err);
        if (!p->sim)
            snprintf(p->cluster_refused, sizeof p->cluster_refused, "%s: session: field 'sim': %s",
                     p->path, err.msg);
    } else if (cJSON_IsObject(inventory)) {
        p->cluster = cluster_from_json(inventory, p->path, &err);
        if (!p->cluster)
            snprintf(p->cluster_refused, sizeof p->cluster_refused, "%s", err.msg);
    }
    p->queue.cluster = p->sim ? simcluster_cluster(p->sim) : p->cluster;
}

static void pass_clear(Pass *p)
{
    marks_clear(&p->marks);
    journal_override_tally_clear(&p->queue);
    simcluster_free(p->sim);
    cluster_free(p->cluster);
    p->sim = NULL;
    p->cluster = NULL;
}

/* A line take() skips: the first in the file's order is kept, in the resume's words where
 * it has them (ctx "FILE:N: kind", then why). */
static void skipped(Pass *p, size_t line, const char *kind, const char *why)
{
    SessionSummary *s = p->s;
    if (s->first_problem_line && s->first_problem_line < line)
        return;
    s->first_problem_line = line;
    snprintf(s->first_problem, sizeof s->first_problem, "%s:%zu: %s%s", p->path, line, kind, why);
}

/* Whether an event says the session ran (or was changed) when it was written: one after
 * `ended` means it ran again. Not the allocation's release, which follows `ended`, nor an
 * event this reader does not know: readers ignore those (docs/journal.md), and one written
 * after `ended` made a finished session read as interrupted. */
static int session_ran(const char *kind)
{
    static const char *const ran[] = {"session",         "suggested",      "started",
                                      "finished",        "resumed",        "override_queued",
                                      "override_dropped", "budget",        "ended",
                                      "remote_process",  "remote_process_stop"};
    for (size_t i = 0; kind && i < sizeof ran / sizeof ran[0]; i++)
        if (strcmp(kind, ran[i]) == 0)
            return 1;
    return 0;
}

static void take(void *ud, const cJSON *ev, size_t line)
{
    Pass *p = ud;
    SessionSummary *s = p->s;
    const char *kind = str(ev, "event");
    size_t trials = p->queue.trials;
    Error scratch;
    journal_override_tally_take(&p->queue, ev, "", &scratch);
    if (session_ran(kind)) { /* the allocation's release follows `ended` */
        p->last_ended = strcmp(kind, "ended") == 0;
        p->last_stopped = str(ev, "stopped") != NULL;
    }
    if (p->seen++ == 0 && strcmp(kind, "session") == 0)
        open_cluster(p, ev); /* the resume reads only the first line as the session's */
    if (strcmp(kind, "session") == 0) {
        snprintf(s->created, sizeof s->created, "%s",
                 str(ev, "created") ? str(ev, "created") : "?");
        snprintf(s->optimizer, sizeof s->optimizer, "%s",
                 str(ev, "optimizer") ? str(ev, "optimizer") : "?");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(ev, "cluster");
        if (str(ev, "sim"))
            snprintf(s->target, sizeof s->target, "sim %s", str(ev, "sim"));
        else
            snprintf(s->target, sizeof s->target, "%s", str(c, "name") ? str(c, "name") : "?");
        s->budget = budget_of(ev, 0, 0);
    } else if (strcmp(kind, "resumed") == 0 || strcmp(kind, "ended") == 0 ||
               strcmp(kind, "budget") == 0 || strcmp(kind, "override_queued") == 0 ||
               strcmp(kind, "override_dropped") == 0) {
        /* budget, ended: the console's :budget; override_queued, override_dropped: the raise
         * for the override, or given back (older journals' have no budget there: kept) */
        s->budget = budget_of(ev, 1, s->budget);
    } else if (strcmp(kind, "suggested") == 0) {
        if (p->queue.trials == trials || mark_kept(&p->marks, p->queue.last_trial) < 0) {
            s->problems++;
            /* why, as the tally read it: its last trial is as it was before this line */
            int n;
            Error why;
            snprintf(why.msg, sizeof why.msg, ": not a trial a resume keeps");
            if (p->queue.trials == trials && p->queue.cluster)
                journal_suggested_kept(ev, p->queue.cluster, "", p->queue.last_trial, &n, &why);
            else if (p->queue.trials == trials)
                journal_suggested_follows(ev, "", p->queue.last_trial, &n, &why);
            skipped(p, line, kind, why.msg);
            return;
        }
        s->suggested++;
    } else if (strcmp(kind, "finished") == 0) {
        /* the resume's reading of the line (journal_finished_kept): a time under protocol
         * v1's least or a per-device array it refuses is no outcome, nor a best */
        unsigned char *m = mark_of(&p->marks, ev);
        TrialStatus status;
        double t;
        if (!m || *m ||
            journal_finished_kept(ev, p->queue.cluster, "", &status, &t, &scratch) < 0) {
            s->problems++;
            skipped(p, line, kind,
                    !m   ? ": a trial never suggested, or whose suggested line was skipped"
                    : *m ? ": the trial already has an outcome"
                         : scratch.msg);
            return;
        }
        *m = 1;
        s->finished++;
        if (status == TRIAL_OK) {
            s->ok++;
            if (s->best_s < 0 || t < s->best_s)
                s->best_s = t;
        }
    }
}

/* The budget `tune --resume` (or the console's) goes on with, without --budget: the journal's,
 * at least the trials it keeps (a journal cut before its `ended` line may have run past it;
 * counted as the resume counts them, journal_trials_count, on the same cluster), raised for
 * the overrides whose trial never started (journal_resume_budget, the resume's rule, over the
 * trials it replays). */
static long resume_budget(Pass *p)
{
    const SessionSummary *s = p->s;
    JournalOverrideTally *q = &p->queue;
    journal_override_tally_end(q);
    size_t trials = q->trials;
    int budget = s->budget > (long)trials ? (int)s->budget : (int)trials;
    /* a resume restores as many as the queue holds, the unstarted first */
    size_t restored = q->n < OVERRIDEQUEUE_MAX ? q->n : OVERRIDEQUEUE_MAX;
    size_t unstarted = q->unstarted < restored ? q->unstarted : restored, fresh = 0;
    for (size_t i = 0; i < unstarted; i++)
        fresh += q->waiting[i].fresh != 0; /* marked interrupted by this resume */
    return journal_resume_budget(budget, trials, restored, unstarted, fresh, 0);
}

/* The fields take() reads: a line whose others are plain is skimmed, not parsed whole. */
static const char *const READ[] = {
    "created",       "optimizer",      "sim",         "cluster",    "budget",     "trial",
    "stopped",       "override",       "interrupted", "schedule",   "overridden", "suggest_ms",
    "prediction",    "status",         "reason",      "time_s",     "comm_s",     "iterations",
    "device_time_s", "machine_time_s", "left_out",    "unreachable"};

void session_summary_read(const char *path, const char *id, SessionSummary *s)
{
    session_summary_read_by(path, id, s, journal_scan);
}

void session_summary_read_by(const char *path, const char *id, SessionSummary *s,
                             SummaryReader read)
{
    memset(s, 0, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    s->best_s = -1;
    JournalLog log;
    Error err;
    Pass p;
    memset(&p, 0, sizeof p);
    p.s = s;
    p.path = path;
    if (read(path, &log, READ, sizeof READ / sizeof READ[0], take, &p, &err) < 0) {
        pass_clear(&p);
        memset(s, 0, sizeof *s);
        snprintf(s->id, sizeof s->id, "%s", id);
        s->best_s = -1;
        snprintf(s->state, sizeof s->state, "unreadable: %s", err.msg);
        return;
    }
    s->problems += (int)log.n_problems; /* the lines skipped, besides those take() counted */
    /* the reader's own ("FILE:N: torn last line ...", "... corrupted line skipped: ..."), in
     * the file's order: the first of them if it comes before take()'s first */
    size_t plen = strlen(path);
    if (log.n_problems && strncmp(log.problems[0], path, plen) == 0 &&
        log.problems[0][plen] == ':') {
        size_t line = strtoul(log.problems[0] + plen + 1, NULL, 10);
        if (!s->first_problem_line || (line && line < s->first_problem_line)) {
            s->first_problem_line = line;
            snprintf(s->first_problem, sizeof s->first_problem, "%s", log.problems[0]);
        }
    }
    char why[ERROR_MSG_MAX];
    int ended = log.n > 0 && p.last_ended;
    int stopped = ended && p.last_stopped;
    if (journal_in_use(path))
        snprintf(s->state, sizeof s->state, "running");
    else if (resume_refusal(path, &log, why, sizeof why) < 0)
        snprintf(s->state, sizeof s->state, "not resumable: %s", why);
    else if (p.cluster_refused[0])
        snprintf(s->state, sizeof s->state, "not resumable: %s", p.cluster_refused);
    else if (ended)
        snprintf(s->state, sizeof s->state, "%s", stopped ? "stopped early" : "ended");
    else
        snprintf(s->state, sizeof s->state, "interrupted (resumable)");
    if (strcmp(s->state, "running") != 0 && strncmp(s->state, "not resumable", 13) != 0)
        s->resume_budget = resume_budget(&p);
    pass_clear(&p);
    journal_log_clear(&log);
}
