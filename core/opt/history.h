/* What the bespoke optimizers (parameter server and allreduce) keep of the trials they were
 * told: every schedule observed, so as not to suggest one again, and the fastest ok trial;
 * and the machines the tuner left out (optimizer_leave_out), so as not to suggest a schedule
 * that uses one. */
#ifndef TUNEDECK_HISTORY_H
#define TUNEDECK_HISTORY_H

#include <stddef.h>

#include "core/model/observation.h"

typedef struct {
    Schedule **seen; /* every schedule observed */
    size_t n_seen;
    Schedule *best; /* the fastest ok trial's schedule; NULL before one */
    double best_s;  /* its measured time; INFINITY before one */
    /* n_machines flags, nonzero: left out (optimizer_leave_out); NULL: none is */
    unsigned char *left_out;
} TrialHistory;

void history_init(TrialHistory *h);
/* Keeps a copy of the trial's schedule (and of it as the best when it is). -1 when out of
 * memory: the trial is not kept, and the history goes on with what it has. */
int history_add(TrialHistory *h, const Observation *o);
int history_has(const TrialHistory *h, const Schedule *s);
/* The machines left out from now on (n flags, nonzero: left out; NULL or all zero: none),
 * copied. Out of memory none is: the tuner moves a schedule off them as before. */
void history_leave_out(TrialHistory *h, const unsigned char *out, size_t n);
/* Whether machine m is left out. */
int history_left_out(const TrialHistory *h, size_t m);
/* Takes the left-out machines away (the caller puts them back with history_leave_out_restore):
 * a search with none left finds nothing, and one as if none were left out gives the tuner a
 * schedule to move off them, or before_launch one to refuse. */
unsigned char *history_leave_out_suspend(TrialHistory *h);
void history_leave_out_restore(TrialHistory *h, unsigned char *kept);
/* Whether the search skips s: observed already, or it uses a left-out machine (a worker or a
 * parameter server there), where the trial would fail unreachable. */
int history_skips(const TrialHistory *h, const Schedule *s);
void history_clear(TrialHistory *h);

#endif
