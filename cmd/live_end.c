/* The end of a live run as a loop deadline (cmd/live_end.h). */
#include "cmd/live_end.h"

void live_end_init(LiveEnd *e, double t0_s, double duration_s)
{
    e->end_ms = duration_s > 0 ? (int64_t)((t0_s + duration_s) * 1000) : -1;
    e->reached = 0;
}

/* Not once reached: a deadline in the past makes every poll() return at once, and the stops
 * the end asked can take a while to be confirmed (stop_timeout_s; a Slurm controller whose
 * rounds fail keeps them waiting that long): the loop would spin for all of it. */
void live_end_deadline(const LiveEnd *e, int64_t *deadline_ms)
{
    if (e->end_ms >= 0 && !e->reached && (*deadline_ms < 0 || e->end_ms < *deadline_ms))
        *deadline_ms = e->end_ms;
}

int live_end_due(LiveEnd *e, int64_t now_ms)
{
    if (e->end_ms >= 0 && now_ms >= e->end_ms)
        e->reached = 1;
    return e->reached;
}
