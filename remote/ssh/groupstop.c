/* The remote shell text that stops a trial's process group and its marked processes
 * (groupstop.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/groupstop.h"

/* The note on leftovers: each marked process still running (k, as `marked` found them), as
 * the local keeper names them (pid and name; "outside the trial's process group" for one
 * that left it). */
#define NOTE_SH                                                                                    \
    "if [ -n \"$k\" ]; then l=; c=0; for q in $k; do s=; read -r s 2>/dev/null </proc/$q/stat "    \
    "|| continue; nm=${s#*(}; nm=${nm%)*}; s=${s##*) }; set -- $s; case $1 in Z*|X*) "             \
    "continue ;; esac; c=$((c+1)); if [ $c -gt 4 ]; then l=\"$l, ...\"; break; fi; "               \
    "[ $c -gt 1 ] && l=\"$l, \"; l=\"$l$q $nm\"; [ \"$3\" = \"$g\" ] || "                          \
    "l=\"$l (outside the trial's process group)\"; done; [ -n \"$l\" ] && printf \"%s\\n\" "       \
    "\"" GROUPSTOP_NOTE "the trial's command ended and left processes running ($l); stopping "     \
    "them: TERM, KILL after 2000 ms\"; fi; "

char *groupstop_command(long pgid, const char *mark, int ended)
{
    /* TERM lets the trial checkpoint or clean up; KILL after 2 s leaves nothing behind. One
     * look for the marked processes serves the note and the TERM; what the loop saw go may
     * have forked on its way out: `marked` is asked again before the stop counts as done,
     * and twice after the KILL. The shell functions hold '%': they are put in as text, never
     * as a format. */
    static const char head[] = GROUPSTOP_LIVE_SH "; " GROUPSTOP_MARKED_SH "; " GROUPSTOP_UP_SH "; ";
    static const char stop[] =
        "kill -TERM -$g 2>/dev/null; [ -n \"$k\" ] && kill -TERM $k 2>/dev/null; n=0; "
        "while live $g || up $k || marked \"$m\"; do n=$((n+1)); if [ $n -ge 20 ]; then "
        "kill -KILL -$g 2>/dev/null; marked \"$m\" && kill -KILL $k 2>/dev/null; sleep 0.1; "
        "marked \"$m\" && kill -KILL $k 2>/dev/null; break; fi; sleep 0.1; done; true";
    size_t n = mark ? strspn(mark, "0123456789abcdef") : 0;
    const char *m = mark && n == 32 && !mark[n] ? mark : "-";
    const char *note = ended ? NOTE_SH : "";
    char vars[128];
    snprintf(vars, sizeof vars, "g=%ld m=%s; marked \"$m\"; ", pgid, m);
    size_t len = strlen(head) + strlen(vars) + strlen(note) + strlen(stop);
    char *cmd = malloc(len + 1);
    if (cmd)
        snprintf(cmd, len + 1, "%s%s%s%s", head, vars, note, stop);
    return cmd;
}
