/* Stopping a Slurm command on the login node by its pid (remote/slurm/slurm_loginstop.h),
 * and slurm_ctl_run_stoppable (slurm_ctl.h), whose stop that is: here, its process group. */
#include "remote/slurm/slurm_loginstop.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/error.h"
#include "core/base/evloop.h"
#include "core/base/secret.h"
#include "remote/slurm/slurm_ctl_priv.h"
#include "remote/ssh/shquote.h"

/* A mark of this call alone, in the command's environment there: a kill for it reaches the
 * process with its pid only while that process is still the command (not a pid since reused). */
void slurm_loginstop_mark(char *mark, size_t size)
{
    unsigned char r[8];
    Error ignored;
    if (secret_random(r, sizeof r, &ignored) < 0) { /* neither getrandom nor /dev/urandom */
        long long t = clock_now_ms();
        memcpy(r, &t, sizeof r);
        r[0] ^= (unsigned char)getpid();
    }
    size_t n = 0;
    for (size_t i = 0; i < sizeof r && n + 3 <= size; i++)
        n += (size_t)snprintf(mark + n, size - n, "%02x", r[i]);
}

void slurm_loginstop_wrapper(const char *mark, char *script, size_t size)
{
    /* sh, whatever the login shell: $$ is the pid the exec keeps for the command */
    snprintf(script, size,
             "TUNEDECK_SLURM_CALL=%s; export TUNEDECK_SLURM_CALL; "
             "echo \"tunedeck-pid $$\" >&2; exec \"$@\"",
             mark);
}

int slurm_ctl_pid_line(const char *line, long *pid)
{
    static const char word[] = "tunedeck-pid";
    if (strncmp(line, word, sizeof word - 1) != 0)
        return 0;
    const char *p = line + sizeof word - 1;
    if (*p++ != ' ' || !isdigit((unsigned char)*p))
        return -1;
    long v = 0;
    for (; isdigit((unsigned char)*p); p++)
        if ((v = v * 10 + (*p - '0')) > 2147483647L) /* pid_t is 32-bit */
            return -1;
    if (*p || v < 2) /* pid 1 is init: never a shell of ours */
        return -1;
    *pid = v;
    return 1;
}

RemoteExec *slurm_loginstop_interrupt(HostPool *pool, long pid, const char *mark)
{
    char script[200];
    snprintf(script, sizeof script,
             "tr '\\0' '\\n' < /proc/%ld/environ 2>/dev/null | "
             "grep -qx 'TUNEDECK_SLURM_CALL=%s' && kill -INT %ld",
             pid, mark, pid);
    const char *argv[] = {"sh", "-c", script}; /* sh's words, whatever the login shell */
    char *cmd = shquote_argv(argv, 3);
    Error ignored;
    RemoteExec *x = cmd ? hostpool_exec_now(pool, 0, cmd, NULL, 0, NULL, &ignored) : NULL;
    free(cmd);
    return x;
}

RemoteExec *slurm_loginstop_cancel(HostPool *pool, long job)
{
    char cmd[48];
    snprintf(cmd, sizeof cmd, "scancel %ld", job);
    Error ignored;
    return hostpool_exec_now(pool, 0, cmd, NULL, 0, NULL, &ignored);
}

void slurm_loginstop_begin(SlurmCall *k, char *script, size_t size)
{
    slurm_loginstop_mark(k->mark, sizeof k->mark);
    slurm_loginstop_wrapper(k->mark, script, size);
}

int slurm_loginstop_take_pid(SlurmCall *k, const char *line)
{
    /* The shell says its pid before it runs the command: what comes before is the login
     * shell's own (a .bashrc's stty on no tty), kept; from that line on, all is the command's. */
    if (!k->announce || k->pid_said)
        return 0;
    int said = slurm_ctl_pid_line(line, &k->remote_pid);
    if (said < 0) {
        k->remote_pid = 0;
        snprintf(k->bad_pid_line, sizeof k->bad_pid_line, "%s", line);
    }
    k->pid_said = said;
    return said != 0;
}

int slurm_loginstop_check_pid(SlurmCall *k, int rc)
{
    /* Without the pid it said, a stop could not have reached the command: not a run to trust
     * (a job it was granted is cancelled by the caller, who reads it in the standard error) */
    if (!k->announce || k->pid_said > 0 || (k->pid_said == 0 && rc != 0))
        return rc;
    return error_set(&k->err,
                     "%s on %s: %s%s%s: expected 'tunedeck-pid PID' (the pid of the shell that "
                     "runs it, said on standard error first)",
                     k->cmd, slurm_ctl_where(k->c), k->pid_said ? "its standard error said '" : "",
                     k->pid_said ? k->bad_pid_line : "no pid line on its standard error",
                     k->pid_said ? "'" : "");
}

int slurm_loginstop_send(SlurmCall *k)
{
    if (k->interrupt_tried || k->pid_said <= 0 || rexec_exited_ms(k->x))
        return 0;
    k->interrupt_tried = 1;
    k->interrupt =
        slurm_loginstop_interrupt(slurm_ctl_login_pool(k->c, NULL), k->remote_pid, k->mark);
    return k->interrupt != NULL;
}

int slurm_loginstop_reached(const SlurmCall *k)
{
    return k->interrupt && rexec_done(k->interrupt) && rexec_outcome(k->interrupt) == EXEC_EXITED &&
           rexec_exit_status(k->interrupt) == 0;
}

