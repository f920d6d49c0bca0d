/* Reconnect delays: capped exponential backoff with jitter, so that many hosts that fell
 * together do not all retry in the same instant. */
#ifndef TUNEDECK_BACKOFF_H
#define TUNEDECK_BACKOFF_H

#include <stdint.h>

typedef struct {
    int64_t base_ms; /* the first delay before jitter */
    int64_t max_ms;  /* the cap */
} Backoff;

/* The delay before retry number `attempt` (0 = first retry): min(max, base * 2^attempt),
 * then "equal jitter": half of it fixed, half scaled by u in [0, 1). */
int64_t backoff_delay_ms(const Backoff *b, int attempt, double u);

/* A small xorshift generator for u (no global state). */
double backoff_uniform(uint64_t *state);

#endif
