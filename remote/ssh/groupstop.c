/* The remote shell text that stops a trial's process group and its marked processes, and
 * the trial's wrapping shell that runs that stop at its command's end (groupstop.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/groupstop.h"
#include "remote/ssh/shquote.h"

/* The note on leftovers: each marked process still running (k, as `marked` found them) and,
 * in the trial's wrapping shell, each other process of its group (gm, as `members` found them:
 * one that emptied its environment carries no mark), as the local keeper names them (pid and
 * name; "outside the trial's process group" for one that left it). */
#define NOTE_SH                                                                                    \
    "if [ -n \"$k$gm\" ]; then l=; c=0; nq=; for q in $k $gm; do case \" $nq \" in *\" $q \"*) "   \
    "continue ;; esac; nq=\"$nq $q\"; s=; read -r s 2>/dev/null </proc/$q/stat "                   \
    "|| continue; nm=${s#*(}; nm=${nm%)*}; s=${s##*) }; set -- $s; case $1 in Z*|X*) "             \
    "continue ;; esac; c=$((c+1)); if [ $c -gt 4 ]; then l=\"$l, ...\"; break; fi; "               \
    "[ $c -gt 1 ] && l=\"$l, \"; l=\"$l$q $nm\"; [ \"$3\" = \"$g\" ] || "                          \
    "l=\"$l (outside the trial's process group)\"; done; [ -n \"$l\" ] && printf \"%s\\n\" "       \
    "\"" GROUPSTOP_LEFT_NOTE "$l); $nw\"; fi; "

int groupstop_mark_ok(const char *mark)
{
    size_t n = mark ? strspn(mark, "0123456789abcdef") : 0;
    return n == GROUPSTOP_MARK_CHARS && mark[n] == 0;
}

/* The mark a stop's text names: `mark` where groupstop_mark_ok takes it, else "-" (which
 * `marked` finds on no process). */
static const char *mark_or_none(const char *mark)
{
    return groupstop_mark_ok(mark) ? mark : "-";
}

char *groupstop_under_sh(char *text)
{
    char *b = NULL;
    size_t len = 0;
    if (text &&
        (shquote_append_raw(&b, &len, "exec sh -c ") < 0 || shquote_append(&b, &len, text) < 0)) {
        free(b);
        b = NULL;
    }
    free(text);
    return b;
}

char *groupstop_command(long pgid, const char *mark, int ended)
{
    /* TERM lets the trial checkpoint or clean up; KILL after 2 s leaves nothing behind. One
     * look for the marked processes serves the note and the TERM; what the loop saw go may
     * have forked on its way out: `marked` is asked again before the stop counts as done,
     * and twice after the KILL. The shell functions hold '%': they are put in as text, never
     * as a format. */
    static const char head[] =
        GROUPSTOP_LIVE_SH "; " GROUPSTOP_MARKED_SH "; " GROUPSTOP_UP_SH "; " GROUPSTOP_OURS_SH "; ";
    /* og: group g is still the launch's (GROUPSTOP_OURS_SH: a marked process in it, pid g a
     * zombie or absent), or nothing tells (no mark): as before. */
    static const char ours[] = "og=; { [ \"$m\" = - ] || ours $g $k; } && og=1; ";
    static const char stop[] =
        "[ -n \"$og\" ] && kill -TERM -$g 2>/dev/null; [ -n \"$k\" ] && "
        "kill -TERM $k 2>/dev/null; n=0; "
        "while { [ -n \"$og\" ] && live $g; } || up $k || marked \"$m\"; do n=$((n+1)); "
        "if [ $n -ge 20 ]; then [ -n \"$og\" ] && kill -KILL -$g 2>/dev/null; "
        "marked \"$m\" && kill -KILL $k 2>/dev/null; sleep 0.1; "
        "marked \"$m\" && kill -KILL $k 2>/dev/null; break; fi; sleep 0.1; done; true";
    const char *note = ended ? NOTE_SH : "";
    /* The URG tells a running wrapping shell that this is a stop; after the command's end that
     * shell is gone, and pid g may be another's by now. */
    const char *urg = ended ? "" : "[ -n \"$og\" ] && kill -URG $g 2>/dev/null; ";
    char vars[192];
    snprintf(vars, sizeof vars, "g=%ld m=%s; nw=\"" GROUPSTOP_STOPPING "\"; gm=; marked \"$m\"; ",
             pgid, mark_or_none(mark));
    size_t len =
        strlen(head) + strlen(vars) + strlen(ours) + strlen(note) + strlen(urg) + strlen(stop);
    char *cmd = malloc(len + 1);
    if (cmd)
        snprintf(cmd, len + 1, "%s%s%s%s%s%s", head, vars, ours, note, urg, stop);
    return groupstop_under_sh(cmd);
}

