/* The Slurm steps of trials that the login node's dropped connection cut: their srun clients
 * run on there with nobody reading them, and their steps hold the allocation's GPUs, so the
 * next trial's step would wait behind them (or share the nodes, its timings skewed). Each is
 * cancelled (`scancel JOB.STEP` on the login node) once the login node answers again, before
 * the next trial starts; one still left at the session's end is said, with the allocation's
 * release that ends it. */
#ifndef TUNEDECK_LOGIN_STEPS_H
#define TUNEDECK_LOGIN_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "remote/session/tune_orphans.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"

/* LOGIN_STEPS_DROPS: a scancel that the connection's drop cut is sent again once it answers,
 * this many times in all: a login node that drops the connection for the scancel's channel
 * itself (it refused the channel, and libssh's answer to that ended the session) would be
 * asked for ever, no trial started. */
enum { LOGIN_STEPS_MAX = 16, LOGIN_STEPS_CHARS = 256, LOGIN_STEPS_DROPS = 3 };

typedef struct {
    int trial;                     /* the journal's number of the trial that left them */
    char steps[LOGIN_STEPS_CHARS]; /* "JOB.STEP JOB.STEP ...", as the slurm launcher read them */
    int drops; /* scancels of them a drop of the connection cut (LOGIN_STEPS_DROPS at most) */
} LoginStepsLeft;

typedef struct {
    LoginStepsLeft left[LOGIN_STEPS_MAX];
    size_t n;
    size_t dropped;      /* trials' steps not kept (more than LOGIN_STEPS_MAX), said at the end */
    RemoteExec *scancel; /* under way for left[0] */
    int64_t until_ms;    /* the scancel is given up then */
    char last_err[200];  /* scancel's last line of standard error */
} LoginSteps;

/* The slurm launcher's on_steps_left (LaunchStepsFn, userdata the LoginSteps): keeps a
 * trial's steps ("J.S J.S", at most LOGIN_STEPS_CHARS) to cancel. */
void login_steps_add(void *userdata, int trial, const char *steps);
/* Before a trial, once login_hold_check let it go. 1: the trial waits: the login node is
 * reconnecting, or a scancel of the steps left is under way (each check steps the pool
 * without waiting, as login_hold does). 0: nothing left, or the login node is down or idle
 * (login_hold decides then). When the login node is ready, each trial's steps get a
 * scancel of their own, one after the other, its answer said: "login node H: cancelled
 * step 7.2 left running by trial 2 when its connection dropped", or that it had ended by
 * itself (Slurm no longer has it), or scancel's failure (or its channel's, on a connection
 * that stands). One that fails or does not answer in LOGIN_STEPS_WAIT_MS is not tried again:
 * the allocation's release at the session's end ends the steps. A connection that drops again
 * keeps them for its next answer, LOGIN_STEPS_DROPS times at most. report may be NULL. */
int login_steps_check(LoginSteps *ls, HostPool *pool, const char *host, TuneOrphanReportFn report,
                      void *userdata);
/* At the session's end: one more scancel of each trial's steps left (at once, whatever the
 * login node's back-off; each waited for up to LOGIN_STEPS_WAIT_MS), then a line for each
 * still left (the login node does not answer), naming the allocation `job` whose release
 * ends it. The first scancel not answered in time, or a login node not ready after one, ends
 * the scancels: one wait in all, not one a trial. Nothing is kept afterwards. */
void login_steps_end(LoginSteps *ls, HostPool *pool, const char *host, const char *job,
                     TuneOrphanReportFn report, void *userdata);
/* Closes a scancel under way (before the pool goes) and forgets every step. */
void login_steps_clear(LoginSteps *ls);

enum { LOGIN_STEPS_WAIT_MS = 10000 };

#endif
