/* Stopping the remote processes of interrupted trials (remote/launch/orphans.h); which groups a
 * journal names is orphans_collect.c. */
#include "remote/launch/orphans.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/secret.h"
#include "core/base/evloop.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/rexec.h"

cJSON *orphans_proc_json(int trial, const char *machine, long pgid, const char *mark)
{
    /* whole or nothing: a line without its machine or pgid names no group to a resume */
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddStringToObject(j, "event", "remote_process") ||
        !cJSON_AddNumberToObject(j, "trial", trial) ||
        !cJSON_AddStringToObject(j, "machine", machine) ||
        !cJSON_AddNumberToObject(j, "pgid", (double)pgid) ||
        (mark && mark[0] && !cJSON_AddStringToObject(j, "mark", mark))) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

int orphans_mark_new(char *mark, Error *err)
{
    unsigned char bytes[GROUPSTOP_MARK_CHARS / 2];
    if (secret_random(bytes, sizeof bytes, err) < 0)
        return error_prefix(err, "a run's mark");
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(mark + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

void orphans_clear(OrphanList *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* One command per host: for each "PGID:TRIAL:MARK" triple, stops group PGID if one of its
 * processes carries TUNEDECK_RUN_MARK=MARK (TUNEDECK_TRIAL=TRIAL when MARK is "-": a group
 * journaled before marks), and every process of the user that carries the mark wherever it
 * is (`marked`, groupstop.h: a daemon that left the group with setsid, or what is left of a
 * group that is gone) (TERM, KILL after 2 s): whether the group is the launch's is read off
 * that one look (a process it lists in group PGID; `carrying` for the trial's number), never
 * from each member's environ again. Prints "PGID stopped", "PGID gone" (nothing of it), "PGID
 * refused" (not ours to signal) or "PGID survived" (a process other than a zombie still there
 * 1 s after KILL: one stuck in the kernel, a hung GPU driver, say). Only
 * numbers and hex marks (groupstop_mark_ok) are put into the command: nothing else from the
 * journal reaches the shell as text. */
char *orphans_stop_command(const OrphanList *l, const char *machine)
{
    static const char head[] = GROUPSTOP_LIVE_SH "; " GROUPSTOP_MARKED_SH "; " GROUPSTOP_UP_SH
                                                 "; " GROUPSTOP_OURS_SH "; for gt in";
    /* left: the group (while it is the launch's) or a marked process still runs; `marked` is
     * asked again only when what was seen is gone (a process forked on its way out). still:
     * the group is still the launch's (GROUPSTOP_OURS_SH, on a fresh look for its mark, or for
     * TUNEDECK_TRIAL=t where it has none): its TERM may have ended it, and its number be
     * another's by the KILL 2 s later; the wait is not the foreign group's either. The URG
     * before the group's TERM, only to a group found to be the launch's, tells its wrapping
     * shell, if it still runs, that this is a stop (groupstop.h): it leaves the stop to this one.
     */
    static const char body[] =
        "; do g=${gt%%:*}; m=${gt##*:}; t=${gt#*:}; t=${t%%:*}; "
        "if [ \"$m\" = - ]; then carrying \"TUNEDECK_TRIAL=$t\"; else marked \"$m\"; fi; "
        "found=; for q in $k; do s=; read -r s 2>/dev/null </proc/$q/stat; s=${s##*) }; "
        "set -- $s; [ \"$3\" = \"$g\" ] && { found=1; break; }; done; [ \"$m\" = - ] && k=; "
        "if [ -z \"$found$k\" ]; then echo \"$g gone\"; continue; fi; "
        "ok=; [ -n \"$found\" ] && kill -URG $g 2>/dev/null; "
        "if [ -n \"$found\" ] && kill -TERM -$g 2>/dev/null; then ok=1; fi; "
        "for q in $k; do kill -TERM $q 2>/dev/null && ok=1; done; "
        "if [ -z \"$ok\" ]; then if { [ -n \"$found\" ] && live $g; } || "
        "up $k; then echo \"$g refused\"; else echo \"$g gone\"; fi; continue; fi; "
        "still() { [ -n \"$found\" ] || return 1; if [ \"$m\" = - ]; then "
        "carrying \"TUNEDECK_TRIAL=$t\"; ours $g $k; r=$?; k=; return $r; fi; marked \"$m\"; "
        "ours $g $k; }; "
        "left() { { still && live $g; } || up $k || marked \"$m\"; }; "
        "n=0; while left; do n=$((n+1)); if [ $n -ge 20 ]; then "
        "still && kill -KILL -$g 2>/dev/null; "
        "for q in $k; do kill -KILL $q 2>/dev/null; done; fi; "
        "if [ $n -ge 30 ]; then break; fi; sleep 0.1; done; "
        "if left; then echo \"$g survived\"; else echo \"$g stopped\"; fi; "
        "done";
    size_t cap = sizeof head + sizeof body + l->n * (48 + GROUPSTOP_MARK_CHARS), len;
    char *cmd = malloc(cap);
    if (!cmd)
        return NULL;
    /* live G, as a stop asks it (groupstop.h): a zombie left in a stopped group must not read
     * as "alive after SIGKILL". The shell text holds '%': put in as text, never as a format. */
    memcpy(cmd, head, sizeof head);
    len = sizeof head - 1;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].machine, machine) == 0)
            len += (size_t)snprintf(cmd + len, cap - len, " %ld:%d:%s", l->items[i].pgid,
                                    l->items[i].trial,
                                    groupstop_mark_ok(l->items[i].mark) ? l->items[i].mark : "-");
    memcpy(cmd + len, body, sizeof body);
    return groupstop_under_sh(cmd); /* its `$k` split as sh splits it, under a zsh login too */
}

