/* Which process groups a journal says may still run (orphans_collect, remote/launch/orphans.h):
 * read off its "remote_process", "remote_process_stop" and "finished" lines. */
#include "remote/launch/orphans.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/groupstop.h"

static const char *event_kind(const cJSON *ev)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(ev, "event");
    return cJSON_IsString(k) ? k->valuestring : "";
}

static int event_trial(const cJSON *ev)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    return cJSON_IsNumber(t) && t->valuedouble >= 1 && t->valuedouble <= 1e8 ? t->valueint : 0;
}

/* The group an event names (trial, machine, pgid, mark), checked as a stop command needs it:
 * 0 for one to leave out. A group id of 1 or less would be everything: never. A mark that is
 * not one is no way to know the group: the event is left out, like one without a pgid. */
static int event_group(const cJSON *ev, Orphan *g)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ev, "machine");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "pgid");
    const cJSON *mark = cJSON_GetObjectItemCaseSensitive(ev, "mark");
    memset(g, 0, sizeof *g);
    g->trial = event_trial(ev);
    if (!g->trial || !cJSON_IsString(m) || !cJSON_IsNumber(p) || p->valuedouble < 2 ||
        p->valuedouble > 1e9 || strlen(m->valuestring) >= sizeof g->machine ||
        (mark && !(cJSON_IsString(mark) && groupstop_mark_ok(mark->valuestring))))
        return 0;
    g->pgid = (long)p->valuedouble;
    snprintf(g->machine, sizeof g->machine, "%s", m->valuestring);
    if (mark)
        snprintf(g->mark, sizeof g->mark, "%s", mark->valuestring);
    return 1;
}

static long find_group(const OrphanList *l, const Orphan *g)
{
    for (size_t i = l->n; i-- > 0;)
        if (l->items[i].trial == g->trial && l->items[i].pgid == g->pgid &&
            strcmp(l->items[i].machine, g->machine) == 0 && strcmp(l->items[i].mark, g->mark) == 0)
            return (long)i;
    return -1;
}

/* A "finished" line: its trial, its place in the journal. */
typedef struct {
    int trial;
    size_t at;
} Outcome;

static int outcome_cmp(const void *a, const void *b)
{
    const Outcome *x = a, *y = b;
    if (x->trial != y->trial)
        return (x->trial > y->trial) - (x->trial < y->trial);
    return (x->at > y->at) - (x->at < y->at);
}

static int outcome_trial_cmp(const void *key, const void *elem)
{
    int t = *(const int *)key, u = ((const Outcome *)elem)->trial;
    return (t > u) - (t < u);
}

/* The journal's "finished" lines, sorted by trial, then place (*n of them; NULL with *n 0 when
 * none). -1 when memory runs out. */
static int outcomes_of(const JournalLog *log, Outcome **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < log->n; i++) {
        int trial = event_trial(log->events[i]);
        if (!trial || strcmp(event_kind(log->events[i]), "finished") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            Outcome *grown = realloc(*out, cap * sizeof *grown);
            if (!grown) {
                free(*out);
                *out = NULL;
                return -1;
            }
            *out = grown;
        }
        (*out)[(*n)++] = (Outcome){trial, i};
    }
    if (*n)
        qsort(*out, *n, sizeof **out, outcome_cmp);
    return 0;
}

/* Whether `trial` has a "finished" line after place `at` of the journal: its processes were
 * then stopped or exited under the session's eyes (unless a stop of them said otherwise). */
static int finished_after(const Outcome *o, size_t n, int trial, size_t at)
{
    const Outcome *hit = n ? bsearch(&trial, o, n, sizeof *o, outcome_trial_cmp) : NULL;
    if (!hit)
        return 0;
    while (hit + 1 < o + n && hit[1].trial == trial)
        hit++; /* its last */
    return hit->at > at;
}

int orphans_collect(const JournalLog *log, OrphanList *out, Error *err)
{
    memset(out, 0, sizeof *out);
    /* Per group of out: where the journal named it first (SIZE_MAX: only a stop line did, which
     * says nothing of its trial's outcome), and whether the last stop of it said "not stopped"
     * (its host did not answer, or the kill failed). */
    size_t *named = NULL;
    unsigned char *left = NULL;
    Outcome *outcomes = NULL;
    size_t n_outcomes = 0;
    if (outcomes_of(log, &outcomes, &n_outcomes) < 0)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < log->n; i++) {
        const cJSON *ev = log->events[i];
        const char *kind = event_kind(ev);
        int stop = strcmp(kind, "remote_process_stop") == 0;
        Orphan g;
        if ((!stop && strcmp(kind, "remote_process") != 0) || !event_group(ev, &g))
            continue;
        /* A group journaled twice is kept twice (stopped twice, harmlessly); a stop line is
         * the last one's. */
        long at = stop ? find_group(out, &g) : -1;
        if (at < 0) {
            /* A stop line whose group's own line was lost still names all of it. */
            size_t *n_grown = realloc(named, (out->n + 1) * sizeof *named);
            if (n_grown)
                named = n_grown;
            unsigned char *l_grown = n_grown ? realloc(left, out->n + 1) : NULL;
            if (l_grown)
                left = l_grown;
            if (!l_grown || orphans_add(out, g.trial, g.machine, g.pgid, g.mark) < 0) {
                free(named);
                free(left);
                free(outcomes);
                orphans_clear(out);
                return error_set(err, "out of memory");
            }
            at = (long)out->n - 1;
            named[at] = stop ? SIZE_MAX : i;
            left[at] = 0;
        }
        if (stop) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(ev, "result");
            left[at] = cJSON_IsString(r) && strncmp(r->valuestring, "not stopped", 11) == 0;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < out->n; i++) {
        Orphan *o = &out->items[i];
        o->finished = named[i] == SIZE_MAX ||
                      finished_after(outcomes, n_outcomes, o->trial, named[i]);
        if (!o->finished || left[i])
            out->items[kept++] = *o;
    }
    out->n = kept;
    free(named);
    free(left);
    free(outcomes);
    return 0;
}
