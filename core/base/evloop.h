/* The one event loop (after Redis's ae.c): sources register a pollfds()/step() pair, timers
 * fire once or every period, and one poll() serves them all until a predicate holds. Every
 * non-blocking component (launchers, tuner, host pool, live driver, console) already speaks
 * pollfds/step, so a command, a tool or the console only says which run together. */
#ifndef TUNEDECK_EVLOOP_H
#define TUNEDECK_EVLOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* Fills up to cap pollfds; lowers *deadline_ms (monotonic, clock_now_ms; < 0: none yet) to
 * the source's next timer if it has one. Returns how many fds were filled. */
typedef size_t (*EvPollFn)(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
/* After every poll, ready or not: fds are the ones pollfds filled (n = 0 when poll woke for
 * a timer or a deadline only); runs the source's expired deadlines too. */
typedef void (*EvStepFn)(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms);
typedef void (*EvTimerFn)(void *ctx, int64_t now_ms);
typedef int (*EvDoneFn)(void *ctx);

typedef struct EvLoop EvLoop;

EvLoop *evloop_new(void);
void evloop_free(EvLoop *l); /* frees the loop only: sources and timers belong to the caller */

/* Registers a source (pollfds may be NULL: a step that runs after every poll). Sources are
 * polled and stepped in the order they were added. Returns an id > 0, or -1 (no memory). */
long evloop_add(EvLoop *l, EvPollFn pollfds, EvStepFn step, void *ctx);
/* Safe from inside any step or timer: the source is not called again. */
void evloop_remove(EvLoop *l, long id);

/* A timer due delay_ms from now; every_ms > 0 fires again every period after that
 * (from when it was due, so a late wake does not drift). Returns an id > 0 or -1. */
long evloop_timer(EvLoop *l, int64_t delay_ms, int64_t every_ms, EvTimerFn fn, void *ctx);
static inline long evloop_wake_every(EvLoop *l, int64_t every_ms, EvTimerFn fn, void *ctx)
{
    return evloop_timer(l, every_ms, every_ms, fn, ctx);
}
void evloop_cancel(EvLoop *l, long timer_id); /* safe from inside any step or timer */

/* One poll() of every source, waiting at most max_wait_ms (< 0: until a deadline or an fd),
 * then every source's step in order, then the timers that are due. Returns 0, or -1 when
 * poll() failed (errno says why; EINTR is not a failure). */
int evloop_run_once(EvLoop *l, int64_t max_wait_ms);
/* Runs until done(ctx) (checked before every poll; NULL: never), evloop_stop, or
 * until_ms passes (< 0: no limit). Returns 1 when done or stopped, 0 at until_ms, -1 when
 * poll() failed. */
int evloop_run(EvLoop *l, EvDoneFn done, void *ctx, int64_t until_ms);
void evloop_stop(EvLoop *l); /* from a step or a timer: evloop_run returns after this round */

/* One source alone on a loop of its own, until done(done_ctx) or until_ms: what a blocking
 * wrapper (launcher_run_blocking, hostpool_run_until_settled) needs. Same returns. */
int evloop_run_source(EvPollFn pollfds, EvStepFn step, void *ctx, EvDoneFn done, void *done_ctx,
                      int64_t until_ms);

#endif
