/* What the bespoke optimizers (parameter server and allreduce) keep of the trials they were
 * told: every schedule observed, so as not to suggest one again, and the fastest ok trial. */
#ifndef TUNEDECK_HISTORY_H
#define TUNEDECK_HISTORY_H

#include <stddef.h>

#include "core/model/observation.h"

typedef struct {
    Schedule **seen; /* every schedule observed */
    size_t n_seen;
    Schedule *best; /* the fastest ok trial's schedule; NULL before one */
    double best_s;  /* its measured time; INFINITY before one */
} TrialHistory;

void history_init(TrialHistory *h);
/* Keeps a copy of the trial's schedule (and of it as the best when it is). -1 when out of
 * memory: the trial is not kept, and the history goes on with what it has. */
int history_add(TrialHistory *h, const Observation *o);
int history_has(const TrialHistory *h, const Schedule *s);
void history_clear(TrialHistory *h);

#endif