/* salloc revokes its job before it ends: the scancel that follows then finds nothing left */
int slurm_loginstop_cut_settled(const SlurmCall *k, int64_t now_ms)
{
    if (!k->interrupt || now_ms >= k->deadline_ms + SLURM_CALL_INTERRUPT_WAIT_MS)
        return 1;
    return rexec_done(k->interrupt) && (!slurm_loginstop_reached(k) || rexec_done(k->x));
}

void slurm_loginstop_cut_words(const SlurmCall *k, char *buf, size_t size)
{
    buf[0] = 0;
    if (!k->interrupt_tried)
        return; /* its pid not said (yet), or it had exited */
    long pid = k->remote_pid;
    if (!k->interrupt)
        snprintf(buf, size, ", not interrupted there (kill -INT %ld could not start)", pid);
    else if (!rexec_done(k->interrupt))
        snprintf(buf, size, ", not interrupted there (kill -INT %ld: no answer within %d s)", pid,
                 SLURM_CALL_INTERRUPT_WAIT_MS / 1000);
    else if (slurm_loginstop_reached(k))
        snprintf(buf, size, ", interrupted there (kill -INT %ld)", pid);
    else if (rexec_outcome(k->interrupt) == EXEC_EXITED)
        snprintf(buf, size,
                 ", not interrupted there (kill -INT %ld found no process with this call's mark)",
                 pid);
    else
        snprintf(buf, size, ", not interrupted there (kill -INT %ld: %s)", pid,
                 rexec_error(k->interrupt));
}

static size_t call_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_call_pollfds(ctx, fds, cap, deadline_ms);
}

static void call_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_call_step(ctx, fds, n, now_ms);
}

typedef struct {
    SlurmCall *k;
    int (*stop)(void *);
    void *ud;
    long (*queued)(const char *);
    int stopping;       /* stop said so: what is left of the stop is sent at each wake */
    int sent;           /* all of it sent */
    RemoteExec *cancel; /* the login node's scancel of the job the command queued */
} Stoppable;

/* On the login node the command is sshd's session with no pty: a closed channel does not
 * reach it (salloc writes nothing while it waits), and sshd refuses a "signal" request for a
 * root session (no privilege separation after a root login) or a forced command (measured on
 * sshd 9.2). So the stop is the local one sent from there: `kill -INT` of the pid the shell
 * said before it became the command, which salloc handles as here, whether or not slurmctld
 * has answered yet. That pid is the command's only while it runs: the kill is sent only
 * before its exit status came, and there only to the process whose environment has this
 * call's mark (a pid freed and reused in between is left alone; no /proc there, none is).
 * Once that kill has ended, a job the command said it queued or was granted is cancelled
 * there with scancel, which reaches salloc whatever became of the kill: its job revoked, it
 * exits. A command not yet started there never starts. */
static void stop_on_login(Stoppable *st)
{
    SlurmCall *k = st->k;
    if (!rexec_sent(k->x)) { /* nothing of it runs there yet: it never will */
        rexec_close(k->x);
        st->sent = 1;
        slurm_call_step(k, NULL, 0, clock_now_ms()); /* no fd of its own wakes the loop */
        return;
    }
    if (slurm_loginstop_send(k))
        return; /* its end wakes the loop */
    if (k->pid_said == 0 && !rexec_exited_ms(k->x))
        return; /* the pid line comes before anything the command says: it wakes the loop */
    if (k->interrupt && !rexec_done(k->interrupt))
        return;
    long job = st->queued && k->errt.buf ? st->queued(k->errt.buf) : -1;
    if (job < 0)
        return; /* asked again at the next wake: its output wakes it */
    st->cancel = slurm_loginstop_cancel(slurm_ctl_login_pool(k->c, NULL), job);
    st->sent = 1;
}

static int stoppable_done(void *ctx)
{
    Stoppable *st = ctx;
    if (slurm_call_done(st->k))
        return 1;
    if (!st->stop || st->sent || (!st->stopping && !st->stop(st->ud)))
        return 0;
    st->stopping = 1;
    if (slurm_ctl_login_pool(st->k->c, NULL)) {
        stop_on_login(st);
        return slurm_call_done(st->k);
    }
    if (st->k->pid > 0)
        kill(-st->k->pid, SIGINT);
    st->sent = 1;
    return 0;
}

int slurm_ctl_run_stoppable(SlurmCtl *c, const char *const *argv, char **out, int (*stop)(void *),
                            void *ud, long (*queued)(const char *), Error *err)
{
    if (out)
        *out = NULL;
    SlurmCall *k = slurm_call_begin(c, argv, stop != NULL, err);
    if (!k)
        return -1;
    Stoppable st = {.k = k, .stop = stop, .ud = ud, .queued = queued};
    /* The call's own deadline ends it (and the wait for its interrupt there, once cut); the
     * loop's limit is only a backstop. */
    int64_t backstop_ms = k->deadline_ms + SLURM_CALL_INTERRUPT_WAIT_MS + 5000;
    evloop_run_source(call_pollfds, call_step, k, stoppable_done, &st, backstop_ms);
    if (!slurm_call_done(k))
        slurm_call_step(k, NULL, 0, backstop_ms); /* past its deadline: it settles */
    /* their channels closed: kill and scancel, sent already, end there alone */
    rexec_free(st.cancel);
    return slurm_call_finish(k, out, err);
}
