/* A local trial dies with the tunedeck that launched it. The launcher's child leads the
 * trial's process group and forks the command; it stays as the command's parent, holding the
 * read end of a pipe ("the lifeline") whose only write end is tunedeck's. When tunedeck ends
 * without stopping the trial (SIGKILL, a crash, power to the terminal cut) the pipe reads end
 * of file, and the keeper stops the whole group as a cancel would (TERM, KILL after a grace):
 * a trial that prints nothing would otherwise run on, on the GPUs the resumed session's next
 * trial is measured on (a trial that prints is killed by SIGPIPE at its next line). While
 * tunedeck lives, the keeper only hands the command's end on as its own, so the launcher sees
 * the command's exit status or signal. */
#ifndef TUNEDECK_LIFELINE_H
#define TUNEDECK_LIFELINE_H

#include <sys/types.h>

/* In the group leader, after forking the command `cmd` (a child of it): waits for the
 * command's end or the lifeline's, and never returns. Every other descriptor but
 * `lifeline_fd` should already be closed: a copy of the lifeline's write end held here, or by
 * another keeper, would keep it from ever reading end of file. `grace_ms`: between the TERM
 * and the KILL when tunedeck is gone. */
void lifeline_keep(pid_t cmd, int lifeline_fd, int grace_ms) __attribute__((noreturn));

#endif
