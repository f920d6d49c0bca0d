/* The end of `schedule --live --duration S` as a deadline of the run's event loop
 * (core/base/evloop.h): the loop wakes when it comes, and the stop it brings is asked then. */
#ifndef TUNEDECK_LIVE_END_H
#define TUNEDECK_LIVE_END_H

#include <stdint.h>

typedef struct {
    int64_t end_ms; /* clock_now_ms's clock; < 0: no --duration */
    int reached;
} LiveEnd;

/* The run started at t0_s (clock_now_s) and lasts duration_s (<= 0: until its jobs end). */
void live_end_init(LiveEnd *e, double t0_s, double duration_s);
/* Lowers *deadline_ms (< 0: none yet) to the end until live_end_due has seen it come. */
void live_end_deadline(const LiveEnd *e, int64_t *deadline_ms);
/* 1 once now_ms is at or past the end (every call after too): the stop is asked. */
int live_end_due(LiveEnd *e, int64_t now_ms);

#endif
