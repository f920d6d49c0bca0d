/* The end of `schedule --live --duration` as a loop deadline (cmd/live_end.c). */
#include <criterion/criterion.h>

#include "cmd/live_end.h"
#include "core/base/clock.h"
#include "core/base/evloop.h"

typedef struct {
    LiveEnd end;
    long rounds, ticks, stops;
} Watch;

static size_t watch_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    live_end_deadline(&((Watch *)ctx)->end, deadline_ms);
    return 0;
}

static void watch_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    Watch *w = ctx;
    w->rounds++;
    w->stops += live_end_due(&w->end, now_ms);
}

static void tick(void *ctx, int64_t now_ms)
{
    (void)now_ms;
    ((Watch *)ctx)->ticks++;
}

static int ten_ticks(void *ctx)
{
    return ((Watch *)ctx)->ticks >= 10;
}

/* Regression: once --duration had passed, the end stayed the loop's deadline, in the past,
 * so every poll() returned at once while the stops waited to be confirmed (a Slurm
 * controller that refused its rounds at once: 20 s at ~90% CPU, then SIGKILL). After the end
 * the loop wakes only for what else it waits on: here a tick every 20 ms, standing for the
 * driver's. Counted, not timed: ten ticks take at most ten rounds, plus the end's own and
 * one the ticks may share. */
Test(live_end, a_passed_end_wakes_the_loop_once)
{
    Watch w = {0};
    live_end_init(&w.end, clock_now_s(), 0.001);
    EvLoop *l = evloop_new();
    cr_assert(l);
    cr_assert(evloop_add(l, watch_pollfds, watch_step, &w) > 0);
    cr_assert(evloop_wake_every(l, 20, tick, &w) > 0);
    cr_assert_eq(evloop_run(l, ten_ticks, &w, clock_now_ms() + 60000), 1);
    evloop_free(l);
    cr_assert(w.stops >= 1, "the end was reached");
    cr_assert_leq(w.rounds, w.ticks + 2, "%ld loop rounds for %ld ticks", w.rounds, w.ticks);
}

Test(live_end, the_end_is_the_deadline_until_it_comes)
{
    LiveEnd e;
    live_end_init(&e, 100.0, 30.0);
    int64_t dl = -1;
    live_end_deadline(&e, &dl);
    cr_assert_eq(dl, 130000);
    dl = 120000;
    live_end_deadline(&e, &dl);
    cr_assert_eq(dl, 120000, "an earlier deadline is kept");
    cr_assert_eq(live_end_due(&e, 129999), 0);
    cr_assert_eq(live_end_due(&e, 130000), 1);
    cr_assert_eq(live_end_due(&e, 130001), 1, "and stays due");
    dl = -1;
    live_end_deadline(&e, &dl);
    cr_assert_eq(dl, -1, "a deadline that has come is not the loop's any more");
}

Test(live_end, no_duration_is_no_deadline)
{
    LiveEnd e;
    live_end_init(&e, 100.0, 0);
    int64_t dl = -1;
    live_end_deadline(&e, &dl);
    cr_assert_eq(dl, -1);
    cr_assert_eq(live_end_due(&e, 1 << 30), 0);
}
