/* A local trial dies with the tunedeck that launched it. The launcher's child leads the
 * trial's process group and forks the command; it stays as the command's parent, holding the
 * read end of a pipe ("the lifeline") whose only write end is tunedeck's. When tunedeck ends
 * without stopping the trial (SIGKILL, a crash, power to the terminal cut) the pipe reads end
 * of file, and the keeper stops the whole group as a cancel would (TERM, KILL after a grace):
 * a trial that prints nothing would otherwise run on, on the GPUs the resumed session's next
 * trial is measured on (a trial that prints is killed by SIGPIPE at its next line). While
 * tunedeck lives, the keeper only hands the command's end on as its own, so the launcher sees
 * the command's exit status or signal.
 *
 * On Linux the keeper is a child subreaper (PR_SET_CHILD_SUBREAPER): a daemon the trial
 * started in a session of its own (`setsid`, a double fork) leaves the group that a stop
 * reaches, but once orphaned it becomes the keeper's child. The keeper stops everything below
 * it, adopted or not, whenever the trial ends:
 *  - tunedeck's stop, the group's TERM: passed on to what left the group; the KILL of all
 *    comes when tunedeck closes the lifeline after it ("KILL now": a KILL of the group would
 *    end the keeper first, and what it adopted would escape to init), or a grace after the
 *    command's end;
 *  - tunedeck gone, the lifeline's end of file: TERM to the group and to what left it, KILL
 *    of everything below after the grace;
 *  - the command's own exit while something it started runs on: the trial is over, so the
 *    leftovers are stopped (TERM, KILL after the grace) and said on the trial's stderr in a
 *    line starting LIFELINE_NOTE. The command's own status is handed on unchanged. */
#ifndef TUNEDECK_LIFELINE_H
#define TUNEDECK_LIFELINE_H

#include <sys/types.h>

#define LIFELINE_NOTE "tunedeck keeper: "

/* In the group's leader, before forking the command: becomes the subreaper (the command's
 * orphans must find it from their first moment), dumps no core from then on, and blocks the
 * signals that lifeline_keep answers, so a stop that comes before it is held, not lost. A
 * child forked with childsig_fork inherits neither the subreaper nor the blocked signals; the
 * core limit it does, until lifeline_command. */
void lifeline_adopt(void);
/* In the command, after its fork and before its exec: the operator's limits back, those
 * lifeline_adopt lowered for the keeper (its core limit). */
void lifeline_command(void);

/* In the group leader, after forking the command `cmd` (a child of it): waits for the
 * command's end or the lifeline's, stops what is left below it, and never returns. Every
 * other descriptor but `lifeline_fd` and `note_fd` (the trial's stderr, for the note on
 * leftovers; -1 for none) should already be closed: a copy of the lifeline's write end held
 * here, or by another keeper, would keep it from ever reading end of file. `grace_ms`:
 * between the TERM and the KILL. */
void lifeline_keep(pid_t cmd, int lifeline_fd, int note_fd, int grace_ms) __attribute__((noreturn));

#endif
