/* The bespoke optimizers' trial history (core/opt/history.h). */
#include "core/opt/history.h"

#include <math.h>
#include <stdlib.h>

void history_init(TrialHistory *h)
{
    h->seen = NULL;
    h->n_seen = 0;
    h->best = NULL;
    h->best_s = INFINITY;
    h->left_out = NULL;
}

int history_add(TrialHistory *h, const Observation *o)
{
    Schedule **seen = realloc(h->seen, (h->n_seen + 1) * sizeof *seen);
    if (!seen)
        return -1;
    h->seen = seen;
    if (!(h->seen[h->n_seen] = schedule_copy(o->schedule)))
        return -1;
    h->n_seen++;
    if (o->status == TRIAL_OK && o->time_s < h->best_s) {
        h->best_s = o->time_s;
        schedule_free(h->best);
        h->best = schedule_copy(o->schedule); /* NULL out of memory: no incumbent start */
    }
    return 0;
}

int history_has(const TrialHistory *h, const Schedule *s)
{
    for (size_t i = 0; i < h->n_seen; i++)
        if (schedule_equal(h->seen[i], s))
            return 1;
    return 0;
}

void history_leave_out(TrialHistory *h, const unsigned char *out, size_t n)
{
    free(h->left_out);
    h->left_out = NULL;
    size_t any = 0;
    for (size_t m = 0; out && m < n; m++)
        any += out[m] != 0;
    if (!any || !(h->left_out = calloc(n, 1)))
        return;
    for (size_t m = 0; m < n; m++)
        h->left_out[m] = out[m] != 0;
}

unsigned char *history_leave_out_suspend(TrialHistory *h)
{
    unsigned char *kept = h->left_out;
    h->left_out = NULL;
    return kept;
}

void history_leave_out_restore(TrialHistory *h, unsigned char *kept)
{
    free(h->left_out);
    h->left_out = kept;
}

int history_left_out(const TrialHistory *h, size_t m)
{
    return h->left_out && h->left_out[m];
}

int history_skips(const TrialHistory *h, const Schedule *s)
{
    for (size_t m = 0; h->left_out && m < s->cluster->n_machines; m++)
        if (h->left_out[m] && (s->worker[m] || s->ps[m]))
            return 1;
    return history_has(h, s);
}

void history_clear(TrialHistory *h)
{
    free(h->left_out);
    schedule_free(h->best);
    for (size_t i = 0; i < h->n_seen; i++)
        schedule_free(h->seen[i]);
    free(h->seen);
    history_init(h);
}