typedef struct {
    OrphanList *l;
    const char *machine;
    RemoteExec *x;
    long host;   /* in the pool; -1 none */
    int retried; /* asked a second time (orphans_stop_retry_when_back) */
    int kept;    /* its host reconnected on the pool's back-off, for that second ask */
} Stop;

static void on_line(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    Stop *s = ud;
    (void)x;
    char *end;
    long g = strtol(line, &end, 10);
    const char *result = !strcmp(end, " gone")      ? "gone"
                         : !strcmp(end, " stopped") ? "stopped"
                         : !strcmp(end, " refused") ? "not stopped: kill not permitted"
                         : !strcmp(end, " survived")
                             ? "not stopped: alive 1 s after SIGKILL (stuck in the kernel?)"
                             : NULL;
    if (stream != STREAM_STDOUT || cut || !result)
        return;
    for (size_t i = 0; i < s->l->n; i++) {
        Orphan *o = &s->l->items[i];
        if (o->pgid != g || strcmp(o->machine, s->machine) != 0)
            continue;
        /* A line may come for a group that has its result already: from the first ask, when
         * this is the second (retry_pending: the first's connection dropped after its line,
         * before its exit status), or from this ask for a group listed twice (a line names the
         * group, not its mark). The later line is the newer look and replaces the earlier
         * ("survived" then "gone": it ended since), but a "gone" never replaces a "stopped":
         * the earlier look stopped the group the later found gone, which "stopped" says as
         * well. No line of the first ask comes once the second is sent (retry_pending). */
        if (strcmp(result, "gone") == 0 && strcmp(o->result, "stopped") == 0)
            continue;
        snprintf(o->result, sizeof o->result, "%s", result);
    }
}

struct OrphanStop {
    OrphanList *l;
    HostPool *pool;
    Stop *stops;
    size_t n;
    double timeout_s;
    int64_t deadline_ms;
    int retry; /* orphans_stop_retry_when_back */
};

/* Each "PGID RESULT" line of a host's stop command goes to on_line with its Stop. */
static ExecOptions stop_options(Stop *s)
{
    return (ExecOptions){.on_line = on_line, .userdata = s, .max_line = 4096};
}

/* The host did not answer: the command never ran there (SSH failed) or said nothing in time. */
static int stop_silent(const RemoteExec *x)
{
    return x && (!rexec_done(x) || rexec_outcome(x) == EXEC_SSH_FAILED);
}

