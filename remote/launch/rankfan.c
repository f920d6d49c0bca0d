/* Builds the per-host rank fan-out script; see rankfan.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/ranks.h"
#include "remote/launch/rankfan.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/shquote.h"

/* STOP_LOOK_TENTHS: how long a stopped fan-out looks for a rank that failed as the stop came,
 * in tenths of a second (below the 2 s a stop gives before its KILL). KILL_WAIT_TENTHS: how
 * long the ranks' processes have after a TERM (the fan-out's own, or a stop's) before the
 * fan-out KILLs them. KILL_PASSES: how many looks after that it KILLs what is left before it
 * ends anyway (a process in uninterruptible sleep dies of its KILL only when it wakes; the
 * launchers' sweep of the group is still to come). */
enum {
    DEFAULT_MASTER_PORT = 29500,
    KILL_WAIT_TENTHS = 30,
    STOP_LOOK_TENTHS = 10,
    KILL_PASSES = 10
};

/* The failure notice the script prints on standard output (rankfan_notice reads it back). */
#define NOTICE_HEAD "tunedeck: "
#define NOTICE_TAIL "; stopping the other ranks of this host"

int rankfan_wanted(const Schedule *s)
{
    return strcmp(s->cluster->trial.ranks, "per-device") == 0;
}

int rankfan_notice(const char *line, char *who, size_t cap)
{
    size_t head = strlen(NOTICE_HEAD), tail = strlen(NOTICE_TAIL), len = strlen(line);
    if (len <= head + tail || strncmp(line, NOTICE_HEAD "rank ", head + 5) != 0 ||
        strcmp(line + len - tail, NOTICE_TAIL) != 0 || !strstr(line, " exited with status "))
        return 0;
    snprintf(who, cap, "%.*s", (int)(len - head - tail), line + head);
    return 1;
}

int rankfan_master_port(const Cluster *c, int trial)
{
    int base = c->trial.master_port > 0 ? c->trial.master_port : DEFAULT_MASTER_PORT;
    return base + (trial < 0 ? 0 : trial % 100);
}

/* Appends NAME='value'; with value quoted. */
static int assign(char **b, size_t *len, const char *name, const char *value)
{
    return shquote_append_raw(b, len, " ") < 0 || shquote_append_raw(b, len, name) < 0 ||
                   shquote_append_raw(b, len, "=") < 0 || shquote_append(b, len, value) < 0
               ? -1
               : 0;
}

static int assign_int(char **b, size_t *len, const char *name, long value)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", value);
    return assign(b, len, name, text);
}

/* One rank: a subshell that records the rank's pid and then its exit status, so the
 * script can watch every rank at once (POSIX sh has no `wait -n`). The status is recorded
 * even when a stop's TERM reaches the group as the rank ends: the subshell traps TERM (a
 * handler, which the rank's exec resets, never "ignore", which it would inherit) and runs
 * the rank in the foreground, whose status a trapped signal cannot cut short (a `wait` it
 * interrupts returns 128+N at once), and the rank writes its own pid before it execs the
 * command. A rank that failed just before the stop was lost with its subshell, and with it
 * its host's notice. The subshell's own stderr is /dev/null (the rank's is the script's):
 * a shell says "Killed" of a foreground command a signal ended, and a write into a folder
 * the script's stop already removed fails aloud; neither is the trial's. */
static int append_rank(char **b, size_t *len, const Schedule *s, const Rank *r, size_t world,
                       size_t slot, const char *addr, int port, const char *command)
{
    const Cluster *c = s->cluster;
    const DeviceSpec *dev = cluster_device(c, r->device, NULL);
    char slot_text[16];
    snprintf(slot_text, sizeof slot_text, "%zu", slot);
    if (shquote_append_raw(b, len, "(trap : TERM; exec 3>&2 2> /dev/null;") < 0 ||
        assign_int(b, len, "RANK", r->rank) < 0 ||
        assign_int(b, len, "WORLD_SIZE", (long)world) < 0 ||
        assign_int(b, len, "LOCAL_RANK", r->local_rank) < 0 ||
        assign_int(b, len, "LOCAL_WORLD_SIZE", r->local_world) < 0 ||
        assign(b, len, "MASTER_ADDR", addr) < 0 || assign_int(b, len, "MASTER_PORT", port) < 0 ||
        assign(b, len, "TUNEDECK_MACHINE", c->machines[r->machine].name) < 0 ||
        assign(b, len, "TUNEDECK_DEVICE", dev->id) < 0 ||
        shquote_append_raw(b, len,
                           "; export RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR "
                           "MASTER_PORT TUNEDECK_MACHINE TUNEDECK_DEVICE; sh -c "
                           "'echo $$ > \"$1\"; exec sh -c \"$2\" 2>&3 3>&-' rank \"$d/pid.") < 0 ||
        shquote_append_raw(b, len, slot_text) < 0 || shquote_append_raw(b, len, "\" ") < 0 ||
        shquote_append(b, len, command) < 0 ||
        shquote_append_raw(b, len, " < \"$d/in\"; echo $? > \"$d/rc.") < 0 ||
        shquote_append_raw(b, len, slot_text) < 0 || shquote_append_raw(b, len, "\"; echo ") < 0 ||
        shquote_append_raw(b, len, slot_text) < 0 ||
        shquote_append_raw(b, len, " >> \"$d/ended\") &\n") < 0)
        return -1;
    return 0;
}

