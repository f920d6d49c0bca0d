/* Internal: what the session's two files share: session.c (its opening, journal and close)
 * and session_stop.c (its stops of leftover process groups). Not a public API. */
#ifndef TUNEDECK_SESSION_PRIV_H
#define TUNEDECK_SESSION_PRIV_H

#include <stddef.h>

#include "remote/session/session.h"

/* A stop still under way is waited for and ended (its results journaled and reported):
 * before another stop begins, before the journal's `ended` line, at the close. */
void session_stop_wait(Session *s);
/* The tuner's before_launch (TunerBeforeLaunchFn, userdata the session): the leftover groups
 * a dropped connection left on the trial's hosts are stopped first. */
int session_before_launch(void *userdata, const Schedule *sched, char *why, size_t cap);

#endif