char *groupstop_kill_command(long pgid, const char *mark)
{
    /* The marked processes outside the group first, then the group (whose KILL ends the
     * wrapping shell, which lets the next run start), then a second look: a marked process that
     * forked a setsid child between the first look and its KILL left that child marked and
     * running. The group is KILLed only while it is still the run's (og, GROUPSTOP_OURS_SH): the
     * run may have ended since its stop's TERM, and its number be another's. Its own marked
     * members (the wrapping shell among them) are left to the group's KILL: KILLed first, the
     * shell, pid g, would be reaped and its number free again before the group's KILL. */
    static const char head[] = GROUPSTOP_MARKED_SH "; " GROUPSTOP_OURS_SH "; ";
    const char *m = mark_or_none(mark);
    char tail[512];
    snprintf(tail, sizeof tail,
             "g=%ld; marked %s; og=; { [ %s = - ] || ours $g $k; } && og=1; ko=; for q in $k; do "
             "s=; read -r s 2>/dev/null </proc/$q/stat; s=${s##*) }; set -- $s; "
             "[ -n \"$og\" ] && [ \"$3\" = \"$g\" ] || ko=\"$ko $q\"; done; "
             "[ -n \"$ko\" ] && kill -KILL $ko 2>/dev/null; [ -n \"$og\" ] && kill -KILL -%ld "
             "2>/dev/null; marked %s && kill -KILL $k 2>/dev/null; true",
             pgid, m, m, pgid, m);
    size_t len = strlen(head) + strlen(tail);
    char *cmd = malloc(len + 1);
    if (cmd)
        snprintf(cmd, len + 1, "%s%s", head, tail);
    return groupstop_under_sh(cmd);
}

char *groupstop_signal_command(long pgid, const char *mark, const char *signame)
{
    static const char head[] = GROUPSTOP_MARKED_SH "; " GROUPSTOP_OURS_SH "; ";
    char tail[160];
    if (groupstop_mark_ok(mark))
        snprintf(tail, sizeof tail, "marked %s; ours %ld $k && kill -%s -%ld 2>/dev/null", mark,
                 pgid, signame, pgid);
    else
        snprintf(tail, sizeof tail, "kill -%s -%ld 2>/dev/null", signame, pgid);
    size_t len = strlen(head) + strlen(tail);
    char *cmd = malloc(len + 1);
    if (cmd)
        snprintf(cmd, len + 1, "%s%s", head, tail);
    return groupstop_under_sh(cmd);
}

/* members: sets gm to the processes of the wrapping shell's group g that are not zombies, but
 * the shell itself, what it forks to look (its children) and the guard (pid gd, and its `sleep`),
 * and exits 0 when there is one; never one where the shell does not lead g (a group that may
 * hold what is not the trial's). pgrep lists the group where it can, else every stat is read
 * (builtins only, as `live`): g is the shell's own group, so a pgrep that can list it lists the
 * shell and exits 0; any other status (busybox's pgrep has no -g: its usage, exit 1, which
 * procps uses for "none") is "cannot list". */
