/* The stops the console waits for (tui/console_stops.c): the session's leftover process-group
 * stops on the loop, the quit's sweep of what dropped connections left, and the live jobs'
 * checkpoint-and-stop at a quit. */
#ifndef TUNEDECK_CONSOLE_STOPS_H
#define TUNEDECK_CONSOLE_STOPS_H

#include <poll.h>
#include <stdint.h>

#include "core/base/evloop.h"
#include "remote/session/session.h"
#include "tui/app.h"

/* The session's leftover stop (before a trial, or the resume's) on the loop, after the pool
 * that carries its commands. A quit while it runs waits for its end, on screen, keys read,
 * then stops what dropped connections left that no stop has ended (session_stop_lost), the
 * same way: every result must reach the journal. Leaving it to the next resume would not
 * do: a resume stops only the groups of trials the journal never saw finish, and a dropped
 * connection's leftover belongs to a trial that did finish (failed), so nothing would ever
 * stop it; and closing its SSH channel mid-way could cut the stop between TERM and KILL.
 * The wait is bounded by the stops' own deadlines (a host's connect timeout plus 3 s a
 * group; 15 s). The tuner leaves the loop first, so the trial that waited is not launched
 * at the end: it stays started and unfinished, as a trial running at a quit does
 * (interrupted on resume). */
typedef struct {
    App *a;
    Session *s;
    EvLoop *loop;
    long tuner_source; /* -1: not on the loop (none, or removed at the quit) */
    int quitting;      /* a quit waits for the stop */
    int swept;         /* the quit's own stop of what dropped connections left was begun */
} StopWatch;

/* The StopWatch's source on the loop (ctx: the StopWatch, which outlives the loop). */
size_t console_stop_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void console_stop_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms);
/* Resume: begins the stop of what the killed session's unfinished trials left running (on
 * the pool's hosts); the loop runs it and the first trial waits for it. */
void console_stop_interrupted(App *a, Session *s);
/* Quitting a live session: every job checkpoints and stops, on screen, until none is left
 * (at most a minute); a loop of its own, the console's having ended. */
void console_live_stop(App *a);

#endif
