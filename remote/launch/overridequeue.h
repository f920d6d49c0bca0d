/* The operator's overrides that wait to run as the tuner's next trials (tuner.h:
 * tuner_override), first in, first out, each with its id: ids only grow over a session and
 * its resumes, since the journal names an override by its id (core/journal/journal_override.h). */
#ifndef TUNEDECK_OVERRIDEQUEUE_H
#define TUNEDECK_OVERRIDEQUEUE_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/model/schedule.h"

/* At most this many wait: an operator planning more is told so rather than one being lost. */
enum { OVERRIDEQUEUE_MAX = 16 };

typedef struct {
    Schedule *s[OVERRIDEQUEUE_MAX]; /* s[0] runs next */
    int id[OVERRIDEQUEUE_MAX];
    size_t n;
    int last_id; /* the highest id queued, dropped or run so far */
} OverrideQueue;

/* Queues a copy of s (validated first) under id behind those already there; -1 with why in
 * err when s is invalid, the queue is full or memory ran out. */
int overridequeue_push(OverrideQueue *q, int id, const Schedule *s, Error *err);
/* Takes the i-th out of the queue: the caller owns the schedule; its id in *id. NULL if none. */
Schedule *overridequeue_take(OverrideQueue *q, size_t i, int *id);
void overridequeue_clear(OverrideQueue *q);

#endif
