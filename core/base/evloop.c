/* The event loop: sources and timers in two small arrays, one poll() per round. A handful of
 * sources and timers at most, so plain arrays beat any heap. */
#include "core/base/evloop.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "core/base/clock.h"

typedef struct {
    long id; /* 0: removed, compacted away after the round */
    EvPollFn pollfds;
    EvStepFn step;
    void *ctx;
    size_t first, n; /* its slice of the fds of this round */
} Source;

typedef struct {
    long id; /* 0: cancelled or fired once */
    int64_t due_ms, every_ms;
    EvTimerFn fn;
    void *ctx;
} Timer;

struct EvLoop {
    Source *src;
    size_t n_src, cap_src;
    Timer *tm;
    size_t n_tm, cap_tm;
    struct pollfd *fds;
    size_t cap_fds;
    long next_id;
    int in_round, stopped;
};

EvLoop *evloop_new(void)
{
    EvLoop *l = calloc(1, sizeof *l);
    if (l)
        l->next_id = 1;
    return l;
}

void evloop_free(EvLoop *l)
{
    if (!l)
        return;
    free(l->src);
    free(l->tm);
    free(l->fds);
    free(l);
}

static int grow(void **items, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < want)
        n *= 2;
    void *p = realloc(*items, n * size);
    if (!p)
        return -1;
    *items = p;
    *cap = n;
    return 0;
}

long evloop_add(EvLoop *l, EvPollFn pollfds, EvStepFn step, void *ctx)
{
    if (grow((void **)&l->src, &l->cap_src, l->n_src + 1, sizeof *l->src) < 0)
        return -1;
    /* Added during a round: it has no slice of this round's fds (first, n = 0). */
    l->src[l->n_src++] = (Source){.id = l->next_id, .pollfds = pollfds, .step = step, .ctx = ctx};
    return l->next_id++;
}

void evloop_remove(EvLoop *l, long id)
{
    for (size_t i = 0; i < l->n_src; i++)
        if (l->src[i].id == id)
            l->src[i].id = 0;
}

long evloop_timer(EvLoop *l, int64_t delay_ms, int64_t every_ms, EvTimerFn fn, void *ctx)
{
    if (grow((void **)&l->tm, &l->cap_tm, l->n_tm + 1, sizeof *l->tm) < 0)
        return -1;
    l->tm[l->n_tm++] = (Timer){.id = l->next_id,
                               .due_ms = clock_now_ms() + (delay_ms > 0 ? delay_ms : 0),
                               .every_ms = every_ms > 0 ? every_ms : 0,
                               .fn = fn,
                               .ctx = ctx};
    return l->next_id++;
}

void evloop_cancel(EvLoop *l, long timer_id)
{
    for (size_t i = 0; i < l->n_tm; i++)
        if (l->tm[i].id == timer_id)
            l->tm[i].id = 0;
}

void evloop_stop(EvLoop *l)
{
    l->stopped = 1;
}

/* Drops removed sources and spent timers, keeping the order of the rest. */
static void compact(EvLoop *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n_src; i++)
        if (l->src[i].id)
            l->src[k++] = l->src[i];
    l->n_src = k;
    k = 0;
    for (size_t i = 0; i < l->n_tm; i++)
        if (l->tm[i].id)
            l->tm[k++] = l->tm[i];
    l->n_tm = k;
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* Collects every source's fds; a source that fills all the room it was given may have more,
 * so the array grows and it is asked again. Returns the deadline of the round or -1. */
static int64_t collect(EvLoop *l, size_t *n_fds)
{
    int64_t deadline = -1;
    size_t used = 0;
    for (size_t i = 0; i < l->n_src; i++) {
        Source *s = &l->src[i];
        s->first = used;
        s->n = 0;
        if (!s->id || !s->pollfds)
            continue;
        for (;;) {
            if (grow((void **)&l->fds, &l->cap_fds, used + 64, sizeof *l->fds) < 0)
                break; /* no memory: this round polls what fits */
            int64_t dl = deadline;
            size_t room = l->cap_fds - used;
            size_t n = s->pollfds(s->ctx, l->fds + used, room, &dl);
            if (n < room ||
                grow((void **)&l->fds, &l->cap_fds, l->cap_fds + 1, sizeof *l->fds) < 0) {
                s->n = n;
                deadline = earlier(deadline, dl);
                break;
            }
        }
        used += s->n;
    }
    for (size_t i = 0; i < l->n_tm; i++)
        if (l->tm[i].id)
            deadline = earlier(deadline, l->tm[i].due_ms);
    *n_fds = used;
    return deadline;
}

/* Fires the due timers, earliest first, each at most once per round. */
static void fire_timers(EvLoop *l, int64_t now)
{
    size_t n = l->n_tm; /* timers added by a timer wait for the next round */
    for (;;) {
        Timer *next = NULL;
        for (size_t i = 0; i < n; i++) {
            Timer *t = &l->tm[i];
            if (t->id && t->due_ms <= now && (!next || t->due_ms < next->due_ms))
                next = t;
        }
        if (!next)
            return;
        EvTimerFn fn = next->fn;
        void *ctx = next->ctx;
        if (next->every_ms) {
            next->due_ms += next->every_ms;
            if (next->due_ms <= now) /* far behind (a suspended process): skip the backlog */
                next->due_ms = now + next->every_ms;
        } else {
            next->id = 0;
        }
        fn(ctx, now); /* may add or cancel timers: next is not used after this */
    }
}

int evloop_run_once(EvLoop *l, int64_t max_wait_ms)
{
    l->in_round++;
    size_t n_fds = 0;
    int64_t deadline = collect(l, &n_fds);
    int64_t now = clock_now_ms();
    int64_t wait = deadline < 0 ? -1 : deadline <= now ? 0 : deadline - now;
    if (max_wait_ms >= 0 && (wait < 0 || wait > max_wait_ms))
        wait = max_wait_ms;
    if (wait > INT_MAX)
        wait = INT_MAX;
    int rc = poll(l->fds, n_fds, (int)wait);
    int failed = rc < 0 && errno != EINTR;
    int saved = errno;
    now = clock_now_ms();
    size_t n_src = l->n_src; /* sources added by a step wait for the next round */
    for (size_t i = 0; i < n_src; i++) {
        Source *s = &l->src[i];
        if (s->id && s->step)
            s->step(s->ctx, l->fds + s->first, rc > 0 ? s->n : 0, now);
    }
    fire_timers(l, now);
    if (--l->in_round == 0)
        compact(l);
    errno = saved;
    return failed ? -1 : 0;
}

int evloop_run(EvLoop *l, EvDoneFn done, void *ctx, int64_t until_ms)
{
    l->stopped = 0;
    for (;;) {
        if (l->stopped || (done && done(ctx)))
            return 1;
        int64_t wait = -1;
        if (until_ms >= 0) {
            wait = until_ms - clock_now_ms();
            if (wait < 0)
                return 0;
        }
        if (evloop_run_once(l, wait) < 0)
            return -1;
    }
}

int evloop_run_source(EvPollFn pollfds, EvStepFn step, void *ctx, EvDoneFn done, void *done_ctx,
                      int64_t until_ms)
{
    EvLoop *l = evloop_new();
    if (!l || evloop_add(l, pollfds, step, ctx) < 0) {
        evloop_free(l);
        errno = ENOMEM;
        return -1;
    }
    int rc = evloop_run(l, done, done_ctx, until_ms);
    evloop_free(l);
    return rc;
}
