/* The queued overrides' predicted times, kept for the trial table's queued rows: asked of the
 * tuner's model once for each override queued, and again for all once the model has learnt
 * from a trial that finished since; never at a redraw (a prediction samples the model). */
#ifndef TUNEDECK_QUEUEPRED_H
#define TUNEDECK_QUEUEPRED_H

#include <stddef.h>

#include "remote/launch/tuner.h"

typedef struct {
    int id;        /* the override's (tuner_override_id) */
    double mean_s; /* its predicted iteration time; NAN: none (no model, or it failed) */
    size_t model;  /* the finished trials the model had learnt from when it was asked */
} QueuedPrediction;

typedef struct {
    QueuedPrediction v[OVERRIDEQUEUE_MAX]; /* in queue order, as at the last update */
    size_t n;
    unsigned long asked; /* tuner_predict calls made, for the tests */
    int busy; /* the last update found the model busy for one of them: ask again soon */
} QueuePredictions;

/* Brings the cache up to the tuner's queue: an override it holds for the model as it is now
 * keeps its prediction (a drop or a trial started asks nothing); a new one, or all after a
 * trial finished (the model observed it), are asked. Returns 1 when something changed (a row
 * to redraw), 0 when nothing did; apart from that, q->busy says whether the model was busy with
 * a suggestion for one of them (it keeps its last prediction, if any: ask again soon). t may
 * be NULL (nothing queued). */
int queuepred_update(QueuePredictions *q, Tuner *t);
/* The prediction for the override of that id; NAN when none is known. */
double queuepred_mean_s(const QueuePredictions *q, int id);

#endif
