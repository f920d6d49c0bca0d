/* The remote shell text that stops a process group: TERM, wait while a process of it that
 * is not a zombie is left, KILL after 2 s; asked for by a stop, or by the group's own guard
 * once the SSH session that started it is gone. */
#ifndef TUNEDECK_GROUPSTOP_H
#define TUNEDECK_GROUPSTOP_H

/* live G: exit 0 while group G holds a process that is not a zombie. `kill -0 -G` counts
 * zombies, and a group member whose parent died waits for init to reap it (a container's
 * init may take a second or more), so a stop that asked kill -0 waited out its cap on a
 * group already stopped. Reads the state from /proc/PID/stat with builtins only; where
 * pgrep cannot list a group (absent, or busybox's without -g: exit status above 1) it asks
 * kill -0 of the group, and of a process whose stat it cannot read (no /proc) kill -0 of
 * that process, as before: never "stopped" where it cannot tell. No "--" before a group in
 * any kill here: dash's kill (a login shell that is /bin/sh) reads it as a number and fails,
 * and the signal named first keeps "-PGID" an operand in every shell. */
#define GROUPSTOP_LIVE_SH                                                                        \
    "live() { l=$(pgrep -g \"$1\" 2>/dev/null); case $? in 0) ;; 1) return 1 ;; "                 \
    "*) kill -0 -\"$1\" 2>/dev/null; return ;; esac; "                                         \
    "for p in $l; do s=; read -r s 2>/dev/null </proc/$p/stat; s=${s##*) }; case $s in "         \
    "Z*|X*) ;; '') kill -0 \"$p\" 2>/dev/null && return 0 ;; *) return 0 ;; esac; done; "        \
    "return 1; }"

/* The guard, put by the command's wrapping shell (sshd's session leader, $$ its group)
 * before it execs the command: a process left apart (two forks: no child of the command,
 * which may wait for any child) that checks every second that $$'s parent is still the sshd
 * session process that started it ($PPID). With no pty, nothing tells a remote command that
 * tunedeck died (SIGKILL, a crash): its connection closes, sshd's session process exits, and
 * the command, reparented, runs on until it writes (EPIPE), which a quiet one may not do for
 * hours. Then the guard stops the group: TERM, then KILL once $$ has ended (a job's
 * wrapping shell waits for its checkpoint) or after `kill_ticks` tenths of a second (a
 * decimal in the text), whichever comes first: the guard itself is of the group, and waiting
 * on the whole group would wait on itself. It ends at once where /proc is absent (no
 * guard), and when $$ is gone or a zombie (the command ended, or was killed with its
 * session: what it left behind is the launcher's to stop, as before; its pid cannot be
 * another's while the guard keeps the group's id in use). Its own output goes nowhere: it
 * holds no channel open.
 *
 * The guard is a shell of its own (`sh -c GUARD tunedeck-guard $$ $PPID`), not a subshell of
 * the wrapping one: a subshell's command line is its parent's, which holds the command (and
 * whatever names it: a test's marker, a job's paths), so `pgrep -f` on the command counted
 * the guard for up to a second after the command ended. Its text is fixed, in single quotes
 * (so it holds none): the two pids are its arguments, nothing of the command reaches it. Put
 * before the wrapping shell exports the trial's variables, its environment carries no
 * TUNEDECK_RUN_MARK either: the orphan stop (orphans.c) takes a group for the launch's by
 * the command's own processes, not by the guard's.
 *
 * A session whose client vanished without closing its connection (a power loss) keeps its
 * sshd process until TCP notices: that is still the journal's --resume stop (remote.md). */
#define GROUPSTOP_GUARD_SH(kill_ticks)                                                           \
    "( sh -c '[ -r /proc/$1/stat ] || exit 0; g=$1 p=$2; while :; do s=; "                      \
    "read -r s </proc/$g/stat || exit 0; s=${s##*) }; set -- $s; case $1 in Z*|X*) exit 0 ;; "  \
    "esac; [ \"$2\" = \"$p\" ] || break; sleep 1; done; trap \"\" TERM; kill -TERM -$g; n=0; "  \
    "while [ $n -lt " kill_ticks " ]; do s=; read -r s </proc/$g/stat || break; "               \
    "s=${s##*) }; case $s in Z*|X*) break ;; esac; sleep 0.1; n=$((n+1)); done; "               \
    "kill -KILL -$g' tunedeck-guard \"$$\" \"$PPID\" </dev/null >/dev/null 2>&1 & ); "

/* The command that stops group pgid (> 1): TERM, then KILL once it has had 2 s; it ends
 * when no process but zombies is left, or just after the KILL. Caller frees; NULL when
 * memory runs out. */
char *groupstop_command(long pgid);

#endif
