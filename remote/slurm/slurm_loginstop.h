/* Stopping a Slurm command (salloc) on the login node by its pid: sshd refuses a "signal"
 * request for a root login, and closing the channel does not reach a salloc that writes
 * nothing while it waits. So the command runs under a shell that says its pid first, and a
 * stop is a guarded `kill -INT` of that pid there, with `scancel` of its job as the fallback;
 * a command cut by the timeout gets the same kill. What slurm_ctl.c calls here, on a call of
 * its own, is in slurm_ctl_priv.h. */
#ifndef TUNEDECK_SLURM_LOGINSTOP_H
#define TUNEDECK_SLURM_LOGINSTOP_H

#include <stddef.h>

#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"

/* A mark of one call alone (hex), put in the command's environment there. */
void slurm_loginstop_mark(char *mark, size_t size);

/* The `sh -c` script that exports mark, says its pid on standard error, then execs "$@"
 * (the same pid): run as sh -c SCRIPT sh ARGV... */
void slurm_loginstop_wrapper(const char *mark, char *script, size_t size);

/* Pure: whether a line of a stoppable command's standard error on the login node is the pid
 * its shell says first, "tunedeck-pid PID": 1 with *pid; 0 when the line is another (the login
 * shell's own words before it); -1 when it starts with that word but is no such line (a
 * stoppable command that says one fails, with what was expected). */
int slurm_ctl_pid_line(const char *line, long *pid);

/* Sends `kill -INT pid` on the login node, only to a process whose environment has mark (a
 * pid freed and reused is left alone). NULL: could not start. The caller frees it. */
RemoteExec *slurm_loginstop_interrupt(HostPool *pool, long pid, const char *mark);

/* Sends `scancel job` on the login node. NULL: could not start. The caller frees it. */
RemoteExec *slurm_loginstop_cancel(HostPool *pool, long job);

#endif