/* The shell functions that find the ranks' processes after a TERM and wait for them. A rank's
 * pid file names the `sh -c` that runs its command, not the command: dash forks even the last
 * command of `sh -c` (bash execs a simple one), and that shell dies of the TERM at once,
 * leaving its child (a Python that handles TERM, a script that traps it) running, adopted by
 * init. So the fan-out looks in /proc (builtins only, as the launchers' stops do) for every
 * process of its own process group but itself, its own children (the ranks' subshells, which
 * end as their command's shell does, and its `sleep`s) and what else was in the group before
 * the ranks started (`own`: the wrapping shell over SSH, the local keeper, the SSH guard), and
 * for what that last starts (the guard's `sleep`s) unless it is one of the fan-out's ancestors:
 * the local keeper is a subreaper, and a rank's orphan becomes its child. Ranks never leave
 * the group (a stop and the session's sweep find them by it), so whatever a rank started is
 * found, its shell gone or not. Without /proc, the pid files are all there is (as until `own`
 * has its whole answer: a stop's trap may come while it looks, before any rank has started;
 * it sets g last). `left` sets lp
 * to what it found; `reap` waits while it finds something, until KILL_WAIT_TENTHS after the
 * TERM (ts, on tk's clock: a look reads every process's stat, which on a host of thousands
 * costs more than the `sleep 0.1`; else counted in looks, kn), then KILLs what it finds, at
 * most KILL_PASSES times. `termed` starts that clock when the TERM goes out or comes in: the
 * fan-out's own just before its reap, a stop's before the stop's look (which counts its looks
 * in kn too), so a stop's ranks have KILL_WAIT_TENTHS from the stop's TERM, not from the
 * end of the look. The KILL is sent to those processes, not the group: the wrapping
 * shell and the keeper, in the group too, must live to hand on the fan-out's status. */
