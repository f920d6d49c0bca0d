/* A daemon of a trial, for the tests of the stops that must reach it: a process in a session
 * (and group) of its own whose environment holds TUNEDECK_RUN_MARK, as a `setsid cmd &` of a
 * remote trial's command is. */
#ifndef TUNEDECK_TEST_MARKED_H
#define TUNEDECK_TEST_MARKED_H

#include <sys/types.h>

/* Forks `sleep 300` (through sh) in a session of its own, TUNEDECK_RUN_MARK=mark its
 * environment's, TERM ignored with ignore_term (a stop must come to KILL); returns once it is
 * sleep. The caller's child: it reaps it. */
pid_t marked_daemon(const char *mark, int ignore_term);

/* The same in process group `group` (of this process's session), TERM not ignored: a process
 * of a trial's group that carries its mark. The caller's child: it reaps it. */
pid_t marked_member(const char *mark, pid_t group);

/* A process group id no process has: a child's that led its own group, reaped. */
pid_t gone_group(void);

/* A child's wait status once it has ended, waited for up to 10 s; -1 if it still runs. */
int ended_status(pid_t pid);

#endif
