#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"

/* A source reading one pipe: counts bytes read and every step it saw. */
typedef struct {
    int fd[2];
    char got[64];
    size_t n_got;
    int steps, ready_steps;
    char name;
    char *order; /* shared: each step appends its name */
    EvLoop *loop;
    long remove_on_step; /* an id to remove when this source steps */
} PipeSrc;

static size_t pipe_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)deadline_ms;
    PipeSrc *p = ctx;
    if (!cap)
        return 0;
    fds[0] = (struct pollfd){.fd = p->fd[0], .events = POLLIN};
    return 1;
}

static void pipe_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)now_ms;
    PipeSrc *p = ctx;
    p->steps++;
    if (p->order)
        strncat(p->order, &p->name, 1);
    if (p->remove_on_step)
        evloop_remove(p->loop, p->remove_on_step);
    if (n == 1 && (fds[0].revents & POLLIN)) {
        p->ready_steps++;
        ssize_t r = read(p->fd[0], p->got + p->n_got, sizeof p->got - 1 - p->n_got);
        if (r > 0)
            p->n_got += (size_t)r;
    }
}

static void pipe_open(PipeSrc *p, char name)
{
    memset(p, 0, sizeof *p);
    cr_assert_eq(pipe(p->fd), 0);
    fcntl(p->fd[0], F_SETFL, O_NONBLOCK);
    p->name = name;
}

static void pipe_close(PipeSrc *p)
{
    close(p->fd[0]);
    close(p->fd[1]);
}

static int got_bytes(void *ctx)
{
    PipeSrc *p = ctx;
    return p->n_got >= 3;
}

Test(evloop, steps_a_source_only_with_the_fds_that_are_ready)
{
    EvLoop *l = evloop_new();
    PipeSrc a, b;
    pipe_open(&a, 'a');
    pipe_open(&b, 'b');
    cr_assert_gt(evloop_add(l, pipe_pollfds, pipe_step, &a), 0);
    cr_assert_gt(evloop_add(l, pipe_pollfds, pipe_step, &b), 0);
    cr_assert_eq(write(b.fd[1], "xyz", 3), 3);
    cr_assert_eq(evloop_run(l, got_bytes, &b, clock_now_ms() + 5000), 1);
    cr_assert_eq(b.n_got, 3);
    cr_assert_eq(memcmp(b.got, "xyz", 3), 0);
    cr_assert_eq(a.ready_steps, 0, "the silent pipe was never reported ready");
    cr_assert_eq(a.steps, b.steps, "every source steps after every poll");
    pipe_close(&a);
    pipe_close(&b);
    evloop_free(l);
}

Test(evloop, run_returns_zero_when_the_time_limit_passes_first)
{
    EvLoop *l = evloop_new();
    PipeSrc a;
    pipe_open(&a, 'a');
    evloop_add(l, pipe_pollfds, pipe_step, &a);
    int64_t t0 = clock_now_ms();
    cr_assert_eq(evloop_run(l, got_bytes, &a, t0 + 30), 0);
    cr_assert_geq(clock_now_ms(), t0 + 30);
    pipe_close(&a);
    evloop_free(l);
}

Test(evloop, sources_step_in_the_order_they_were_added)
{
    EvLoop *l = evloop_new();
    char order[64] = "";
    PipeSrc s[3];
    for (int i = 0; i < 3; i++) {
        pipe_open(&s[i], "cab"[i]);
        s[i].order = order;
        evloop_add(l, pipe_pollfds, pipe_step, &s[i]);
    }
    evloop_run_once(l, 0);
    evloop_run_once(l, 0);
    cr_assert_str_eq(order, "cabcab");
    for (int i = 0; i < 3; i++)
        pipe_close(&s[i]);
    evloop_free(l);
}

Test(evloop, a_source_removed_during_a_step_is_not_called_again)
{
    EvLoop *l = evloop_new();
    char order[64] = "";
    PipeSrc a, b, c;
    pipe_open(&a, 'a');
    pipe_open(&b, 'b');
    pipe_open(&c, 'c');
    a.order = b.order = c.order = order;
    evloop_add(l, pipe_pollfds, pipe_step, &a);
    long idb = evloop_add(l, pipe_pollfds, pipe_step, &b);
    evloop_add(l, pipe_pollfds, pipe_step, &c);
    a.loop = l;
    a.remove_on_step = idb; /* removes b before b's turn in the same round */
    evloop_run_once(l, 0);
    a.remove_on_step = 0;
    cr_assert_eq(write(c.fd[1], "z", 1), 1);
    evloop_run_once(l, 1000);
    cr_assert_str_eq(order, "acac");
    cr_assert_eq(c.n_got, 1, "the fds of the sources after a removed one stay in step");
    pipe_close(&a);
    pipe_close(&b);
    pipe_close(&c);
    evloop_free(l);
}

