/* What `tune`'s summary says of a trial an interrupting signal (SIGINT, SIGTERM) left without
 * an outcome: the journal keeps it unfinished and a resume marks it interrupted. */
#ifndef TUNEDECK_TUNE_INTERRUPTED_H
#define TUNEDECK_TUNE_INTERRUPTED_H

#include <stddef.h>

#include "remote/launch/tuner.h"

/* "SIGINT", "SIGTERM", or "a signal". */
const char *tune_signal_name(int sig);
/* Why trial r has no outcome, in out: stopped while it ran, or before it launched (held by
 * before_launch while a leftover group was stopped: it never ran, as the journal, with no
 * `started` line, and the resume's "was about to start" say too). */
void tune_interrupted_reason(char *out, size_t cap, int sig, const TrialRecord *r);

#endif
