/* Cancelling the steps a dropped login node connection left running (login_steps.h). */
#include "remote/session/login_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/launch/launch_slurm.h"
#include "remote/session/login_hold.h"

void login_steps_add(void *userdata, int trial, const char *steps)
{
    LoginSteps *ls = userdata;
    if (!steps || !steps[0])
        return;
    if (ls->n == LOGIN_STEPS_MAX) {
        ls->dropped++;
        return;
    }
    ls->left[ls->n].trial = trial;
    snprintf(ls->left[ls->n].steps, sizeof ls->left[0].steps, "%s", steps);
    ls->n++;
}

static void say(TuneOrphanReportFn report, void *userdata, const char *line)
{
    if (report)
        report(userdata, line);
}

static const char *plural(const char *steps)
{
    return strchr(steps, ' ') ? "steps" : "step";
}

static void keep_stderr(void *userdata, RemoteExec *x, StreamKind stream, const char *line,
                        int truncated)
{
    (void)x;
    (void)truncated;
    LoginSteps *ls = userdata;
    if (stream == STREAM_STDERR && line[0])
        snprintf(ls->last_err, sizeof ls->last_err, "%s", line);
}

/* The scancel of the first trial's steps, at once on the login node whatever its back-off (a
 * stop, as the trial's own scancel is): one trial a scancel, since Slurm's word of a step that
 * had ended names its job alone ("Kill job error on job step id 7: Invalid job id
 * specified"). 0: sent; -1: not (out of memory). */
static int send_scancel(LoginSteps *ls, HostPool *pool, long host)
{
    char *cmd = launch_slurm_scancel_command(ls->left[0].steps);
    ExecOptions o = {.on_line = keep_stderr, .userdata = ls};
    ls->last_err[0] = '\0';
    ls->scancel = cmd ? hostpool_exec_now(pool, (size_t)host, cmd, NULL, 0, &o, NULL) : NULL;
    free(cmd);
    ls->until_ms = clock_now_ms() + LOGIN_STEPS_WAIT_MS;
    return ls->scancel ? 0 : -1;
}

/* Slurm no longer has the step: it ended by itself meanwhile (Slurm 22.05's words, as
 * remote/slurm/slurm_alloc.c reads them for a job). */
static int ended_already(const char *err)
{
    return strstr(err, "Invalid job id specified") ||
           strstr(err, "already completing or completed");
}

/* The scancel's answer for the first trial's steps, said; they are forgotten, but for a
 * connection that dropped again: they wait for the next answer (LOGIN_STEPS_DROPS in all). A
 * channel the login node refused on a connection that still stands (sshd's MaxSessions, an
 * exec refused) is a failure like scancel's own: kept, it was sent again at each check, and
 * the next trial never started. Returns whether they were kept. */
static int end_scancel(LoginSteps *ls, HostPool *pool, long i, const char *host,
                       TuneOrphanReportFn report, void *userdata)
{
    if (!rexec_done(ls->scancel))
        rexec_close(ls->scancel);
    ExecOutcome out = rexec_outcome(ls->scancel);
    int status = rexec_exit_status(ls->scancel);
    char how[220];
    if (out == EXEC_EXITED)
        snprintf(how, sizeof how, "exit %d", status);
    else /* "killed by SIGTERM", or the channel's failure */
        snprintf(how, sizeof how, "%s", rexec_error(ls->scancel));
    rexec_free(ls->scancel);
    ls->scancel = NULL;
    HostInfo hi;
    hostpool_info(pool, (size_t)i, &hi);
    LoginStepsLeft *l = &ls->left[0];
    if (out == EXEC_SSH_FAILED && hi.state != HOST_READY && ++l->drops < LOGIN_STEPS_DROPS)
        return 1;
    const char *its = strchr(l->steps, ' ') ? "them" : "it";
    char line[LOGIN_STEPS_CHARS + 600];
    if (out == EXEC_EXITED && status == 0)
        snprintf(line, sizeof line,
                 "login node %s: cancelled %s %s left running by trial %d when its connection "
                 "dropped",
                 host, plural(l->steps), l->steps, l->trial);
    else if (out == EXEC_EXITED && ended_already(ls->last_err))
        snprintf(line, sizeof line,
                 "login node %s: %s %s left running by trial %d when its connection dropped "
                 "had ended by itself (%s)",
                 host, plural(l->steps), l->steps, l->trial, ls->last_err);
    else if (out != EXEC_CLOSED)
        snprintf(line, sizeof line,
                 "login node %s: scancel of %s %s left running by trial %d failed (%s)%s%s; the "
                 "release of the session's allocation ends %s",
                 host, plural(l->steps), l->steps, l->trial, how, ls->last_err[0] ? ": " : "",
                 ls->last_err, its);
    else
        snprintf(line, sizeof line,
                 "login node %s: scancel of %s %s left running by trial %d did not answer in "
                 "%d s; the release of the session's allocation ends %s",
                 host, plural(l->steps), l->steps, l->trial, LOGIN_STEPS_WAIT_MS / 1000, its);
    say(report, userdata, line);
    memmove(&ls->left[0], &ls->left[1], (ls->n - 1) * sizeof ls->left[0]);
    ls->n--;
    return 0;
}

