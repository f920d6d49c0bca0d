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

void history_clear(TrialHistory *h)
{
    schedule_free(h->best);
    for (size_t i = 0; i < h->n_seen; i++)
        schedule_free(h->seen[i]);
    free(h->seen);
    history_init(h);
}
