/* A tuning session on Slurm through a login node holds its next trial while the login node's
 * SSH session is down: every trial's srun runs there, so a trial started meanwhile would only
 * fail "unreachable" at the pool's next attempt, spending the budget on trials that say
 * nothing of their schedules, and the session would end before the login node is back. */
#ifndef TUNEDECK_LOGIN_HOLD_H
#define TUNEDECK_LOGIN_HOLD_H

#include "remote/session/tune_orphans.h"
#include "remote/ssh/hostpool.h"

typedef struct {
    int held;          /* the last check held the trial */
    int said_attempts; /* the last failed attempt reported (HostInfo.attempts) */
} LoginHold;

/* 1: the next trial waits: the login node `host` of `pool` is down with a reconnect planned
 * (the pool keeps it), or a reconnect after a hold is under way. 0: it may go: the login node
 * is ready, or never tried, or refused for good (its key, login or configuration: the pool
 * plans no retry, and the trial's launch fails with the host's words).
 * Nothing else steps a login node's pool between trials (the caller's loop steps the
 * session's own pool alone), so while it holds, each check steps the pool without waiting:
 * its reconnects go on at the times its back-off planned. Called about every
 * TUNER_PREPARE_RECHECK_MS while the trial waits.
 * Reports each failed attempt once ("login node H: down (retry in 1.8 s): ssh to H failed:
 * connect to H port 22: Connection refused; new trials wait for it"), and the end of a hold
 * ("login node H answers again: new trials go on"); report may be NULL. */
int login_hold_check(LoginHold *lh, HostPool *pool, const char *host, TuneOrphanReportFn report,
                     void *userdata);

/* One step of the login node's pool: what its socket has ready within wait_ms (0: without
 * waiting; never past the pool's next timer, its planned reconnect or a connect deadline),
 * then its timers. A signal cuts the wait short. */
void login_hold_step(HostPool *pool, int wait_ms);
/* Whether the login node `host` of `pool` is one to wait for (hi gets its state): down with a
 * reconnect planned, or a reconnect under way. 0: ready, never tried, refused for good (no
 * retry planned), or no such host (pool NULL: the commands run here). */
int login_hold_waits(const HostPool *pool, const char *host, HostInfo *hi);

#endif
