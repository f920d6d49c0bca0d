#ifndef TUNEDECK_SCHEDULE_LIVE_STATUS_H
#define TUNEDECK_SCHEDULE_LIVE_STATUS_H

#include <stdio.h>

#include "remote/live/schedlive.h"

/* Every job's real progress now: a line each on standard output when to_stdout (a job that
 * has neither run nor printed a progress line is left out), and a progress record each on
 * events (NULL: none) for a job that has printed one; times from t0 (clock_now_s). */
void schedule_live_status(SchedLive *l, double t0, FILE *events, int to_stdout);

/* The closing table on standard output, a row per job; returns 1 when a job failed. */
int schedule_live_table(SchedLive *l);

#endif
