/* The override queue's journal events, and the overrides a journal left waiting. */
#include "core/journal/journal_override.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/jfield.h"

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

/* The override of this id leaves the waiting ones (dropped, or run as a trial). */
static void forget(JournalOverrides *o, int id)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->waiting[i].id == id) {
            schedule_free(o->waiting[i].schedule);
            memmove(o->waiting + i, o->waiting + i + 1, (o->n - i - 1) * sizeof *o->waiting);
            o->n--;
            return;
        }
}

/* The override of this id goes first: it was taken from the head of the queue for a trial
 * that never started, and runs before those queued behind it. */
static void to_head(JournalOverrides *o, int id, int trial)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->waiting[i].id == id) {
            JournalOverride w = o->waiting[i];
            memmove(o->waiting + 1, o->waiting, i * sizeof *o->waiting);
            w.unstarted = 1;
            w.trial = trial;
            o->waiting[0] = w;
            return;
        }
}

static int names_trial(const cJSON *ev, int trial)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    return cJSON_IsNumber(n) && n->valuedouble == trial;
}

/* Whether the trial of the suggested line at index i began: a `started` line for it, or an
 * outcome other than the one a resume gives a trial it found unfinished (`interrupted`),
 * before the next suggested line (one trial at a time: its lines come before the next's). */
static int trial_began(const JournalLog *log, size_t i, int trial)
{
    for (size_t k = i + 1; k < log->n; k++) {
        const cJSON *ev = log->events[k];
        const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
        if (strcmp(kind, "suggested") == 0)
            return 0;
        if (!names_trial(ev, trial))
            continue;
        if (strcmp(kind, "started") == 0)
            return 1;
        if (strcmp(kind, "finished") == 0) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(ev, "status");
            return !cJSON_IsString(st) || strcmp(st->valuestring, "interrupted") != 0;
        }
    }
    return 0;
}

int journal_overrides_decode(JournalLog *log, const Cluster *c, const char *source,
                             JournalOverrides *out, Error *err)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    for (size_t i = 0; i < log->n; i++) {
        const cJSON *ev = log->events[i];
        const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
        int queued = strcmp(kind, "override_queued") == 0;
        int dropped = strcmp(kind, "override_dropped") == 0;
        /* a suggested line naming an override is the trial that took it out of the queue */
        if (!queued && !dropped && strcmp(kind, "suggested") != 0)
            continue;
        char ctx[4300];
        snprintf(ctx, sizeof ctx, "%s:%zu: %s", source, log->lines[i], kind);
        int id = 0, needed = queued || dropped;
        Error e;
        if (jfield_int(ev, ctx, "override", needed, 1, JOURNAL_OVERRIDE_ID_MAX, &id, &e) < 0) {
            /* a trial's line: it ran, but which override it took is unknown, so none is */
            journal_log_problem(log,
                                queued || dropped ? "%s (override not restored)"
                                                  : "%s (which override this trial ran is "
                                                    "unknown: none is taken from the queue)",
                                e.msg);
            continue;
        }
        if (id == 0)
            continue; /* the optimizer's trial, or an override from before the queue */
        /* ids only grow and the tuner never reuses one: a queued line at or below one seen is
         * a repeat or a stray, and queuing it again would run an override twice */
        if (queued && id <= out->last_id) {
            journal_log_problem(log,
                                "%s: expected an id above %d (a repeated or stray line; "
                                "override not restored)",
                                ctx, out->last_id);
            continue;
        }
        if (id > out->last_id)
            out->last_id = id;
        if (dropped) {
            forget(out, id);
            continue;
        }
        if (!queued) {
            /* The session died between the trial's suggested line and its start: the trial
             * is marked interrupted, and the override, never run, waits again. */
            int trial = 0;
            if (jfield_int(ev, ctx, "trial", 1, 1, 100000000, &trial, &e) == 0 &&
                !trial_began(log, i, trial))
                to_head(out, id, trial);
            else
                forget(out, id);
            continue;
        }
        const cJSON *sj = jfield_object(ev, ctx, "schedule", 1, &e);
        char sctx[4400];
        snprintf(sctx, sizeof sctx, "%s: schedule", ctx);
        Schedule *s = sj ? schedule_from_json(sj, c, sctx, &e) : NULL;
        if (s && schedule_validate(s, &e) < 0) {
            schedule_free(s);
            s = NULL;
        }
        if (!s) {
            journal_log_problem(log, "%s (override not restored)", e.msg);
            continue;
        }
        if (out->n == cap) {
            size_t grown_cap = cap ? cap * 2 : 8;
            JournalOverride *grown = realloc(out->waiting, grown_cap * sizeof *grown);
            if (!grown) {
                schedule_free(s);
                journal_overrides_clear(out);
                return error_set(err, "journal: out of memory");
            }
            out->waiting = grown;
            cap = grown_cap;
        }
        out->waiting[out->n++] = (JournalOverride){id, s, 0, 0};
    }
    return 0;
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
