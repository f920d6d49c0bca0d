/* The override queue's journal events, and the overrides a journal left waiting. */
#include "core/journal/journal_override.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/jfield.h"
#include "core/journal/journal_override_tally.h"

cJSON *journal_override_queued_json(int id, const Schedule *s)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", "override_queued");
    cJSON_AddNumberToObject(j, "override", id);
    cJSON_AddNumberToObject(j, "wall_s", (double)time(NULL));
    cJSON_AddItemToObject(j, "schedule", schedule_to_json(s));
    return j;
}

cJSON *journal_override_dropped_json(int id)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", "override_dropped");
    cJSON_AddNumberToObject(j, "override", id);
    cJSON_AddNumberToObject(j, "wall_s", (double)time(NULL));
    return j;
}

void journal_overrides_clear(JournalOverrides *o)
{
    for (size_t i = 0; i < o->n; i++)
        schedule_free(o->waiting[i].schedule);
    free(o->waiting);
    memset(o, 0, sizeof *o);
}

/* The queue's rule is the tally's (journal_override_tally.h), run over the events on the
 * cluster: it reads the schedules, as `tunedeck sessions` does, and leaves out the overrides
 * whose schedule the cluster refuses (their ids still count: the next is above them); this
 * says what does not fit. */
int journal_overrides_decode(JournalLog *log, const Cluster *c, const char *source,
                             JournalOverrides *out, Error *err)
{
    memset(out, 0, sizeof *out);
    JournalOverrideTally t;
    memset(&t, 0, sizeof t);
    t.cluster = c;
    for (size_t i = 0; i < log->n; i++) {
        const cJSON *ev = log->events[i];
        const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
        int queued = strcmp(kind, "override_queued") == 0;
        int dropped = strcmp(kind, "override_dropped") == 0;
        /* Terminated, not zero-filled (4.3 KB for every line): the tally and the messages
         * below read ctx only as a string, and only for the kinds named here, for which
         * snprintf writes it (terminated, however long the path). */
        char ctx[4300];
        ctx[0] = 0;
        if (queued || dropped || strcmp(kind, "suggested") == 0)
            snprintf(ctx, sizeof ctx, "%s:%zu: %s", source, log->lines[i], kind);
        int last_id = t.last_id;
        Error e;
        switch (journal_override_tally_take(&t, ev, ctx, &e)) {
        case TALLY_LINE_REFUSED:
            journal_log_problem(log, "%s (override not restored)", e.msg);
            break;
        case TALLY_LINE_BAD_ID:
            /* a trial's line: it ran, but which override it took is unknown, so none is */
            journal_log_problem(log,
                                queued || dropped ? "%s (override not restored)"
                                                  : "%s (which override this trial ran is "
                                                    "unknown: none is taken from the queue)",
                                e.msg);
            break;
        case TALLY_LINE_STRAY:
            journal_log_problem(log,
                                "%s: expected an id above %d (a repeated or stray line; "
                                "override not restored)",
                                ctx, last_id);
            break;
        case TALLY_LINE_QUEUED:
        case TALLY_LINE_OTHER:
            break;
        }
    }
    journal_override_tally_end(&t);
    int rc = 0;
    out->last_id = t.last_id;
    if (t.failed || (t.n && !(out->waiting = calloc(t.n, sizeof *out->waiting))))
        rc = error_set(err, "journal: out of memory");
    for (size_t k = 0; rc == 0 && k < t.n; k++) {
        const JournalTallied *w = &t.waiting[k];
        out->waiting[out->n++] =
            (JournalOverride){w->id, w->schedule, k < t.unstarted, w->trial, w->fresh};
        t.waiting[k].schedule = NULL; /* out's now */
    }
    journal_override_tally_clear(&t);
    if (rc < 0)
        journal_overrides_clear(out);
    return rc;
}

/* An override whose trial never started spent a trial of the budget. The journal's budget is
 * raised by one trial for each such override whose trial this resume marks interrupted, up to
 * the last queued override's trial: those queued behind it keep the trials they had (one left
 * without by the operator's :budget stays so), and a second resume, finding the trial already
 * marked, raises nothing again. Whatever the budget, the unstarted overrides themselves get
 * their trials, as they do under --budget: the operator never saw them run, and a :budget is
 * not a drop (only X and :unqueue drop one, with a line saying so); a :budget typed after an
 * earlier resume that left the head override without its trial would otherwise keep it
 * queued forever, each resume restoring it and running none. */
int journal_resume_budget(int budget, size_t trials, size_t restored, size_t unstarted,
                          size_t fresh, int budget_given)
{
    int to = budget;
    if (!budget_given) {
        int raised = budget + (int)fresh, last = (int)(trials + restored);
        if (raised > last)
            raised = last;
        if (raised > to)
            to = raised;
    }
    if (unstarted && (int)(trials + unstarted) > to)
        to = (int)(trials + unstarted);
    return to;
}