#define MEMBERS_SH                                                                                 \
    "members() { gm=; [ \"$g\" = \"$$\" ] || return 1; ml=$(pgrep -g \"$g\" 2>/dev/null); "        \
    "case $? in 0) ;; *) ml=; for mp in /proc/[0-9]*/stat; do mp=${mp%/stat}; "                  \
    "ml=\"$ml ${mp#/proc/}\"; done ;; esac; for mp in $ml; do ms=; read -r ms 2>/dev/null "        \
    "</proc/$mp/stat || continue; ms=${ms##*) }; set -- $ms; [ \"$3\" = \"$g\" ] || continue; "    \
    "case $1 in Z*|X*) continue ;; esac; [ \"$mp\" = \"$$\" ] || [ \"$2\" = \"$$\" ] || "          \
    "[ \"$mp\" = \"$gd\" ] || [ \"$2\" = \"$gd\" ] && continue; gm=\"$gm $mp\"; done; "            \
    "[ -n \"$gm\" ]; }"

/* The stop's loop is the one above without `live $g`: the wrapping shell is of its group (as
 * is whatever it forks to look), so it waits on the group's other processes as `members` lists
 * them, and on the processes that left the group, or stayed in it, that carry the mark; what is
 * left of either after 2 s (by tk's clock) is KILLed. The command is a child in the group,
 * not an exec: the shell must outlive it to stop what it left. TERM: a trap of its own (a
 * handler, not "ignore", which the command would inherit), then ignored once the command has
 * ended (its own TERM to the group). A TERM alone (a live job's resize or stop, jobctl_signal;
 * the command's own `kill 0`: both reach the shell as a member of the group) still gets the
 * shell's own stop of what the command left, but the group had its TERM and may be checkpointing
 * (a top shell that ended at once, its child still writing): it is sent none again (only the
 * marked processes outside the group are), and the KILL waits a job's 20 s (the live scheduler's
 * stop_timeout_s, after which its own KILL comes too) or a trial's 2 s.
 * A stop (groupstop_command, the guard) says it is one with an URG to the shell before its TERM
 * (ignored by default, so harmless to any other process): then the shell leaves the stop to the
 * stop that sent it, which is under way and names nothing as left by a command that ended. The
 * URG comes first from the same process, so it has been handled by the time the command's end
 * is seen. Its own stderr is /dev/null while the command runs (the
 * command's is the channel's): each shell says "Killed" (bash: "line 1: PID Killed ...") of a
 * command a signal ended, which the trial's log and failure would then hold; the command's
 * redirection is made in a subshell that execs it, since dash and ash make a command's own in
 * the waiting shell, which then said it there. Only a signal whose default is to end a
 * process is raised again: a command that exits 147 by itself must not stop (SIGSTOP) it. */
const char groupstop_trial_sh[] = GROUPSTOP_MARKED_SH
    "; " GROUPSTOP_UP_SH "; " MEMBERS_SH "; " GROUPSTOP_TENTHS_SH "; "
    "m=$TUNEDECK_RUN_MARK tc=$" GROUPSTOP_CMD_VAR " gd=$" GROUPSTOP_GUARD_VAR
    "; unset " GROUPSTOP_CMD_VAR " " GROUPSTOP_GUARD_VAR "; ts=; "
    "trap \"ts=1\" URG; trap \"tt=1\" TERM; tt=; exec 3>&2 2>/dev/null; "
    "(exec sh -c \"$tc\" 2>&3 3>&-); st=$?; exec 2>&3 3>&-; "
    "trap \"\" TERM; unset TUNEDECK_RUN_MARK; "
    "if [ -z \"$ts\" ]; then s=; read -r s 2>/dev/null </proc/$$/stat; s=${s##*) }; set -- $s; "
    "g=$3; marked \"$m\"; members; nl=20 nw=\"" GROUPSTOP_STOPPING "\" kt=$k; "
    "if [ -n \"$tt\" ]; then kt=; for q in $k; do s=; read -r s 2>/dev/null </proc/$q/stat "
    "|| continue; s=${s##*) }; set -- $s; [ \"$3\" = \"$g\" ] || kt=\"$kt $q\"; done; "
    "nw=\"" GROUPSTOP_HAD_TERM "2000 ms\"; [ \"$0\" = " GROUPSTOP_JOB_NAME " ] && "
    "nl=" GROUPSTOP_JOB_TICKS " nw=\"" GROUPSTOP_HAD_TERM GROUPSTOP_JOB_TICKS "00 ms\"; fi; { " NOTE_SH
    "} >&2; [ -z \"$tt\" ] && [ \"$g\" = \"$$\" ] && kill -TERM -$g 2>/dev/null; "
    "[ -n \"$kt\" ] && kill -TERM $kt 2>/dev/null; "
    "if [ -n \"$k$gm\" ]; then n=0 dl=; tk && dl=$((t+nl)); while up $k || marked \"$m\" || "
    "members; do n=$((n+1)); if { [ -n \"$dl\" ] && { ! tk || [ $t -ge $dl ]; }; } || "
    "{ [ -z \"$dl\" ] && [ $n -ge $nl ]; }; then marked \"$m\" && kill -KILL $k 2>/dev/null; members && "
    "kill -KILL $gm 2>/dev/null; sleep 0.1; marked \"$m\" && kill -KILL $k 2>/dev/null; members && "
    "kill -KILL $gm 2>/dev/null; break; fi; sleep 0.1; done; fi; "
    "[ -n \"$g\" ] && echo " GROUPSTOP_ENDED " >&2; fi; [ \"$0\" = " GROUPSTOP_JOB_NAME " ] || "
    "case $st in 129|13[0-9]|14[0-3]) trap - TERM; "
    "ulimit -c 0 2>/dev/null; kill -$((st-128)) $$ ;; esac; exit $st";

