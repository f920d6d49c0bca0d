/* The remote shell text that stops what a trial started on a host: its process group and
 * every process of the user that carries the trial's TUNEDECK_RUN_MARK there (a daemon that
 * left the group with setsid); TERM, wait while one that is not a zombie is left, KILL after 2 s.
 * Run by the trial's own wrapping shell once its command has ended (no channel of its own),
 * asked for over a second channel by a stop, and run by the group's own guard once the SSH
 * session that started it is gone. */
#ifndef TUNEDECK_GROUPSTOP_H
#define TUNEDECK_GROUPSTOP_H

/* TUNEDECK_RUN_MARK, the mark of one launch of a trial on one host (or of one run of a live
 * job): GROUPSTOP_MARK_CHARS lowercase hex digits (128 random bits, orphans_mark_new). The
 * stops put it into their shell commands, so this is the one definition of its form: the
 * shell text below checks the same length (GROUPSTOP_TEXT) before it looks for a mark. */
#define GROUPSTOP_MARK_CHARS 32
#define GROUPSTOP_TEXT_(x) #x
#define GROUPSTOP_TEXT(x) GROUPSTOP_TEXT_(x)

/* 1 when mark is exactly GROUPSTOP_MARK_CHARS lowercase hex digits, else 0 (NULL included):
 * the only text besides numbers that a stop (here, a live job's, the orphan stop) puts into a
 * remote shell command, and the one check of it for every caller. */
int groupstop_mark_ok(const char *mark);

/* live G: exit 0 while group G holds a process that is not a zombie. `kill -0 -G` counts
 * zombies, and a group member whose parent died waits for init to reap it (a container's
 * init may take a second or more), so a stop that asked kill -0 waited out its cap on a
 * group already stopped. Reads the state from /proc/PID/stat with builtins only. pgrep lists
 * the group where it can: whether it can is asked once a shell (`pq`), of group 0, pgrep's
 * own, never empty: busybox's pgrep has no -g and exits 1 with its usage, the status of a
 * group that is empty, so a status is never trusted without that probe. Where it cannot, every
 * stat is read; where /proc is absent it asks kill -0 of the group, and of a process whose
 * stat it cannot read kill -0 of that process, as before: never "stopped" where it cannot
 * tell. No "--" before a group in any kill here: dash's kill (a login shell that is /bin/sh)
 * reads it as a number and fails, and the signal named first keeps "-PGID" an operand in
 * every shell. */
#define GROUPSTOP_LIVE_SH                                                                        \
    "unset pq; live() { [ -n \"${pq+x}\" ] || { pq=; pgrep -g 0 >/dev/null 2>&1 && pq=1; }; "    \
    "if [ -z \"$pq\" ]; then [ -r /proc/self/stat ] || { kill -0 -\"$1\" 2>/dev/null; return; }; " \
    "lg=$1; for p in /proc/[0-9]*/stat; do s=; read -r s 2>/dev/null <$p || continue; "         \
    "s=${s##*) }; set -- $s; [ \"$3\" = \"$lg\" ] || continue; case $1 in Z*|X*) ;; *) "         \
    "return 0 ;; esac; done; return 1; fi; l=$(pgrep -g \"$1\" 2>/dev/null); case $? in 0) ;; "  \
    "1) return 1 ;; *) kill -0 -\"$1\" 2>/dev/null; return ;; esac; "                             \
    "for p in $l; do s=; read -r s 2>/dev/null </proc/$p/stat; s=${s##*) }; case $s in "         \
    "Z*|X*) ;; '') kill -0 \"$p\" 2>/dev/null && return 0 ;; *) return 0 ;; esac; done; "        \
    "return 1; }"