static int append_watch(char **b, size_t *len)
{
    char wait[512];
    snprintf(wait, sizeof wait,
             "termed() { ts=; tk && ts=$t; kn=0; }\n"
             "reap() {\n"
             "    kd=; [ -n \"$ts\" ] && kd=$((ts + %d)); kk=0\n"
             "    while left; do\n"
             "        if { [ -n \"$kd\" ] && { ! tk || [ $t -ge $kd ]; }; } || "
             "{ [ -z \"$kd\" ] && [ $kn -ge %d ]; }; then\n"
             "            kill -KILL $lp 2>/dev/null; kk=$((kk + 1)); [ $kk -ge %d ] && return\n"
             "        fi\n"
             "        kn=$((kn + 1)); sleep 0.1\n"
             "    done\n"
             "}\n",
             KILL_WAIT_TENTHS, KILL_WAIT_TENTHS, KILL_PASSES);
    return shquote_append_raw(b, len, GROUPSTOP_TENTHS_SH "\n") < 0 ||
                   shquote_append_raw(
                       b, len,
                       "own() {\n"
                       "    g=; anc=; oth=; s=\n"
                       "    read -r s 2>/dev/null < /proc/$$/stat || return 0\n"
                       "    s=${s##*) }; set -- $s; og=$3; p=$2\n"
                       "    while [ \"$p\" -gt 1 ]; do\n"
                       "        s=; read -r s 2>/dev/null < /proc/$p/stat || break\n"
                       "        s=${s##*) }; set -- $s; [ \"$3\" = \"$og\" ] || break\n"
                       "        anc=\"$anc $p \"; p=$2\n"
                       "    done\n"
                       "    for f in /proc/[0-9]*/stat; do\n"
                       "        s=; read -r s 2>/dev/null < \"$f\" || continue\n"
                       "        p=${f#/proc/}; p=${p%/stat}; s=${s##*) }; set -- $s\n"
                       "        [ \"$3\" = \"$og\" ] && [ \"$p\" != $$ ] || continue\n"
                       "        case $anc in *\" $p \"*) ;; *) oth=\"$oth $p \" ;; esac\n"
                       "    done\n"
                       "    g=$og\n"
                       "}\n"
                       "left() {\n"
                       "    lp=\n"
                       "    if [ -z \"$g\" ]; then\n"
                       "        li=0\n"
                       "        while [ $li -lt $n ]; do\n"
                       "            q=; [ -s \"$d/pid.$li\" ] && "
                       "read -r q 2>/dev/null < \"$d/pid.$li\" && "
                       "kill -0 \"$q\" 2>/dev/null && lp=\"$lp $q\"\n"
                       "            li=$((li + 1))\n"
                       "        done\n"
                       "    else\n"
                       "        for qf in /proc/[0-9]*/stat; do\n"
                       "            qs=; read -r qs 2>/dev/null < \"$qf\" || continue\n"
                       "            q=${qf#/proc/}; q=${q%/stat}; qs=${qs##*) }; set -- $qs\n"
                       "            [ \"$3\" = \"$g\" ] && [ \"$q\" != $$ ] && [ \"$2\" != $$ ] || "
                       "continue\n"
                       "            case $1 in Z*|X*) continue ;; esac\n"
                       "            case \"$anc$oth\" in *\" $q \"*) continue ;; esac\n"
                       "            case $oth in *\" $2 \"*) continue ;; esac\n"
                       "            lp=\"$lp $q\"\n"
                       "        done\n"
                       "    fi\n"
                       "    [ -n \"$lp\" ]\n"
                       "}\n") < 0 ||
                   shquote_append_raw(b, len, wait) < 0
               ? -1
               : 0;
}

/* `case $who in 0) what='rank 2 (h2 gpu0)';; ... esac` for the failure notice. */
static int append_labels(char **b, size_t *len, const Schedule *s, const Rank *r, size_t n)
{
    if (shquote_append_raw(b, len, "what=rank\ncase $who in\n") < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char label[256], slot[16];
        snprintf(label, sizeof label, "rank %d (%s %s)", r[i].rank,
                 s->cluster->machines[r[i].machine].name,
                 cluster_device(s->cluster, r[i].device, NULL)->id);
        snprintf(slot, sizeof slot, "%zu) what=", i);
        if (shquote_append_raw(b, len, slot) < 0 || shquote_append(b, len, label) < 0 ||
            shquote_append_raw(b, len, " ;;\n") < 0)
            return -1;
    }
    return shquote_append_raw(b, len, "esac\n");
}

