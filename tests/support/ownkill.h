/* Signals a test sends to a process it started, only while that process is provably still the
 * one it started: a number whose process ended (and was reaped) may be another's by then, and
 * with pid_max 32768 and suites running side by side a KILL to a stale number once hit another
 * suite's process. */
#ifndef TUNEDECK_TEST_OWNKILL_H
#define TUNEDECK_TEST_OWNKILL_H

#include <sys/types.h>

/* Sends sig to pid only while it is a child of this process not yet reaped (running, or a
 * zombie: either way its number is not free); 0 when sent, -1 otherwise. After ended_status or
 * a waitpid that returned it, nothing is sent. */
int ownkill_child(pid_t pid, int sig);

/* Sends sig to pid only while its command line, its arguments joined by single spaces, is
 * `cmdline` exactly; 0 when sent, -1 otherwise. The look and the signal are through one pidfd,
 * so the process signalled is the one whose command line was read (not one that took its
 * number in between). For a process the test did not fork itself (a pid a command wrote). */
int ownkill_named(pid_t pid, const char *cmdline, int sig);

/* KILLs every child of this process (each one not yet reaped, so its own) and reaps them, until
 * none is left: what a subreaper test (PR_SET_CHILD_SUBREAPER) started or was handed. */
void ownkill_children(void);

#endif