/* carrying E: sets k to the pids of the processes whose environment (/proc/PID/environ)
 * holds the entry E whole (NAME=VALUE), but the shell that asks ($$: the trial's wrapping
 * shell carries its own mark), and exits 0 when there is one. marked M: the same for
 * TUNEDECK_RUN_MARK=M. sshd's setsid makes the trial's shell a group leader, but a process
 * the trial started that called setsid() (a daemon, a data-loader server, `setsid cmd &`) is
 * in a group of its own, which no kill of the trial's group reaches: the mark, inherited with
 * the environment, is what still names it. Only the user's own processes can be read (environ
 * is 0400 and ptrace-checked), so the mark stays theirs, and a zombie's reads empty (never
 * "still running"). M must be GROUPSTOP_MARK_CHARS lowercase hex digits (groupstop_mark_ok's
 * rule, checked again here), else nothing is marked. The one environ check of the remote
 * side: the stops here and the orphan stop (orphans.c) ask it.
 * Cost: one grep over every environ (the kernel's own read of each; another user's fails at
 * open), no fork per process, however many the host runs: `grep -z` (GNU's, busybox's since
 * 1.2x) matches the NUL-separated entry whole; a grep without -z that reads past a NUL
 * matches the entry's text, so each process it lists (a few) is read again through `tr` for
 * the entry whole; where grep does neither (an old busybox: asked once a shell, with a line
 * holding a NUL; `mo` keeps the answer), each readable environ goes through `tr`, two forks
 * per process of the user's. No single quote here: it is in the guard. */
#define GROUPSTOP_MARKED_SH                                                                        \
    "unset mo; carrying() { k=; mw=$1; [ -n \"${mo+x}\" ] || if printf \"x\\000%s\\000\" \"$mw\" | "\
    "grep -qzxF -e \"$mw\" 2>/dev/null; then mo=-lzxF; elif printf \"x\\000%s\\n\" \"$mw\" | "  \
    "grep -qF -e \"$mw\" 2>/dev/null; then mo=-lF; else mo=; fi; if [ -n \"$mo\" ]; then for mf in $(cd "   \
    "/proc && exec grep $mo -e \"$mw\" [0-9]*/environ 2>/dev/null); do mf=${mf%/environ}; "             \
    "[ \"$mf\" = \"$$\" ] && continue; [ $mo = -lF ] && { tr \"\\000\" \"\\n\" 2>/dev/null "       \
    "</proc/$mf/environ | grep -qxF -e \"$mw\" || continue; }; k=\"$k $mf\"; done; else for mf "   \
    "in /proc/[0-9]*/environ; do [ -r \"$mf\" ] && tr \"\\000\" \"\\n\" 2>/dev/null <\"$mf\" | "  \
    "grep -qxF -e \"$mw\" && { mf=${mf%/environ}; mf=${mf#/proc/}; [ \"$mf\" = \"$$\" ] || "      \
    "k=\"$k $mf\"; }; done; fi; [ -n \"$k\" ]; }; marked() { k=; case $1 in *[!0-9a-f]*) "        \
    "return 1 ;; esac; [ ${#1} -eq " GROUPSTOP_TEXT(GROUPSTOP_MARK_CHARS) " ] || return 1; "      \
    "carrying TUNEDECK_RUN_MARK=$1; }"

/* up PID...: exit 0 while one of the pids is a process that is not a zombie (builtins only;
 * one gone reads as gone). */
#define GROUPSTOP_UP_SH                                                                          \
    "up() { for uq in \"$@\"; do us=; read -r us 2>/dev/null </proc/$uq/stat || continue; "      \
    "us=${us##*) }; case $us in Z*|X*) ;; *) return 0 ;; esac; done; return 1; }"

