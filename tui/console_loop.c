/* The console's loop: its sources in the order they step (the terminal, the tuner, the hosts'
 * pool, the session's leftover stops, the Slurm desk, the live driver on Slurm, the frame),
 * run until a quit (a key, a command, or a signal taken as one). */
#include "tui/console_loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/schedlive.h"
#include "tui/console_events.h"
#include "tui/console_stops.h"
#include "tui/frame.h"
#include "tui/input.h"
#include "tui/term.h"
#include "tui/view.h"

enum { FRAME_MS = 33 };

static int64_t min_deadline(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* The console's sources on the loop, in the order they step: the terminal (keys, signals,
 * the pacing of simulated trials), the tuner, the hosts' pool, then the frame (the scheduler's
 * tick, the trial table, the queued rows' and the editor's predictions, the redraw at most
 * every FRAME_MS). */
static size_t terminal_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    App *a = ctx;
    int64_t now = clock_now_ms();
    if (a->tuner && a->pace_ms > 0 && !app_trials_held(a) && tuner_paused(a->tuner) &&
        now >= a->next_trial_ms)
        tuner_set_paused(a->tuner, 0);
    if (a->tuner && a->user_paused)
        tuner_set_paused(a->tuner, 1);
    if (a->tuner && a->pace_ms > 0 && !app_trials_held(a) && tuner_paused(a->tuner) &&
        !tuner_done(a->tuner))
        *deadline_ms = min_deadline(*deadline_ms, a->next_trial_ms);
    if (a->ss) {
        simsched_set_paused(a->ss, a->user_paused);
        *deadline_ms = min_deadline(*deadline_ms, simsched_deadline(a->ss));
    }
    if (cap < 2)
        return 0;
    /* A hung-up terminal polls readable forever: once it has (SIGHUP, or poll said so),
     * the quit's wait (StopWatch) must not spin on it, whichever signal asked the quit (a
     * Ctrl-C, then the window closed). The signal pipe stays first either way. */
    fds[0] = (struct pollfd){.fd = term_signal_fd(), .events = POLLIN};
    if (term_hung_up())
        a->tty_gone = 1;
    if (a->tty_gone)
        return 1;
    fds[1] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    return 2;
}

/* SIGTERM, SIGHUP, SIGINT (a Ctrl-C with no prompt open): as `q` then `y` (the same stops
 * and waits, in console_stop_step and console_run), the journal kept to resume; the exit
 * status says which signal (cmd/cmd_console.c). A second signal changes nothing: SIGKILL is
 * the way to cut the wait. */
static void quit_on_signal(App *a, int signo, const char *why)
{
    if (a->quit_signal)
        return;
    a->quit = 1;
    a->quit_signal = signo;
    app_log(a, "%s%s: quitting as q does (the journal is kept: --resume goes on)",
            signo == SIGHUP   ? "SIGHUP"
            : signo == SIGINT ? "SIGINT"
                              : "SIGTERM",
            why);
}

static void terminal_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)now_ms;
    App *a = ctx;
    if (n >= 1 && (fds[0].revents & POLLIN)) {
        TermSignals s = term_take_signals();
        if (s.quit)
            quit_on_signal(a, term_quit_signal(), "");
        for (int k = 0; k < s.ints; k++)
            if (!input_interrupt(a)) { /* no prompt (left) to cancel */
                quit_on_signal(a, SIGINT, "");
                break;
            }
        if (s.stop && !a->quit_signal) /* a quit asked for in the same breath goes first */
            term_suspend();
        if (s.winch || s.cont || s.stop)
            term_resize();
        a->dirty = 1;
    }
    if (n == 2 && (fds[1].revents & (POLLIN | POLLHUP))) {
        input_handle(a);
        a->ss_stale = a->ss != NULL; /* a pin or a pause shows without waiting for a tick */
    }
    /* A closed terminal whose SIGHUP went elsewhere (to a session leader that outlives us,
     * say) is the same hang-up: otherwise nothing would ever end the loop, which would
     * spin on it. */
    if (n == 2 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
        a->tty_gone = 1;
        quit_on_signal(a, SIGHUP, " (the terminal closed)");
    }
}