OrphanStop *orphans_stop_begin(HostPool *pool, OrphanList *l, double timeout_s)
{
    OrphanStop *st = calloc(1, sizeof *st);
    if (!st || !(st->stops = calloc(l->n ? l->n : 1, sizeof *st->stops))) {
        free(st);
        return NULL;
    }
    st->l = l;
    st->pool = pool;
    st->timeout_s = timeout_s;
    st->deadline_ms = clock_now_ms() + (int64_t)(timeout_s * 1000);
    for (size_t i = 0; i < l->n; i++) {
        l->items[i].result[0] = 0;
        l->items[i].answered = 0;
        l->items[i].silent = 0;
    }
    for (size_t i = 0; i < l->n; i++) {
        Orphan *o = &l->items[i];
        int seen = 0;
        for (size_t k = 0; k < st->n; k++)
            seen |= strcmp(st->stops[k].machine, o->machine) == 0;
        if (seen)
            continue; /* one command per host */
        Stop *s = &st->stops[st->n++];
        s->l = l;
        s->machine = o->machine;
        long h = hostpool_find(pool, o->machine);
        s->host = h;
        char *cmd = h < 0 ? NULL : orphans_stop_command(l, o->machine);
        ExecOptions eo = stop_options(s);
        Error err;
        if (h < 0)
            error_set(&err, "no machine '%s' in the cluster", o->machine);
        else if (!cmd)
            error_set(&err, "out of memory");
        else {
            /* One attempt now, whatever the host's back-off, and a refusal at once ends it:
             * the stop's time limit counts one, and at the session's end none follows. */
            s->x = hostpool_exec_now(pool, (size_t)h, cmd, NULL, 0, &eo, &err);
        }
        free(cmd);
        if (!s->x)
            for (size_t k = i; k < l->n; k++)
                if (strcmp(l->items[k].machine, o->machine) == 0)
                    snprintf(l->items[k].result, sizeof l->items[k].result, "not stopped: %s",
                             err.msg);
    }
    return st;
}

void orphans_stop_retry_when_back(OrphanStop *st)
{
    st->retry = 1;
}

/* Whether a group on the stop's host may still run: one its trial's stop did not see end. */
static int may_run_there(const OrphanStop *st, const Stop *s)
{
    for (size_t i = 0; i < st->l->n; i++)
        if (!st->l->items[i].seen_end && strcmp(st->l->items[i].machine, s->machine) == 0)
            return 1;
    return 0;
}

/* A host whose first ask found it down: 1 while a second ask may still come before the
 * deadline (the pool connects it again), sent here as soon as it is connected. */
static int retry_pending(OrphanStop *st, Stop *s)
{
    if (!st->retry || s->retried || s->host < 0 || !s->x || !rexec_done(s->x) ||
        rexec_outcome(s->x) != EXEC_SSH_FAILED || !may_run_there(st, s))
        return 0;
    HostInfo info;
    hostpool_info(st->pool, (size_t)s->host, &info);
    if (info.state == HOST_READY) {
        char *cmd = orphans_stop_command(st->l, s->machine);
        ExecOptions eo = stop_options(s);
        Error err;
        RemoteExec *again =
            cmd ? hostpool_exec_now(st->pool, (size_t)s->host, cmd, NULL, 0, &eo, &err) : NULL;
        free(cmd);
        s->retried = 1;
        if (!again)
            return 0; /* out of memory: the first ask's failure stands */
        /* The first ask is done: each line it had was read as it ended (rexec's finish), its
         * results kept (on_line: a later "gone" keeps a "stopped"); freed, it says no more. Its
         * command may still run on the host, stopping what the second ask then finds ending
         * or gone. A first ask that stopped a group but lost its line before the drop leaves
         * the second only "gone" to say: nothing that came back tells them apart. */
        rexec_free(s->x);
        s->x = again;
        return !rexec_done(again);
    }
    if (!s->kept) {
        /* The pool reconnects it on its back-off from now on (its timers wake the caller's
         * loop); nothing is sent before it is connected. */
        s->kept = 1;
        hostpool_connect(st->pool, (size_t)s->host, 1);
        hostpool_info(st->pool, (size_t)s->host, &info);
        if (info.state == HOST_READY)
            return retry_pending(st, s);
    }
    /* Connecting now, or a reconnect planned before the deadline; none before it: the first
     * ask's failure stands. */
    if (info.state == HOST_DOWN || info.state == HOST_IDLE)
        return info.retry_at_ms > 0 && info.retry_at_ms < st->deadline_ms;
    return 1;
}

int orphans_stop_answered(OrphanStop *st)
{
    int answered = 1;
    for (size_t i = 0; i < st->n; i++) {
        Stop *s = &st->stops[i];
        if ((s->x && !rexec_done(s->x)) || retry_pending(st, s))
            answered = 0;
    }
    return answered;
}

