/* The inside of one Slurm command call (slurm_ctl.h), shared by slurm_ctl.c, which runs it,
 * and slurm_loginstop.c, which stops it (or, cut by the timeout, interrupts it) on the login
 * node. Private to those two files. */
#ifndef TUNEDECK_SLURM_CTL_PRIV_H
#define TUNEDECK_SLURM_CTL_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/base/error.h"
#include "remote/slurm/slurm_ctl.h"
#include "remote/ssh/rexec.h"

/* How long a command cut by the timeout on the login node is given to end once it is
 * interrupted there: the kill's round trip, and salloc's revoke of its job. */
enum { SLURM_CALL_INTERRUPT_WAIT_MS = 5000 };

typedef struct {
    char *buf;
    size_t len, cap;
    int too_long;
} Text;

/* One command under way: a child here (its two pipes read as they fill), or a channel on the
 * login node's session. Either is stepped by whoever owns the loop. */
struct SlurmCall {
    SlurmCtl *c;
    char cmd[32]; /* argv[0], for messages */
    int64_t deadline_ms;
    Text out, errt;
    /* here */
    pid_t pid;
    int fds[2]; /* stdout, stderr; -1 once closed */
    int exited, status, timed_out;
    /* on the login node */
    RemoteExec *x;
    /* A command that may be stopped there runs under a shell that says its pid first, then
     * execs it (the same pid), with mark in its environment: slurm_loginstop.h. */
    int announce;
    char mark[24];         /* TUNEDECK_SLURM_CALL's value there: this call's own */
    long remote_pid;       /* 0: not said yet */
    int pid_said;          /* 1: said; -1: a line of that word that is no pid */
    char bad_pid_line[96]; /* that line, for the error */
    int interrupt_tried;   /* once only: a kill that could not start is not tried again */
    RemoteExec *interrupt; /* the login node's kill -INT of the command (a stop's, a cut's) */
    int unusable;          /* it could not run there: slurm_ctl_last_unusable */
    int rc;                /* when done: slurm_ctl_run's return */
    int done;
    Error err;
};

/* slurm_call_start; announce: on the login node the command runs under the shell that says
 * its pid first (slurm_loginstop_wrapper), so that it can be interrupted there. */
SlurmCall *slurm_call_begin(SlurmCtl *c, const char *const *argv, int announce, Error *err);

/* In slurm_loginstop.c, for an announced call on the login node: */
/* The call's mark and the `sh -c` script that runs its command there (slurm_loginstop.h). */
void slurm_loginstop_begin(SlurmCall *k, char *script, size_t size);
/* Whether a line of its standard error is the shell's pid line, good (the pid kept) or not
 * (kept for the error): 1, the line is no output of the command's. 0: another line. */
int slurm_loginstop_take_pid(SlurmCall *k, const char *line);
/* rc, or -1 with k->err when the pid line was bad, or missing from a run that went well. */
int slurm_loginstop_check_pid(SlurmCall *k, int rc);
/* The guarded kill -INT of the command there, once, while it runs (its pid said, its exit
 * status not come). 1: under way, its end wakes the loop. */
int slurm_loginstop_send(SlurmCall *k);
/* Whether that kill reached the command (the guard found it, the kill worked). */
int slurm_loginstop_reached(const SlurmCall *k);
/* A call cut by the timeout waits for the kill, then, if it reached the command, for the
 * command's end, SLURM_CALL_INTERRUPT_WAIT_MS at most: 1 when that wait is over. */
int slurm_loginstop_cut_settled(const SlurmCall *k, int64_t now_ms);
/* What became of the kill, for the error of a call cut by the timeout ("" when none was sent):
 * ", interrupted there (kill -INT PID)" or how it was not. */
void slurm_loginstop_cut_words(const SlurmCall *k, char *buf, size_t size);

#endif