/* ours G PID...: exit 0 while process group G may be signalled as the launch's: one of the pids
 * (what `marked` found, the caller's look) is a process in group G, or pid G is a zombie or
 * absent (its number is not free while either holds it, and what is left of the group, if
 * anything, is the launch's), or nothing tells (no /proc). Else G's number was taken again:
 * once the launch's wrapping shell (G) and every process of its group have ended, pid G is
 * free, and a process that takes it and leads a group of its own (every command sshd starts
 * does) would take the group's signal. The one gate of every signal to a group a stop names by
 * its number: groupstop_command, groupstop_kill_command, jobctl_signal_text and the orphan
 * stop (orphans.c); where there is no mark to look for (none given, or "-") the caller does not
 * ask it (nothing tells), as before. Builtins only; its variables start with o. */
#define GROUPSTOP_OURS_SH                                                                          \
    "ours() { [ -r /proc/self/stat ] || return 0; ou=$1; shift; os=; read -r os 2>/dev/null "      \
    "</proc/$ou/stat; os=${os##*) }; case $os in \"\"|Z*|X*) return 0 ;; esac; for oq in "         \
    "\"$@\"; do os=; read -r os 2>/dev/null </proc/$oq/stat; os=${os##*) }; set -- $os; "          \
    "[ \"$3\" = \"$ou\" ] && return 0; done; return 1; }"

/* tk: sets t to the tenths of a second since boot, from /proc/uptime ("SECONDS.HH", the kernel's
 * own two decimals) with builtins only, and exits 0; 1 where it cannot be read. The wait before
 * the KILL is a deadline on that clock: a pass of the loop also runs `marked` (a grep over every
 * environ) and `members` (a pgrep, or a read of every stat), which on a loaded host or one with
 * thousands of processes cost as much as its `sleep 0.1` or far more, so a count of passes made
 * a 20 s wait 27 s and more (past what a live job's stop is given before its own KILL). Where
 * there is no /proc/uptime the passes are counted, as before. The whole seconds lose their
 * leading zeros first: `$((08))` is an octal error that ends the shell (no KILL, no end line),
 * and the kernel never pads, but a container's stand-in /proc may. The rank fan-out's wait
 * before its KILL (rankfan.c) reads the same clock, for the same reason. */
#define GROUPSTOP_TENTHS_SH                                                                        \
    "tk() { t=; read -r ut _ 2>/dev/null </proc/uptime || return 1; case $ut in "                  \
    "[0-9]*.[0-9]*) ;; *) return 1 ;; esac; uw=${ut%.*} uf=${ut#*.}; uf=${uf%\"${uf#?}\"}; "       \
    "case $uw$uf in *[!0-9]*) return 1 ;; esac; uw=${uw#\"${uw%%[!0]*}\"}; "                       \
    "t=$((${uw:-0}*10+$uf)); }"

/* The line a stop after the command's own end prints (the wrapping shell's on its stderr, a
 * stop over a channel of its own on its stdout) when the command left marked processes
 * running; the launcher hands it to the trial's log. */
#define GROUPSTOP_NOTE "tunedeck: "
/* Its head where it names what a command left (the only such line the launcher keeps out of
 * a failure's last word: a command's own "tunedeck: ..." line, a Slurm step's, stays it). */
#define GROUPSTOP_LEFT_NOTE GROUPSTOP_NOTE "the trial's command ended and left processes running ("

/* The command's own part of a line of its wrapping shell's stderr (len bytes), which the
 * command shares: how many of the line's first bytes are the command's words, or -1 for none.
 * Not the command's: the shell's end line (GROUPSTOP_ENDED as the line's tail: *ended is set,
 * else cleared), its note on what the command left (GROUPSTOP_LEFT_NOTE as the tail of the
 * line, after the command's last line if it left one without a newline: *left_noted is set),
 * and every line after that note (what the leftovers print while they are stopped: a
 * "Terminated" of theirs is no failure's cause). A last line the command left without a
 * newline, before the note or the end line on the same line, is its own; an empty line it
 * printed is its own too (0). *left_noted: 0 at the run's start, kept by the caller from line
 * to line. The one reading of that stderr, for both of its readers: a trial's (launch_ssh.c,
 * its failure's last words) and a live job's (jobctl_words_stderr). */