int orphans_stop_settled(OrphanStop *st, int64_t now_ms)
{
    return now_ms >= st->deadline_ms || orphans_stop_answered(st);
}

int64_t orphans_stop_deadline(const OrphanStop *st)
{
    return st->deadline_ms;
}

static int stop_answered(void *ctx)
{
    return orphans_stop_answered(ctx);
}

void orphans_stop_wait(OrphanStop *st)
{
    EvLoop *loop = evloop_new();
    if (loop && hostpool_attach(st->pool, loop) > 0)
        evloop_run(loop, stop_answered, st, st->deadline_ms);
    evloop_free(loop);
}

int orphans_stop_end(OrphanStop *st)
{
    if (!st)
        return 0;
    OrphanList *l = st->l;
    for (size_t i = 0; i < st->n; i++) {
        RemoteExec *x = st->stops[i].x;
        int answered = x && rexec_done(x) && (rexec_outcome(x) == EXEC_EXITED ||
                                              rexec_outcome(x) == EXEC_SIGNALED);
        for (size_t k = 0; x && k < l->n; k++) {
            Orphan *o = &l->items[k];
            if (strcmp(o->machine, st->stops[i].machine) != 0)
                continue;
            o->answered = answered;
            if (o->result[0])
                continue; /* its line came: the host answered for it */
            o->silent = stop_silent(x);
            if (!rexec_done(x))
                snprintf(o->result, sizeof o->result, "not stopped: no answer within %.0f s",
                         st->timeout_s);
            else if (rexec_outcome(x) == EXEC_SSH_FAILED)
                snprintf(o->result, sizeof o->result, "not stopped: %s", rexec_error(x));
            else
                snprintf(o->result, sizeof o->result, "not stopped: the stop command failed");
        }
        rexec_free(x);
    }
    free(st->stops);
    free(st);
    int stopped = 0;
    for (size_t i = 0; i < l->n; i++)
        stopped += strcmp(l->items[i].result, "stopped") == 0;
    return stopped;
}

int orphans_stop(HostPool *pool, OrphanList *l, double timeout_s)
{
    if (l->n == 0)
        return 0;
    OrphanStop *st = orphans_stop_begin(pool, l, timeout_s);
    if (!st)
        return 0;
    orphans_stop_wait(st);
    return orphans_stop_end(st);
}

int orphans_add(OrphanList *l, int trial, const char *machine, long pgid, const char *mark)
{
    Orphan *grown = realloc(l->items, (l->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    l->items = grown;
    Orphan *o = &l->items[l->n++];
    memset(o, 0, sizeof *o);
    o->trial = trial;
    o->pgid = pgid;
    snprintf(o->machine, sizeof o->machine, "%s", machine);
    if (groupstop_mark_ok(mark))
        snprintf(o->mark, sizeof o->mark, "%s", mark);
    return 0;
}

void orphans_mark_seen_end(OrphanList *l, const OrphanList *lost)
{
    for (size_t i = 0; i < l->n; i++) {
        Orphan *o = &l->items[i];
        o->seen_end = 1;
        for (size_t k = 0; k < lost->n; k++)
            if (lost->items[k].trial == o->trial && lost->items[k].pgid == o->pgid &&
                strcmp(lost->items[k].machine, o->machine) == 0)
                o->seen_end = 0;
    }
}

int orphans_take(OrphanList *from, int trial, const char *machine, OrphanList *to)
{
    size_t n = 0;
    for (size_t i = 0; i < from->n; i++)
        n += from->items[i].trial < trial && strcmp(from->items[i].machine, machine) == 0;
    if (n == 0)
        return 0;
    Orphan *grown = realloc(to->items, (to->n + n) * sizeof *grown);
    if (!grown)
        return -1;
    to->items = grown;
    size_t kept = 0;
    for (size_t i = 0; i < from->n; i++) {
        const Orphan *o = &from->items[i];
        if (o->trial < trial && strcmp(o->machine, machine) == 0)
            to->items[to->n++] = *o;
        else
            from->items[kept++] = *o;
    }
    from->n = kept;
    return 0;
}

int orphans_still_running(const Orphan *o)
{
    return o->answered && strcmp(o->result, "stopped") != 0 && strcmp(o->result, "gone") != 0;
}