char *rankfan_script(const Schedule *s, size_t machine, int all_here, const char *command,
                     Error *err)
{
    Rank *ranks;
    size_t world;
    if (ranks_from_schedule(s, &ranks, &world, err) < 0)
        return NULL;
    const Cluster *c = s->cluster;
    const char *addr = all_here ? "127.0.0.1" : c->machines[ranks[0].machine].host;
    int port = rankfan_master_port(c, s->trial);
    char *b = NULL;
    size_t len = 0, here = 0;
    Rank *mine = malloc(world * sizeof *mine);
    if (!mine)
        goto nomem;
    for (size_t i = 0; i < world; i++)
        if (all_here || ranks[i].machine == machine)
            mine[here++] = ranks[i];
    if (here == 0) {
        error_set(err, "rank fan-out: machine '%s' has no rank in this schedule",
                  machine < c->n_machines ? c->machines[machine].name : "?");
        free(mine);
        free(ranks);
        return NULL;
    }
    char count[32], stop_look[32];
    snprintf(count, sizeof count, "%zu", here);
    snprintf(stop_look, sizeof stop_look, "[ $kn -ge %d ]", STOP_LOOK_TENTHS);
    /* The schedule goes to a file every rank reads; TERM from the launcher's stop removes
     * it on the way out (the ranks get the same TERM). `scan` finds the first rank that
     * failed, in the order the ranks ended ($d/ended, one slot a line, appended as each
     * ends: not the slots' order, since the peers of a rank that crashed mid-step fail a
     * moment later, "Connection closed by peer", and one look can find several ended),
     * `notice` says which (stdout: a log line of the trial, which the launchers
     * read back, rankfan_notice). The TERM of a stop says it too, for a rank that failed
     * before it (not one the TERM itself ended, status 143): a host whose rank was killed
     * (SIGKILL, no word of its own) may be stopped, because another host's rank that lost
     * it ended first, before this script's next look. The TERM reaches the ranks' subshells
     * at once too, and one whose rank had just failed may not have written its status yet:
     * the trap looks until a failed rank is found or every rank has ended, at most
     * STOP_LOOK_TENTHS. Its own TERM, INT and HUP are ignored from then on: a stop sends
     * the group's TERM and the marked processes' one, and a second run of the trap would say
     * the notice twice. While the ranks run, no child of the script's own runs in the
     * foreground, where the stop's TERM could end it: a shell (dash, bash) says "Terminated"
     * on its stderr, the trial's, of a foreground command a signal ended. So the main loop
     * waits for a `sleep 0.1 &` (and `wait` lets the trap run at once), and `scan` takes a
     * status with `read`, not `$(cat ...)`. dash's `wait` says it too of the job it waits for,
     * when it reaps that job before it returns (the TERM ends the sleep and interrupts the
     * wait at once): its stderr alone is /dev/null; the trap runs after it, with the
     * script's. */
    if (shquote_append_raw(&b, &len,
                           "d=$(mktemp -d \"${TMPDIR:-/tmp}/tunedeck-ranks.XXXXXX\") || exit 1\n"
                           "trap 'rm -rf \"$d\"' EXIT\n"
                           "n=") < 0 ||
        shquote_append_raw(&b, &len, count) < 0 || shquote_append_raw(&b, &len, "\nfail=\n") < 0 ||
        append_watch(&b, &len) < 0 ||
        shquote_append_raw(&b, &len,
                           "scan() {\n"
                           "    ended=0\n"
                           "    [ -f \"$d/ended\" ] || return 0\n"
                           "    while read -r i; do\n"
                           "        ended=$((ended + 1)); read -r rc < \"$d/rc.$i\"\n"
                           "        if [ \"$rc\" != 0 ] && [ \"$rc\" != \"$1\" ] && "
                           "[ -z \"$fail\" ]; then fail=$rc; who=$i; fi\n"
                           "    done < \"$d/ended\"\n"
                           "}\n"
                           "notice() {\n") < 0 ||
        append_labels(&b, &len, s, mine, here) < 0 ||
        shquote_append_raw(&b, &len,
                           /* 128+N: killed by signal N (a segfault, the OOM killer) */
                           "sig=\n"
                           "if [ \"$fail\" -gt 128 ] && [ \"$fail\" -lt 160 ] && "
                           "s=$(kill -l $((fail - 128)) 2>/dev/null); then sig=\" (SIG$s)\"; "
                           "fi\n"
                           "echo \"" NOTICE_HEAD "$what exited with status $fail$sig" NOTICE_TAIL
                           "\"\n"
                           "}\n"
                           "stopped() {\n"
                           "    trap '' TERM INT HUP\n"
                           "    termed\n"
                           /* A 143 the main loop's `scan -` read just before is no failure */
                           "    fail=; who=\n"
                           "    while :; do\n"
                           "        scan 143\n"
                           "        [ -n \"$fail\" ] || [ $ended -eq $n ] || ") < 0 ||
        shquote_append_raw(&b, &len, stop_look) < 0 ||
        shquote_append_raw(&b, &len,
                           " && break\n"
                           "        kn=$((kn + 1)); sleep 0.1\n"
                           "    done\n"
                           "    [ -n \"$fail\" ] && notice\n"
                           "    reap\n"
                           "    rm -rf \"$d\"; exit 143\n"
                           "}\n"
                           "trap stopped TERM INT HUP\n"
                           "cat > \"$d/in\"\n"
                           "own\n") < 0)
        goto nomem;
    for (size_t i = 0; i < here; i++)
        if (append_rank(&b, &len, s, &mine[i], world, i, addr, port, command) < 0)
            goto nomem;
    if (shquote_append_raw(&b, &len,
                           "while :; do\n"
                           "    scan -\n"
                           "    [ -n \"$fail\" ] && break\n"
                           "    [ $ended -eq $n ] && exit 0\n"
                           "    sleep 0.1 & wait $! 2> /dev/null\n"
                           "done\n"
                           "notice\n"
                           "trap '' TERM INT HUP\n"
                           "kill -TERM 0\n"
                           "termed\n"
                           "reap\n"
                           "exit \"$fail\"\n") < 0)
        goto nomem;
    free(mine);
    free(ranks);
    return b;
nomem:
    free(b);
    free(mine);
    free(ranks);
    error_set(err, "rank fan-out: out of memory");
    return NULL;
}
