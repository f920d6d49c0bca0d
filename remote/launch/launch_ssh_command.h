/* The shell text each part of a per-host or single trial runs over SSH (launch_ssh.c): it
 * says its process group, puts the guard, exports the trial's variables and execs the shell
 * that runs the command and stops what it left (groupstop.h). Apart from the channels, so
 * that its text, and the quoting of every value in it, is pinned by a test. */
#ifndef TUNEDECK_LAUNCH_SSH_COMMAND_H
#define TUNEDECK_LAUNCH_SSH_COMMAND_H

/* The first line the text writes on stderr, before anything else: this prefix, then the
 * remote process group's id (its shell's $$: sshd starts each session with setsid). */
#define LAUNCH_SSH_PGID_MARK "tunedeck-pgid "

/* `printf 'tunedeck-pgid %s\n' "$$" >&2`; the guard (GROUPSTOP_GUARD_SH, 2 s from its TERM to
 * its KILL), put before the exports so its environment has no TUNEDECK_RUN_MARK;
 * TUNEDECK_MACHINE=machine TUNEDECK_TRIAL=trial TUNEDECK_RUN_MARK=mark and the command in
 * GROUPSTOP_CMD_VAR, exported; then `exec sh -c <groupstop_trial_sh> tunedeck-trial`. Every
 * value is single-quoted (shquote.h): no byte of a machine's name or the command is read by the
 * remote shell. machine is "" where the command speaks for every machine. Returns the text
 * (caller frees), or NULL when memory runs out. */
char *launch_ssh_command_build(const char *command, const char *machine, int trial,
                               const char *mark);

#endif