int login_steps_check(LoginSteps *ls, HostPool *pool, const char *host, TuneOrphanReportFn report,
                      void *userdata)
{
    long i = pool && host ? hostpool_find(pool, host) : -1;
    if (i < 0 || (!ls->n && !ls->scancel))
        return 0;
    if (!ls->scancel) {
        HostInfo hi;
        hostpool_info(pool, (size_t)i, &hi);
        if (hi.state == HOST_DOWN || hi.state == HOST_IDLE)
            return 0;
        if (hi.state != HOST_READY) { /* answering again: the steps go first */
            /* nothing else steps a login node's pool between trials (login_hold.h) */
            login_hold_step(pool, 0);
            return 1;
        }
        if (send_scancel(ls, pool, i) < 0)
            return 0;
    }
    login_hold_step(pool, 0);
    if (!rexec_done(ls->scancel) && clock_now_ms() < ls->until_ms)
        return 1;
    /* kept: the login node dropped again (login_hold holds next); or the next trial's */
    return end_scancel(ls, pool, i, host, report, userdata) || ls->n > 0;
}

static int scancel_done(void *ctx)
{
    return rexec_done(((LoginSteps *)ctx)->scancel);
}

void login_steps_end(LoginSteps *ls, HostPool *pool, const char *host, const char *job,
                     TuneOrphanReportFn report, void *userdata)
{
    long i = pool && host ? hostpool_find(pool, host) : -1;
    while (i >= 0 && (ls->scancel || (ls->n && send_scancel(ls, pool, i) == 0))) {
        hostpool_run_until(pool, scancel_done, ls, ls->until_ms);
        int answered = rexec_done(ls->scancel);
        if (end_scancel(ls, pool, i, host, report, userdata))
            break; /* it does not answer: each is said below */
        /* One wait in all: a login node that let one scancel go unanswered, or is not ready
         * after it, would make each trial's wait as long (LOGIN_STEPS_MAX of them) while the
         * console's quit waits: the rest are said below. */
        HostInfo hi;
        hostpool_info(pool, (size_t)i, &hi);
        if (!answered || hi.state != HOST_READY)
            break;
    }
    for (size_t k = 0; k < ls->n; k++) {
        const LoginStepsLeft *l = &ls->left[k];
        char line[LOGIN_STEPS_CHARS + 600];
        snprintf(line, sizeof line,
                 "login node %s: %s %s left running by trial %d when its connection dropped "
                 "could not be cancelled (the login node does not answer); the release of the "
                 "session's allocation, Slurm job %s, ends %s",
                 host ? host : "?", plural(l->steps), l->steps, l->trial, job && job[0] ? job : "?",
                 strchr(l->steps, ' ') ? "them" : "it");
        say(report, userdata, line);
    }
    if (ls->dropped) {
        char line[200];
        snprintf(line, sizeof line,
                 "login node %s: and the steps of %zu more %s its drops cut; the "
                 "allocation's release ends them",
                 host ? host : "?", ls->dropped, ls->dropped == 1 ? "trial" : "trials");
        say(report, userdata, line);
    }
    login_steps_clear(ls);
}

void login_steps_clear(LoginSteps *ls)
{
    rexec_free(ls->scancel); /* closes it if open */
    memset(ls, 0, sizeof *ls);
}
