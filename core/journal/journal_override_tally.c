/* The overrides a journal left waiting, counted line by line (journal_override_tally.h). The
 * rule is journal_overrides_decode's; where it looks ahead from a suggested line to the next
 * one for the trial's start, this settles the trial at the next suggested line or the end. */
#include "core/journal/journal_override_tally.h"

#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_override.h"

static int int_field(const cJSON *ev, const char *key, int lo, int hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != (double)(long)v->valuedouble)
        return -1;
    *out = (int)v->valuedouble;
    return 0;
}

static void forget(JournalOverrideTally *t, int id)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->waiting[i].id == id) {
            memmove(t->waiting + i, t->waiting + i + 1, (t->n - i - 1) * sizeof *t->waiting);
            t->n--;
            if (i < t->unstarted)
                t->unstarted--;
            return;
        }
}

/* Waits again at the head: taken for a trial that never began. */
static void to_head(JournalOverrideTally *t, int id, int trial)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->waiting[i].id == id) {
            memmove(t->waiting + 1, t->waiting, i * sizeof *t->waiting);
            t->waiting[0] = (JournalTallied){id, trial};
            if (i >= t->unstarted)
                t->unstarted++;
            return;
        }
}

static void settle(JournalOverrideTally *t)
{
    if (t->taken_state == 2)
        forget(t, t->taken_id);
    else if (t->taken_state)
        to_head(t, t->taken_id, t->taken_trial);
    t->taken_state = 0;
}

static int names_taken(const JournalOverrideTally *t, const cJSON *ev)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    return t->taken_state == 1 && cJSON_IsNumber(n) && n->valuedouble == t->taken_trial;
}

void journal_override_tally_take(JournalOverrideTally *t, const cJSON *ev)
{
    const char *kind = cJSON_GetObjectItemCaseSensitive(ev, "event")->valuestring;
    if (strcmp(kind, "started") == 0) {
        if (names_taken(t, ev))
            t->taken_state = 2;
        return;
    }
    if (strcmp(kind, "finished") == 0) {
        /* an outcome of its own: it began; the `interrupted` a resume gives: it did not */
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(ev, "status");
        if (names_taken(t, ev))
            t->taken_state =
                !cJSON_IsString(st) || strcmp(st->valuestring, "interrupted") != 0 ? 2 : 3;
        return;
    }
    int queued = strcmp(kind, "override_queued") == 0;
    int dropped = strcmp(kind, "override_dropped") == 0;
    int suggested = strcmp(kind, "suggested") == 0;
    if (!queued && !dropped && !suggested)
        return;
    if (suggested)
        settle(t); /* one trial at a time: the one before has had its lines */
    int id = 0;
    if (int_field(ev, "override", 1, JOURNAL_OVERRIDE_ID_MAX, &id) < 0)
        return; /* none, or one a resume does not take */
    if (queued && id <= t->last_id)
        return; /* a repeated or stray line */
    if (id > t->last_id)
        t->last_id = id;
    if (dropped) {
        forget(t, id);
        return;
    }
    if (suggested) {
        int trial = 0;
        if (int_field(ev, "trial", 1, 100000000, &trial) < 0) {
            forget(t, id);
            return;
        }
        t->taken_id = id;
        t->taken_trial = trial;
        t->taken_state = 1;
        return;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        JournalTallied *g = realloc(t->waiting, cap * sizeof *g);
        if (!g) {
            t->failed = 1;
            return;
        }
        t->waiting = g;
        t->cap = cap;
    }
    t->waiting[t->n++] = (JournalTallied){id, 0};
}

void journal_override_tally_end(JournalOverrideTally *t)
{
    settle(t);
}

void journal_override_tally_clear(JournalOverrideTally *t)
{
    free(t->waiting);
    memset(t, 0, sizeof *t);
}