typedef struct {
    EvLoop *loop;
    int fired;
    int64_t at[8];
    long cancel; /* a timer this one cancels when it fires */
    int stop_after;
} TimerLog;

static void on_timer(void *ctx, int64_t now_ms)
{
    TimerLog *t = ctx;
    if (t->fired < 8)
        t->at[t->fired] = now_ms;
    t->fired++;
    if (t->cancel)
        evloop_cancel(t->loop, t->cancel);
    if (t->stop_after && t->fired >= t->stop_after)
        evloop_stop(t->loop);
}

Test(evloop, a_one_shot_timer_fires_once_not_before_it_is_due)
{
    EvLoop *l = evloop_new();
    TimerLog t = {.loop = l, .stop_after = 1};
    int64_t t0 = clock_now_ms();
    evloop_timer(l, 20, 0, on_timer, &t);
    /* No source: the loop sleeps in poll until the timer, which stops it. */
    cr_assert_eq(evloop_run(l, NULL, NULL, t0 + 60000), 1);
    cr_assert_eq(t.fired, 1);
    cr_assert_geq(t.at[0], t0 + 20);
    cr_assert_eq(evloop_run(l, NULL, NULL, clock_now_ms() + 50), 0);
    cr_assert_eq(t.fired, 1, "a one-shot timer is spent");
    evloop_free(l);
}

Test(evloop, a_repeating_timer_fires_every_period_until_cancelled)
{
    EvLoop *l = evloop_new();
    TimerLog t = {.loop = l, .stop_after = 4};
    int64_t t0 = clock_now_ms();
    long id = evloop_wake_every(l, 5, on_timer, &t);
    cr_assert_eq(evloop_run(l, NULL, NULL, t0 + 10000), 1);
    cr_assert_eq(t.fired, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_geq(t.at[i], t0 + 5 * (i + 1), "fire %d came early", i);
    evloop_cancel(l, id);
    int64_t t1 = clock_now_ms();
    cr_assert_eq(evloop_run(l, NULL, NULL, t1 + 30), 0);
    cr_assert_eq(t.fired, 4, "a cancelled timer stays quiet");
    evloop_free(l);
}

Test(evloop, timers_fire_earliest_first_and_may_cancel_each_other)
{
    EvLoop *l = evloop_new();
    TimerLog early = {.loop = l}, late = {.loop = l};
    /* Added first but due later: the earlier one fires first and cancels it. */
    long late_id = evloop_timer(l, 1, 0, on_timer, &late);
    evloop_timer(l, 0, 0, on_timer, &early);
    early.cancel = late_id;
    usleep(3000);
    evloop_run_once(l, 0);
    cr_assert_eq(early.fired, 1);
    cr_assert_eq(late.fired, 0, "cancelled by the earlier timer in the same round");
    evloop_free(l);
}

Test(evloop, run_source_drives_one_source_alone)
{
    PipeSrc a;
    pipe_open(&a, 'a');
    cr_assert_eq(write(a.fd[1], "abc", 3), 3);
    cr_assert_eq(
        evloop_run_source(pipe_pollfds, pipe_step, &a, got_bytes, &a, clock_now_ms() + 5000), 1);
    cr_assert_eq(a.n_got, 3);
    pipe_close(&a);
}

/* A source with more fds than the loop's first array holds gets them all polled. */
typedef struct {
    int fd[2];
    size_t want;
    size_t seen;
} ManyFds;

static size_t many_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)deadline_ms;
    ManyFds *m = ctx;
    size_t n = m->want < cap ? m->want : cap;
    for (size_t i = 0; i < n; i++)
        fds[i] = (struct pollfd){.fd = m->fd[0], .events = POLLIN};
    return n;
}

static void many_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)now_ms;
    ManyFds *m = ctx;
    for (size_t i = 0; i < n; i++)
        m->seen += (fds[i].revents & POLLIN) != 0;
}

Test(evloop, a_source_with_many_fds_gets_room_for_all)
{
    ManyFds m = {.want = 500};
    cr_assert_eq(pipe(m.fd), 0);
    cr_assert_eq(write(m.fd[1], "x", 1), 1);
    EvLoop *l = evloop_new();
    evloop_add(l, many_pollfds, many_step, &m);
    evloop_run_once(l, 1000);
    cr_assert_eq(m.seen, 500);
    close(m.fd[0]);
    close(m.fd[1]);
    evloop_free(l);
}