long groupstop_own_part(const char *line, size_t len, int *left_noted, int *ended);

/* The note's tail where the stop sends the TERM itself (the stop over a channel of its own,
 * the wrapping shell after a command that ended by itself). */
#define GROUPSTOP_STOPPING "stopping them: TERM, KILL after 2000 ms"
/* Its head where the wrapping shell had a TERM with no stop's URG before it (a live job's
 * resize or stop: jobctl_signal; the command's own `kill 0`): the group had its TERM and may be
 * checkpointing, so it is sent none again; the tail is the wait before the KILL. */
#define GROUPSTOP_HAD_TERM "the group had a TERM: waiting for them, KILL after "
/* That wait in seconds for a live job (`tunedeck-job`): the live scheduler's default
 * stop_timeout_s (schedlive.c takes it from here), which a checkpoint is given before its KILL;
 * a trial's is 2 s, as its stop's. GROUPSTOP_JOB_TICKS: the same in tenths, as shell text. */
#define GROUPSTOP_JOB_WAIT_S 20
#define GROUPSTOP_JOB_TICKS GROUPSTOP_TEXT(GROUPSTOP_JOB_WAIT_S) "0"

/* The line (stderr) the trial's wrapping shell prints once its stop of what the command left
 * is over: nothing of the trial runs on there, and no stop of its own is asked for. The
 * command shares that stderr, so a last line it left without a newline comes before it on
 * the same line: the launcher reads it as the line's end. */
#define GROUPSTOP_ENDED "tunedeck-ended"

/* The variable that hands the trial's command to its wrapping shell (unset before it runs). */
#define GROUPSTOP_CMD_VAR "TUNEDECK_TRIAL_COMMAND"

/* The name ($0) under which the wrapping shell runs a live job (jobctl.c) rather than a trial:
 * it ends with the job's exit status as is (a status above 128 raises no signal), as the
 * `sh -c` that ran the job did: a signalled channel is a job whose end was not seen. */
#define GROUPSTOP_JOB_NAME "tunedeck-job"

/* The variable, exported by GROUPSTOP_GUARD_SH, that hands the guard's pid to the wrapping
 * shell (unset before the command runs): the guard is of the trial's group and carries no mark,
 * and is no leftover of the command's. */
#define GROUPSTOP_GUARD_VAR "TUNEDECK_GUARD_PID"

/* The trial's wrapping shell: `exec sh -c <this> tunedeck-trial`, by the login shell that sshd
 * started (the session and group leader, whose pid it keeps), with TUNEDECK_RUN_MARK,
 * GROUPSTOP_CMD_VAR and GROUPSTOP_GUARD_VAR exported. It runs the command (`sh -c "$command"`,
 * a child in its group, with the trial's environment), and once that has ended it stops, itself,
 * what the command left: the group's other processes (only when it leads the group; the guard
 * and what the shell forks are not of them) and the processes `marked` finds, naming them in a
 * GROUPSTOP_NOTE line first, then TERM, a wait while one is left, KILL after 2 s; then it says
 * GROUPSTOP_ENDED; all on stderr. A group member that emptied its environment (no mark) and
 * ignores TERM is KILLed as a marked one is. So a trial's end costs no second exec channel, and
 * one that left nothing is over after one grep and one pgrep. Where it cannot read its own group
 * (no /proc) it stops nothing and does not say GROUPSTOP_ENDED: the launcher's stop over a
 * channel of its own does it, as before. It then ends as its command did: its exit status, or
 * the signal an exit status above 128 names (raised on itself, no core), for what sshd reports
 * as the trial's result: a status of 137 passed on by a script reads as SIGKILL (the launcher
 * treats both alike). A TERM to it while the command runs is the command's to answer: it waits
 * for the command. A stop (over a channel of its own, or the guard's) sends it SIGURG before its
 * TERM (default: ignored, so harmless to a process that is no such shell): then it skips its own
 * stop, which the stop that sent it is doing; a TERM without it (the command's own `kill 0`)
 * still gets the shell's own stop on the trial's channel, with no second TERM to the group
 * (GROUPSTOP_HAD_TERM: its checkpoint is waited for, 20 s for a job, 2 s for a trial).
 * The mark is in its environment (the guard reads it there), never on a command line: the
 * command is handed over in a variable, so its command line holds neither (`pgrep -f` on the
 * command finds the command alone, as when the command was exec'd). */
