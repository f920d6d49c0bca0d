/* Internal: what the session's files share: session.c (its opening, journal and close),
 * session_stop.c (its stops of leftover process groups) and session_triallog.c (its trial
 * log). Not a public API. */
#ifndef TUNEDECK_SESSION_PRIV_H
#define TUNEDECK_SESSION_PRIV_H

#include <stddef.h>

#include "core/base/stream.h"
#include "remote/session/session.h"

/* A stop still under way is waited for and ended (its results journaled and reported):
 * before another stop begins, before the journal's `ended` line, at the close. */
void session_stop_wait(Session *s);
/* The tuner's before_launch (TunerBeforeLaunchFn, userdata the session): the leftover groups
 * a dropped connection left on the trial's hosts are stopped first. */
int session_before_launch(void *userdata, const Schedule *sched, char *why, size_t cap);
/* session_refused.c: the tuner's machine_usable (TunerUsableFn, userdata the session): 0 for a
 * per-host session's machine whose host the pool refused for good (HostInfo.refused: a
 * host key, a login, an identity, a configuration), or a single session's launch host's so
 * refused, said once, with why the pool's words. */
int session_machine_usable(void *userdata, size_t machine, char *why, size_t cap);
/* The single launcher's launch host's machine (trial.launch_host, else the first); -1 for
 * another launcher, or a launch host the cluster does not have. */
long session_launch_machine(const Session *s);
/* Before a trial: -1 with why when no trial can run, the pool having refused the key of the
 * single launcher's host or of every machine, or refused them otherwise for good (each said
 * once through on_report);
 * session_refused_stopped says so from then on. With spec.holds_refused, 1 instead: the trial
 * waits (said once through on_report) until a host is no longer refused and its attempt
 * settled (an operator's accepted key, a reconnect after a fixed file); and, silently, while
 * no host is ready and one's attempt is under way (the first: a refusal not known yet). */
int session_refused_check(Session *s, char *why, size_t cap);
/* session_recheck.c: a resume (its journal replayed), per-host or single: the machines the
 * journal's last suggestion left out, refused then, and those a trial lost unreachable since
 * did not reach (its `unreachable`; a journal without it: every host of the trial), or a
 * trial interrupted since reached, are connected again (key and login, nothing run) before
 * the first new trial; without
 * spec.stops_on_loop (`tune`) their answers are waited for here, at most one connect timeout.
 * Once a session, when a new trial is in the budget: a resume with none left is called again
 * at each budget change until one is (the console's :budget). */
void session_recheck_begin(Session *s);
/* The tuner's may_begin (TunerMayBeginFn, userdata the session): 0 while a host checked so is
 * still connecting (the console's loop steps it), so that the next suggestion knows which to
 * leave out. */
int session_recheck_may_begin(void *userdata);
/* Once machine m's check answered, a host not refused now is said, once, to be in the trials
 * again (a refused one is said by the refusal's own line). */
void session_recheck_say(Session *s, size_t m);
/* Whether machine m was one the resume checked again and found refused (its refusal's line
 * says "still"; not one used again, then refused later in the session). */
int session_recheck_was_left_out(const Session *s, size_t m);
/* The trial's end in the trial log, with its outcome (a write error said once, on_report). */
void session_trial_log_end(Session *s, int trial, const char *outcome);
/* The launchers' on_log (LaunchLogFn, userdata the session): a line of the running trial's. */
void session_trial_log_line(void *userdata, const char *machine, StreamKind stream,
                            const char *line);

#endif