/* The note is always the tail of its line: "...); " and the stop's own words to the end. Only
 * that counts, so a command that prints the note's words itself (a grep of old logs:
 * "logs/a.log:tunedeck: the trial's command ended and left processes running (...") is not
 * taken for it, which would keep its later lines, a real traceback among them, from being its
 * last words. t: the tail's start, end: the line's. */
static int note_tail(const char *t, const char *end)
{
    static const char stopping[] = "); " GROUPSTOP_STOPPING, had[] = "); " GROUPSTOP_HAD_TERM;
    size_t n = (size_t)(end - t);
    if (n == sizeof stopping - 1 && memcmp(t, stopping, n) == 0)
        return 1;
    if (n < sizeof had - 1 || memcmp(t, had, sizeof had - 1) != 0)
        return 0;
    t += sizeof had - 1;
    size_t digits = 0;
    while (t + digits < end && t[digits] >= '0' && t[digits] <= '9')
        digits++;
    return digits > 0 && (size_t)(end - t) == digits + 3 && memcmp(t + digits, " ms", 3) == 0;
}

/* The last occurrence of needle (nn bytes) in the n bytes at s, or NULL. */
static const char *last_in(const char *s, size_t n, const char *needle, size_t nn)
{
    const char *last = NULL;
    for (const char *at = memmem(s, n, needle, nn); at;
         at = memmem(at + 1, n - (size_t)(at + 1 - s), needle, nn))
        last = at;
    return last;
}

/* Where GROUPSTOP_LEFT_NOTE starts as the tail of the n bytes at line (none of them NUL), or
 * NULL: a last line the command left without a newline comes before it on the same line. */
static const char *left_note_n(const char *line, size_t n)
{
    static const char head[] = GROUPSTOP_LEFT_NOTE;
    const char *note = last_in(line, n, head, sizeof head - 1);
    if (!note)
        return NULL;
    /* the names' list may hold ") " itself (a process named so): the tail is the last "); " */
    const char *tail = last_in(note, n - (size_t)(note - line), "); ", 3);
    return tail && note_tail(tail, line + n) ? note : NULL;
}

long groupstop_own_part(const char *line, size_t len, int *left_noted, int *ended)
{
    static const char end_line[] = GROUPSTOP_ENDED;
    size_t el = sizeof end_line - 1;
    *ended = len >= el && memcmp(line + len - el, end_line, el) == 0;
    size_t own = *ended ? len - el : len;
    /* as a string: a NUL the command printed ends its text, as it ends the note's look */
    const char *note = left_note_n(line, strnlen(line, own));
    if (note) {
        int was = *left_noted;
        *left_noted = 1;
        return !was && note > line ? (long)(note - line) : -1;
    }
    if (*left_noted || (*ended && own == 0))
        return -1;
    return (long)own;
}