extern const char groupstop_trial_sh[];

/* The guard, put by the command's wrapping shell (sshd's session leader, $$ its group)
 * before it execs the command: a process left apart (forked by a command substitution that
 * then ends: no child of the command, which may wait for any child; its pid is exported in
 * GROUPSTOP_GUARD_VAR, so the wrapping shell does not take it for a leftover) that checks
 * every second that $$'s parent is still the sshd session process that started it ($PPID).
 * With no pty, nothing tells a remote command that tunedeck died (SIGKILL, a crash): its
 * connection closes, sshd's session process exits, and the command, reparented, runs on until
 * it writes (EPIPE), which a quiet one may not do for hours. Then the guard stops the group and
 * the processes that carry the group's mark (`marked`: a setsid daemon of the trial): SIGURG
 * to $$ (a stop: its wrapping shell leaves the stop to it), TERM, then KILL once $$ and every
 * marked process have ended (a job's wrapping shell waits for its checkpoint) or after
 * `kill_ticks` tenths of a second (a decimal in the text), whichever comes first: the guard
 * itself is of the group, and waiting on the whole group would wait on itself; the marked ones
 * are KILLed first, as
 * the group's KILL ends the guard. It ends at once where /proc is absent (no guard), and when
 * $$ is gone or a zombie (the command ended, or was killed with its session: what it left
 * behind is the wrapping shell's, or the launcher's, to stop; its pid cannot be another's
 * while the guard keeps the group's id in use). Its own output goes nowhere: it holds no channel
 * open.
 *
 * The guard is a shell of its own (`sh -c GUARD tunedeck-guard $$ $PPID`), not a subshell of
 * the wrapping one: a subshell's command line is its parent's, which holds the command (and
 * whatever names it: a test's marker, a job's paths), so `pgrep -f` on the command counted
 * the guard for up to a second after the command ended. Its text is fixed, in single quotes
 * (so it holds none): the two pids are its arguments, nothing of the command reaches it. Put
 * before the wrapping shell exports the trial's variables, its environment carries no
 * TUNEDECK_RUN_MARK either (the orphan stop, orphans.c, takes a group for the launch's by the
 * command's own processes, not by the guard's, and `marked` never finds the guard). The mark
 * is read when it stops, from the environment of $$ (the trial's wrapping shell, exec'd with
 * the trial's variables, a live job's with its run's mark too) or else of a process of the group,
 * into a variable of its own: its command line and environment stay free of it. One that is not
 * GROUPSTOP_MARK_CHARS hex digits is none (a group stop alone, as before).
 *
 * A session whose client vanished without closing its connection (a power loss) keeps its
 * sshd process until TCP notices: that is still the journal's --resume stop (remote.md). */
