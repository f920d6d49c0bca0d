/* The stops the console waits for: the session's leftover process-group stops on its loop
 * (a resume's, one before a trial, and at a quit the sweep of what dropped connections left,
 * session_stop_lost), and the live jobs' checkpoint-and-stop when a live session quits. */
#include "tui/console_stops.h"

#include "core/base/clock.h"
#include "remote/live/schedlive.h"
#include "tui/console_events.h"
#include "tui/frame.h"

/* Resume: what the killed session's unfinished trials left running is stopped first: begun
 * here, run by the loop (console_stop_step), and the first trial waits for it. */
void console_stop_interrupted(App *a, Session *s)
{
    if (a->pool)
        session_stop_interrupted(s, console_log_line, a);
}

/* Before every poll while the live jobs stop: the screen shows how far they are. */
static size_t show_stopping(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    (void)deadline_ms;
    App *a = ctx;
    console_sched_changed(a);
    frame_draw(a);
    return 0;
}

static int live_stopped(void *ctx)
{
    return schedlive_done(ctx);
}

/* Quitting a live session: every job checkpoints and stops (SIGTERM, SIGKILL after the
 * driver's timeout); the screen shows it until no job process is left. */
void console_live_stop(App *a)
{
    SchedLive *l = simsched_live(a->ss);
    schedlive_stop_all(l);
    app_message(a, 0, "stopping the live jobs: checkpoint, then stop...");
    EvLoop *loop = evloop_new();
    if (loop && evloop_add(loop, show_stopping, NULL, a) > 0 && schedlive_attach(l, loop) > 0)
        evloop_run(loop, live_stopped, l, clock_now_ms() + 60000);
    evloop_free(loop);
}

size_t console_stop_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    StopWatch *w = ctx;
    if (session_stop_busy(w->s)) {
        int64_t d = session_stop_deadline(w->s);
        if (d >= 0 && (*deadline_ms < 0 || d < *deadline_ms))
            *deadline_ms = d;
    }
    return 0;
}

void console_stop_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    StopWatch *w = ctx;
    App *a = w->a;
    int busy = session_stop_step(w->s, now_ms);
    if (a->quit) {
        a->quit = 0; /* not yet: see StopWatch */
        w->quitting = 1;
        if (w->tuner_source > 0)
            evloop_remove(w->loop, w->tuner_source);
        w->tuner_source = -1;
    }
    if (w->quitting && !busy && !w->swept) {
        /* Then what dropped connections left and no stop has ended yet (a host that did not
         * answer in time, or that no later trial used): stopped now, each result journaled,
         * rather than left running with nothing on record. */
        w->swept = 1;
        session_stop_lost(w->s, console_log_line, a);
        busy = session_stop_busy(w->s);
    }
    if (w->quitting && busy && !a->message[0]) { /* said again after a key cleared it */
        int64_t left_ms = session_stop_deadline(w->s) - now_ms;
        app_message(a, 0,
                    "quitting once the leftover process group stop ends (up to %.0f s): its "
                    "result goes to the journal",
                    left_ms > 0 ? (double)left_ms / 1000.0 + 0.5 : 0.0);
        a->dirty = 1;
    }
    if (w->quitting && !busy)
        a->quit = 1;
    if (a->stop_hold && !busy) {
        a->stop_hold = 0;
        tuner_set_paused(a->tuner, app_trials_held(a));
    }
}
