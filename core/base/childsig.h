/* A child that will run another program starts as a shell would start it: no handler of
 * ours, no signal blocked. Between fork(2) and exec(2) the child still runs our handlers
 * (exec resets them, too late): a stop's SIGTERM in that window was swallowed by the handler
 * meant for tunedeck (cmd_tune.c's, which only sets a flag), and only the KILL after the
 * grace ended the child. */
#ifndef TUNEDECK_CHILDSIG_H
#define TUNEDECK_CHILDSIG_H

#include <signal.h>
#include <sys/types.h>

/* fork(2) with every signal blocked across it; the child (0) returns with childsig_reset
 * done, the parent with its own mask back. -1 with errno set when fork fails. */
pid_t childsig_fork(void);

/* The halves, for a child made by another call (forkpty(3)): childsig_block before it (the
 * caller's mask into `old`), childsig_reset in the child, childsig_restore(old) in the
 * parent. Only async-signal-safe calls: the parent may have threads. */
void childsig_block(sigset_t *old);
void childsig_restore(const sigset_t *old);
/* In the child: every caught signal back at SIG_DFL, and SIGPIPE and SIGXFSZ, which tunedeck
 * ignores for itself (hostpool.c, tune_journal.c), since an ignored signal stays ignored
 * across exec; then every signal unblocked. Other ignored signals stay ignored, as a shell
 * passes them on (nohup's SIGHUP). */
void childsig_reset(void);

#endif