#define GROUPSTOP_GUARD_SH(kill_ticks)                                                           \
    GROUPSTOP_GUARD_VAR "=$(sh -c '[ -r /proc/$1/stat ] || exit 0; g=$1 p=$2; while :; do s=; " \
    "read -r s </proc/$g/stat || exit 0; s=${s##*) }; set -- $s; case $1 in Z*|X*) exit 0 ;; "  \
    "esac; [ \"$2\" = \"$p\" ] || break; sleep 1; done; trap \"\" TERM; " GROUPSTOP_MARKED_SH   \
    "; " GROUPSTOP_UP_SH "; m=; for q in $g $(pgrep -g $g 2>/dev/null); do "                    \
    "m=$(tr \"\\000\" \"\\n\" 2>/dev/null </proc/$q/environ | "                                  \
    "sed -n \"s/^TUNEDECK_RUN_MARK=//p\"); case $m in *[!0-9a-f]*) m= ;; esac; "                 \
    "[ ${#m} -eq " GROUPSTOP_TEXT(GROUPSTOP_MARK_CHARS) " ] && break; m=; done; "               \
    "kill -URG $g; kill -TERM -$g; marked \"$m\" && "                                            \
    "kill -TERM $k 2>/dev/null; n=0; while [ $n -lt " kill_ticks " ]; do s=; "                   \
    "read -r s 2>/dev/null </proc/$g/stat; s=${s##*) }; case $s in \"\"|Z*|X*) up $k || "       \
    "break ;; esac; sleep 0.1; n=$((n+1)); done; marked \"$m\" && kill -KILL $k 2>/dev/null; "   \
    "kill -KILL -$g' tunedeck-guard \"$$\" \"$PPID\" </dev/null >/dev/null 2>&1 & echo $!); " \
    "export " GROUPSTOP_GUARD_VAR "; "

/* The command that stops group pgid (> 1) and the processes marked with `mark` (one
 * groupstop_mark_ok takes; anything else, NULL and "" included, names none): TERM, then KILL
 * once they have had 2 s; it ends when no process but zombies is left of either, or just
 * after the KILL. With `ended` (the command
 * ended by itself and the stop is for what it left: a stray that holds its output after the
 * wrapping shell's own stop, or a wrapping shell that never said GROUPSTOP_ENDED), it first
 * prints a line starting
 * GROUPSTOP_NOTE naming up to four marked processes still running, those outside the group
 * said so, when there is one. Caller frees; NULL when memory runs out. */
char *groupstop_command(long pgid, const char *mark, int ended);

/* The command that KILLs group pgid (> 1) and, with `mark` (one groupstop_mark_ok takes;
 * anything else names none), every process marked with it: a live job's last word on a stop it
 * did not answer (schedlive's stop_timeout_s, jobctl_signal). That KILL also ends the job's
 * wrapping shell, whose own stop of the marked processes outside the group (a setsid daemon)
 * then never comes.
 * The marked ones outside the group are KILLed first, then the group: the shell's end, which
 * lets the next run start, comes after the marked ones had theirs; then the marked ones are
 * looked for once more (one that forked a setsid child between the look and its KILL). With a
 * mark, the group is KILLed only while it is still the run's (GROUPSTOP_OURS_SH): a run that
 * ended since has left its number free for another's group. Caller frees; NULL when memory
 * runs out. */
char *groupstop_kill_command(long pgid, const char *mark);

/* The command that sends signal `signame` (a name kill takes: "TERM") to group pgid (> 1) only
 * while the group is still the run's that `mark` names (GROUPSTOP_OURS_SH: a process marked with
 * it in the group, or pid pgid a zombie or absent); with no mark groupstop_mark_ok takes, to the
 * group as it is (nothing tells). It exits 0 when the signal was sent. A live job's TERM
 * (jobctl_signal). Caller frees; NULL when memory runs out. */
char *groupstop_signal_command(long pgid, const char *mark, const char *signame);

/* `text` as `exec sh -c 'TEXT'` (quoted as shquote does), for the remote login shell that sshd
 * hands a command to: the stops' texts use sh's word splitting of an unquoted `$k` (a list of
 * pids), which zsh, a login shell remote.md names as supported, does not do (`kill -KILL "1 2"`
 * kills nothing). Frees text (NULL passes through); caller frees; NULL when memory runs out.
 * groupstop_command, groupstop_kill_command, groupstop_signal_command and the orphan stop
 * (orphans.c) go through it. */
char *groupstop_under_sh(char *text);

#endif
