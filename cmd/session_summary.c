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
#include "core/model/observation.h"
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

/* Which trials were suggested and which finished: a line that resume would skip (a trial
 * never suggested or finished twice, an unknown status, an ok without its time) is a
 * problem, never a count. */
typedef struct {
    unsigned char *state; /* per trial number: 1 suggested, 2 finished */
    size_t cap;
} TrialMarks;

static unsigned char *mark_of(TrialMarks *m, const cJSON *ev)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    if (!cJSON_IsNumber(t) || t->valuedouble < 1 || t->valuedouble > 1e6 ||
        t->valuedouble != (double)(long)t->valuedouble)
        return NULL;
    size_t i = (size_t)t->valuedouble;
    if (i >= m->cap) {
        size_t cap = i * 2 + 16;
        unsigned char *g = realloc(m->state, cap);
        if (!g)
            return NULL;
        memset(g + m->cap, 0, cap - m->cap);
        m->state = g;
        m->cap = cap;
    }
    return &m->state[i];
}

static int status_known(const char *name)
{
    TrialStatus status;
    return trial_status_from_name(name, &status) == 0;
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
    TrialMarks marks;
    JournalOverrideTally queue;   /* what a resume queues again, for the budget it goes on with */
    int last_ended, last_stopped; /* of the last valid event */
} Pass;

static void take(void *ud, const cJSON *ev, size_t line)
{
    (void)line;
    Pass *p = ud;
    SessionSummary *s = p->s;
    const char *kind = str(ev, "event");
    journal_override_tally_take(&p->queue, ev);
    p->last_ended = strcmp(kind, "ended") == 0;
    p->last_stopped = str(ev, "stopped") != NULL;
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
        unsigned char *m = mark_of(&p->marks, ev);
        if (!m || *m) {
            s->problems++;
            return;
        }
        *m = 1;
        s->suggested++;
    } else if (strcmp(kind, "finished") == 0) {
        unsigned char *m = mark_of(&p->marks, ev);
        const char *status = str(ev, "status");
        double t = num(ev, "time_s", -1);
        if (!m || *m != 1 || !status_known(status) ||
            (strcmp(status, "ok") == 0 && !(t > 0))) {
            s->problems++;
            return;
        }
        *m = 2;
        s->finished++;
        if (status && strcmp(status, "ok") == 0 && t >= 0) {
            s->ok++;
            if (s->best_s < 0 || t < s->best_s)
                s->best_s = t;
        }
    }
}

/* The budget `tune --resume` (or the console's) goes on with, without --budget: the journal's,
 * at least its trials (a journal cut before its `ended` line may have run past it), raised
 * for the overrides whose trial never started (journal_resume_budget, the resume's rule). */
static long resume_budget(Pass *p)
{
    const SessionSummary *s = p->s;
    JournalOverrideTally *q = &p->queue;
    journal_override_tally_end(q);
    size_t trials = (size_t)s->suggested;
    int budget = s->budget > (long)trials ? (int)s->budget : (int)trials;
    /* a resume restores as many as the queue holds, the unstarted first */
    size_t restored = q->n < OVERRIDEQUEUE_MAX ? q->n : OVERRIDEQUEUE_MAX;
    size_t unstarted = q->unstarted < restored ? q->unstarted : restored, fresh = 0;
    for (size_t i = 0; i < unstarted; i++) {
        /* marked interrupted by this resume: no outcome yet (an earlier resume's is one) */
        size_t t = (size_t)q->waiting[i].trial;
        fresh += t < p->marks.cap && p->marks.state[t] == 1;
    }
    return journal_resume_budget(budget, trials, restored, unstarted, fresh, 0);
}

/* The fields take() reads: a line whose others are plain is skimmed, not parsed whole. */
static const char *const READ[] = {"created", "optimizer", "sim",    "cluster", "budget",
                                   "trial",   "status",    "time_s", "stopped", "override"};

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
    if (read(path, &log, READ, sizeof READ / sizeof READ[0], take, &p, &err) < 0) {
        free(p.marks.state);
        journal_override_tally_clear(&p.queue);
        memset(s, 0, sizeof *s);
        snprintf(s->id, sizeof s->id, "%s", id);
        s->best_s = -1;
        snprintf(s->state, sizeof s->state, "unreadable: %s", err.msg);
        return;
    }
    s->problems += (int)log.n_problems; /* the lines skipped, besides those take() counted */
    char why[ERROR_MSG_MAX];
    int ended = log.n > 0 && p.last_ended;
    int stopped = ended && p.last_stopped;
    if (journal_in_use(path))
        snprintf(s->state, sizeof s->state, "running");
    else if (resume_refusal(path, &log, why, sizeof why) < 0)
        snprintf(s->state, sizeof s->state, "not resumable: %s", why);
    else if (ended)
        snprintf(s->state, sizeof s->state, "%s", stopped ? "stopped early" : "ended");
    else
        snprintf(s->state, sizeof s->state, "interrupted (resumable)");
    if (strcmp(s->state, "running") != 0 && strncmp(s->state, "not resumable", 13) != 0)
        s->budget = resume_budget(&p);
    free(p.marks.state);
    journal_override_tally_clear(&p.queue);
    journal_log_clear(&log);
}