static size_t pool_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return hosts_pollfds(ctx, fds, cap, deadline_ms);
}

static void pool_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hosts_step(ctx, fds, n, now_ms);
}

static size_t slurm_source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_pollfds(ctx, fds, cap, deadline_ms);
}

static void slurm_source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_step(ctx, fds, n, now_ms);
}

static size_t frame_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    App *a = ctx;
    int retry = app_prediction_retry_due(a); /* the model was busy: ask again soon */
    if (a->table_stale || retry)
        *deadline_ms = min_deadline(*deadline_ms, clock_now_ms() + (retry ? 50 : 0));
    if (a->dirty)
        *deadline_ms = min_deadline(*deadline_ms, a->last_frame_ms + FRAME_MS);
    return 0;
}

static void frame_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now)
{
    (void)fds;
    (void)n;
    App *a = ctx;
    if (a->ss) {
        /* The simulated scheduler advances every tick; the live driver steps with the pool
         * (hosts_step) on every poll, and is read every tick too: a snapshot of every job
         * and a redraw on each poll was the console's whole idle CPU with thousands of jobs.
         * A new decision, or a key that may have changed the scheduler (a pin, a pause),
         * shows at once. */
        Error serr;
        int ticked = a->user_paused && !simsched_live(a->ss) ? 0 : simsched_tick(a->ss, now, &serr);
        if (ticked < 0)
            app_log(a, "sched: %s", serr.msg);
        if (ticked || a->ss_stale ||
            sched_event_count(simsched_state(a->ss)) != a->ss_events_seen) {
            a->ss_stale = 0;
            console_sched_changed(a);
        }
    }
    if (a->table_stale) {
        a->table_stale = 0;
        app_rebuild_table(a);
    }
    if (a->queue_pred_stale)
        app_refresh_queue_predictions(a);
    if (a->editor && a->pred_stale)
        app_refresh_prediction(a);
    if (a->dirty && clock_now_ms() - a->last_frame_ms >= FRAME_MS) {
        frame_draw(a);
        a->last_frame_ms = clock_now_ms();
    }
}

static int quit_asked(void *ctx)
{
    return ((App *)ctx)->quit;
}

/* The loop until the operator quits; -1 with err when the terminal could not be polled. */
int console_loop(App *a, Session *s, Error *err)
{
    EvLoop *loop = evloop_new();
    /* The resume's stop (begun in console_app_start) ends before the first trial starts: held
     * paused, its `started` line comes after the stop's lines in the journal, as with `tune`. */
    StopWatch watch = {.a = a, .s = s, .loop = loop, .tuner_source = -1};
    a->stop_hold = a->tuner && session_stop_busy(s);
    if (a->stop_hold) /* app_set_pause and the Slurm hold keep it: app_trials_held */
        tuner_set_paused(a->tuner, 1);
    int failed = !loop || evloop_add(loop, terminal_pollfds, terminal_step, a) < 0 ||
                 (a->tuner && (watch.tuner_source = tuner_attach(a->tuner, loop)) < 0) ||
                 evloop_add(loop, pool_pollfds, pool_step, a) < 0 ||
                 evloop_add(loop, console_stop_pollfds, console_stop_step, &watch) < 0 ||
                 (a->slurm && evloop_add(loop, slurm_source_pollfds, slurm_source_step, a) < 0) ||
                 /* on Slurm no pool drives the live driver (hosts_step does over SSH) */
                 (a->live_slurm && schedlive_attach(simsched_live(a->ss), loop) < 0) ||
                 evloop_add(loop, frame_pollfds, frame_step, a) < 0;
    if (failed)
        error_set(err, "out of memory");
    else if (evloop_run(loop, quit_asked, a, -1) < 0)
        error_set(err, "poll: %s", strerror(errno));
    evloop_free(loop);
    return a->quit ? 0 : -1;
}
