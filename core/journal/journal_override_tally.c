/* The overrides a journal left waiting, counted line by line (journal_override_tally.h). A
 * suggested line's trial is settled at the next suggested line or the end: one trial at a
 * time, its lines come before the next's. */
#include "core/journal/journal_override_tally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"
#include "core/journal/journal_trial.h"

static void forget(JournalOverrideTally *t, int id)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->waiting[i].id == id) {
            schedule_free(t->waiting[i].schedule);
            memmove(t->waiting + i, t->waiting + i + 1, (t->n - i - 1) * sizeof *t->waiting);
            t->n--;
            if (i < t->unstarted)
                t->unstarted--;
            return;
        }
}

/* Waits again at the head: taken for a trial that never began. */
static void to_head(JournalOverrideTally *t, int id, int trial, int fresh)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->waiting[i].id == id) {
            JournalTallied w = t->waiting[i];
            memmove(t->waiting + 1, t->waiting, i * sizeof *t->waiting);
            w.trial = trial;
            w.fresh = fresh;
            t->waiting[0] = w;
            if (i >= t->unstarted)
                t->unstarted++;
            return;
        }
}

static void settle(JournalOverrideTally *t)
{
    /* fresh: the resume keeps the trial (its number follows) and gives it its mark now */
    if (t->taken == TALLY_TAKEN_BEGAN)
        forget(t, t->taken_id);
    else if (t->taken != TALLY_TAKEN_NONE)
        to_head(t, t->taken_id, t->taken_trial,
                t->taken == TALLY_TAKEN_OPEN && t->taken_counted);
    t->taken = TALLY_TAKEN_NONE;
}

static int names_taken(const JournalOverrideTally *t, const cJSON *ev)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    return t->taken == TALLY_TAKEN_OPEN && cJSON_IsNumber(n) && n->valuedouble == t->taken_trial;
}

/* A mark that comes after its trial was settled (a damaged journal: another
 * suggested line followed before the resume) still marks it: the next resume raises nothing
 * for it again. */
static void marked(JournalOverrideTally *t, double trial)
{
    for (size_t i = 0; i < t->unstarted; i++)
        if (t->waiting[i].trial == trial)
            t->waiting[i].fresh = 0;
}

/* A resume's `interrupted` names the trials it marks: one killed before writing their
 * `finished` lines has marked them all the same (and raised the budget for them). */
static void take_resumed(JournalOverrideTally *t, const cJSON *ev)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(ev, "interrupted");
    const cJSON *n;
    if (!cJSON_IsArray(names))
        return;
    cJSON_ArrayForEach(n, names)
        if (cJSON_IsNumber(n)) {
            marked(t, n->valuedouble);
            if (t->taken == TALLY_TAKEN_OPEN && n->valuedouble == t->taken_trial)
                t->taken = TALLY_TAKEN_MARKED;
        }
}

/* The queued line's schedule as a resume reads it, on the tally's cluster: NULL with why in
 * err when refused. */
static Schedule *queued_schedule(const cJSON *ev, const Cluster *c, const char *ctx, Error *err)
{
    const cJSON *sj = jfield_object(ev, ctx, "schedule", 1, err);
    char sctx[4400];
    snprintf(sctx, sizeof sctx, "%s: schedule", ctx);
    Schedule *s = sj ? schedule_from_json(sj, c, sctx, err) : NULL;
    if (s && schedule_validate(s, err) < 0) {
        schedule_free(s);
        s = NULL;
    }
    return s;
}

static JournalTallyLine queue(JournalOverrideTally *t, int id, const cJSON *ev, const char *ctx,
                              Error *err)
{
    Schedule *s = NULL;
    if (t->cluster && !(s = queued_schedule(ev, t->cluster, ctx, err)))
        return TALLY_LINE_REFUSED;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        JournalTallied *g = realloc(t->waiting, cap * sizeof *g);
        if (!g) {
            schedule_free(s);
            t->failed = 1;
            return TALLY_LINE_OTHER;
        }
        t->waiting = g;
        t->cap = cap;
    }
    t->waiting[t->n++] = (JournalTallied){id, 0, 0, t->events - 1, s};
    return TALLY_LINE_QUEUED;
}

JournalTallyLine journal_override_tally_take(JournalOverrideTally *t, const cJSON *ev,
                                             const char *ctx, Error *err)
{
    const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
    t->events++;
    if (strcmp(kind, "started") == 0) {
        if (names_taken(t, ev))
            t->taken = TALLY_TAKEN_BEGAN;
        return TALLY_LINE_OTHER;
    }
    if (strcmp(kind, "finished") == 0) {
        /* an outcome of its own: it began; the `interrupted` a resume gives: it did not */
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(ev, "status");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "trial");
        if (cJSON_IsNumber(n))
            marked(t, n->valuedouble);
        if (names_taken(t, ev))
            t->taken = !cJSON_IsString(st) || strcmp(st->valuestring, "interrupted") != 0
                           ? TALLY_TAKEN_BEGAN
                           : TALLY_TAKEN_MARKED;
        return TALLY_LINE_OTHER;
    }
    if (strcmp(kind, "resumed") == 0) {
        take_resumed(t, ev);
        return TALLY_LINE_OTHER;
    }
    int queued = strcmp(kind, "override_queued") == 0;
    int dropped = strcmp(kind, "override_dropped") == 0;
    int suggested = strcmp(kind, "suggested") == 0;
    if (!queued && !dropped && !suggested)
        return TALLY_LINE_OTHER;
    int counted = 0, trial = 0;
    Error scratch;
    if (suggested) {
        settle(t); /* one trial at a time: the one before has had its lines */
        if ((t->cluster
                 ? journal_suggested_kept(ev, t->cluster, ctx, t->last_trial, &trial, &scratch)
                 : journal_suggested_follows(ev, ctx, t->last_trial, &trial, &scratch)) == 0) {
            t->trials++;
            t->last_trial = trial;
            counted = 1;
        }
    }
    int id = 0;
    if (jfield_int(ev, ctx, "override", queued || dropped, 1, JOURNAL_OVERRIDE_ID_MAX, &id,
                   err) < 0)
        return TALLY_LINE_BAD_ID;
    if (id == 0)
        return TALLY_LINE_OTHER; /* the optimizer's trial, or an override from before the queue */
    /* ids only grow and the tuner never reuses one: a queued line at or below one seen is a
     * repeat or a stray, and queuing it again would run an override twice */
    if (queued && id <= t->last_id)
        return TALLY_LINE_STRAY;
    if (id > t->last_id)
        t->last_id = id;
    if (dropped) {
        forget(t, id);
        return TALLY_LINE_OTHER;
    }
    if (queued)
        return queue(t, id, ev, ctx, err);
    /* a suggested line naming an override is the trial that took it out of the queue */
    if (jfield_int(ev, ctx, "trial", 1, 1, 100000000, &trial, &scratch) < 0) {
        forget(t, id);
        return TALLY_LINE_OTHER;
    }
    t->taken_id = id;
    t->taken_trial = trial;
    t->taken_counted = counted;
    t->taken = TALLY_TAKEN_OPEN;
    return TALLY_LINE_OTHER;
}

void journal_override_tally_end(JournalOverrideTally *t)
{
    settle(t);
}

void journal_override_tally_clear(JournalOverrideTally *t)
{
    for (size_t i = 0; i < t->n; i++)
        schedule_free(t->waiting[i].schedule);
    free(t->waiting);
    memset(t, 0, sizeof *t);
}
