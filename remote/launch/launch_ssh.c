/* The `per-host` and `single` launchers: the trial command runs over SSH on every machine
 * of the schedule (or once on the launch host, or on the pool host the caller names: the
 * slurm launcher's login node), reads the schedule on standard input, and
 * its protocol lines from all hosts are merged by iteration. The remote command runs in a
 * process group of its own (sshd starts each session with setsid); stopping it is a kill
 * of that group, and of every process that carries the part's TUNEDECK_RUN_MARK (a daemon
 * that left the group), over a second channel, so nothing of the trial outlives a stop. A
 * command that ends by itself gets the same stop for what it left running from the shell that
 * wraps it on the host, on the trial's own channel (groupstop.h). What a part's own failure
 * makes of the trial, its status and reason, is launch_ssh_failure.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/model/ranks.h"
#include "remote/launch/launch_ssh_command.h"
#include "remote/launch/launch_ssh_priv.h"
#include "remote/launch/launcher.h"
#include "remote/launch/orphans.h"
#include "remote/launch/rankcause.h"
#include "remote/launch/rankfan.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"

/* STRAY_GRACE_MS: how long a command that exited may keep its output open (a stray
 * descendant holding it) before its process group is stopped and the part counts as ended.
 * KILL_WAIT_MS also bounds such a stop of what a command that ended left running. */
enum { MAX_LINE = 4 << 20, KILL_WAIT_MS = 5000, STRAY_GRACE_MS = 500 };

const char *launch_ssh_machine_name(const SshRun *r, const Part *p)
{
    if (r->where[0])
        return r->where;
    return r->schedule->cluster->machines[p->machine].name;
}

/* A line of a part's stderr (len bytes): the trial log's, and the command's last word on a
 * failure, as groupstop_own_part reads it (not the wrapping shell's note on what the command
 * left, its end line, or what the leftovers print after the note: a "Terminated" of theirs is not
 * the command's failure; what comes before the note or the end line on its line is the
 * command's own last line, left with no newline). */
static void stderr_line(SshRun *r, Part *p, const char *name, const char *line, size_t len)
{
    int ended;
    long own = groupstop_own_part(line, len, &p->left_noted, &ended);
    if (own >= 0)
        snprintf(p->last_stderr, sizeof p->last_stderr, "%.*s", (int)own, line);
    if (!ended) {
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, name, STREAM_STDERR, line);
        return;
    }
    /* the wrapping shell's end line: the log keeps what the command printed before it on its
     * line (they share the stream), not the end line's words */
    p->end_stopped = 1;
    size_t el = strlen(GROUPSTOP_ENDED);
    char *mine = len > el ? strndup(line, len - el) : NULL;
    if (mine && r->cfg.on_log)
        r->cfg.on_log(r->cfg.userdata, name, STREAM_STDERR, mine);
    free(mine);
}

static void handle_line(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    SshRun *r = ud;
    Part *p = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (r->parts[i].x == x)
            p = &r->parts[i];
    if (!p)
        return;
    const char *name = launch_ssh_machine_name(r, p);
    const char *given = line;
    if (r->cfg.on_line && !(line = r->cfg.on_line(r->cfg.userdata, stream, line)))
        return;
    /* a NUL in the line counts: the protocol reader refuses such a line, not half of it */
    size_t len = line == given ? rexec_line_len(x) : strlen(line);
    if (stream == STREAM_STDERR) {
        if (p->pgid == 0 &&
            strncmp(line, LAUNCH_SSH_PGID_MARK, strlen(LAUNCH_SSH_PGID_MARK)) == 0) {
            long pgid = strtol(line + strlen(LAUNCH_SSH_PGID_MARK), NULL, 10);
            if (pgid <= 1) /* `kill -- -1` would reach every process of the user */
                return;
            p->pgid = pgid;
            if (r->cfg.on_proc)
                r->cfg.on_proc(r->cfg.userdata, r->schedule->trial, name, p->pgid, p->mark);
            return;
        }
        stderr_line(r, p, name, line, len);
        return;
    }
    TrialEvent ev;
    Error perr;
    if (cut || protocol_parse_line_n(line, len, &ev, &perr) < 0) {
        if (!r->protocol_error[0])
            snprintf(r->protocol_error, sizeof r->protocol_error, "%s: %s", name,
                     cut ? "a line longer than 4 MiB" : perr.msg);
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, name, stream, line);
        return;
    }
    if (r->stop_wanted && launcher_past_stop(r->stop_iter, &ev)) {
        trial_event_clear(&ev);
        return;
    }
    if (ev.kind == EVENT_ERROR)
        rankcause_event(r->causes, ev.text);
    if (ev.kind == EVENT_LOG) {
        if (!p->first_failed[0] && rankfan_notice(line, p->first_failed, sizeof p->first_failed))
            p->failed_seq = ++r->failures_seen;
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, name, stream, line);
    } else if (trial_accumulator_add(r->acc, &ev, &perr) < 0) {
        if (!r->protocol_error[0])
            snprintf(r->protocol_error, sizeof r->protocol_error, "%s: %s", name, perr.msg);
    } else {
        if (launcher_iteration_stop(&r->cfg, &ev) && !r->stop_wanted) {
            r->stop_wanted = 1;
            r->stop_iter = ev.iter;
        }
    }
    trial_event_clear(&ev);
}

/* The trial's world size, for what its ranks said; 0 (nothing kept) for a schedule whose
 * devices have no inputs. */
static size_t world_of(const Schedule *s)
{
    Rank *ranks;
    size_t world = 0;
    Error ignored;
    if (ranks_from_schedule(s, &ranks, &world, &ignored) < 0)
        return 0;
    free(ranks);
    return world;
}

static void *start_common(const LaunchConfig *cfg, const Schedule *s, int single, Error *err)
{
    const char *lname = single ? "single" : "per-host";
    if (!cfg->command || !cfg->command[0]) {
        error_set(err, "%s launcher: expected a trial command (--trial-cmd)", lname);
        return NULL;
    }
    if (!cfg->remote) {
        error_set(err, "%s launcher: expected a host pool (a --cluster inventory)", lname);
        return NULL;
    }
    const Cluster *c = s->cluster;
    SshRun *r = calloc(1, sizeof *r);
    size_t room = c->n_machines ? c->n_machines : 1;
    if (!r || !(r->parts = calloc(room, sizeof *r->parts)) ||
        !(r->failures = calloc(room, sizeof *r->failures))) {
        if (r)
            free(r->parts);
        free(r);
        error_set(err, "%s launcher: out of memory", lname);
        return NULL;
    }
    r->cfg = *cfg;
    r->schedule = s;
    r->pool = cfg->remote;
    if (single && cfg->remote_host) {
        /* a host of the pool that is no machine of the schedule (the slurm launcher's
         * login node): its command speaks for every machine */
        long h = hostpool_find(r->pool, cfg->remote_host);
        if (h < 0) {
            error_set(err, "single launcher: no host '%s' in the pool", cfg->remote_host);
            goto fail;
        }
        snprintf(r->where, sizeof r->where, "%s", cfg->remote_host);
        r->parts[r->n].machine = 0;
        r->parts[r->n++].host = (size_t)h;
    } else if (single) {
        long m = cluster_launch_machine(c);
        if (m < 0 || c->n_machines == 0) {
            error_set(err, "single launcher: trial.launch_host: no machine named '%s'",
                      c->trial.launch_host);
            goto fail;
        }
        r->parts[r->n++].machine = (size_t)m;
    } else {
        /* per-device ranks run only where a device has inputs; a PS-only machine has none */
        int ranks = rankfan_wanted(s);
        for (size_t m = 0; m < c->n_machines; m++)
            if (ranks ? s->worker[m] && schedule_machine_inputs(s, m) > 0
                      : s->worker[m] || s->ps[m])
                r->parts[r->n++].machine = m;
    }
    for (size_t i = 0; i < r->n && !r->where[0]; i++) {
        long h = hostpool_find(r->pool, c->machines[r->parts[i].machine].name);
        if (h < 0) {
            error_set(err, "%s launcher: machine '%s' is not in the host pool", lname,
                      c->machines[r->parts[i].machine].name);
            goto fail;
        }
        r->parts[i].host = (size_t)h;
    }
    for (size_t i = 0; i < r->n; i++)
        r->parts[i].run = r;
    for (size_t i = 0; i < r->n; i++)
        if (orphans_mark_new(r->parts[i].mark, err) < 0) {
            error_prefix(err, "%s launcher", lname);
            goto fail;
        }
    r->acc = trial_accumulator_new(s);
    /* the events' and notices' hosts are the parts' machine names (TUNEDECK_MACHINE) */
    const char **names = malloc((r->n ? r->n : 1) * sizeof *names);
    for (size_t i = 0; names && i < r->n; i++)
        names[i] = launch_ssh_machine_name(r, &r->parts[i]);
    r->causes = names ? rankcause_new(world_of(s), names, r->n) : NULL;
    free(names);
    if (!r->causes) {
        error_set(err, "%s launcher: out of memory", lname);
        goto fail;
    }
    size_t input_len = 0;
    char *input = launcher_trial_input(s, &input_len, err);
    if (!input) {
        error_prefix(err, "%s launcher", lname);
        goto fail;
    }
    ExecOptions eo = {.on_line = handle_line, .userdata = r, .max_line = MAX_LINE};
    for (size_t i = 0; i < r->n; i++) {
        /* single: the command speaks for every machine, as with the local launcher. */
        char *fan = NULL;
        if (!single && rankfan_wanted(s) &&
            !(fan = rankfan_script(s, r->parts[i].machine, 0, cfg->command, err))) {
            launcher_input_free(input, input_len);
            goto fail;
        }
        char *cmd = launch_ssh_command_build(fan ? fan : cfg->command,
                                             single ? "" : launch_ssh_machine_name(r, &r->parts[i]),
                                             s->trial, r->parts[i].mark);
        free(fan);
        r->parts[i].x =
            cmd ? hostpool_exec(r->pool, r->parts[i].host, cmd, input, input_len, &eo, err) : NULL;
        if (!cmd)
            error_set(err, "%s launcher: out of memory", lname);
        free(cmd);
        if (!r->parts[i].x) {
            launcher_input_free(input, input_len);
            goto fail;
        }
    }
    launcher_input_free(input, input_len);
    double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600;
    r->deadline_ms = clock_now_ms() + (int64_t)(timeout_s * 1000);
    return r;
fail:
    for (size_t i = 0; i < r->n; i++)
        rexec_free(r->parts[i].x);
    trial_accumulator_free(r->acc);
    rankcause_free(r->causes);
    free(r->failures);
    free(r->parts);
    free(r);
    return NULL;
}

static void *start_per_host(const LaunchConfig *cfg, const Schedule *s, Error *err)
{
    return start_common(cfg, s, 0, err);
}

static void *start_single(const LaunchConfig *cfg, const Schedule *s, Error *err)
{
    return start_common(cfg, s, 1, err);
}

/* A stop's lines: the note on what a command that ended left running goes to the log. */
static void killer_line(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    const Part *p = ud;
    SshRun *r = p->run;
    (void)x;
    if (stream == STREAM_STDOUT && !cut && r->cfg.on_log &&
        strncmp(line, GROUPSTOP_NOTE, strlen(GROUPSTOP_NOTE)) == 0)
        r->cfg.on_log(r->cfg.userdata, launch_ssh_machine_name(r, p), STREAM_STDERR, line);
}

static void start_killer(SshRun *r, Part *p, int ended, int64_t now_ms)
{
    char *cmd = groupstop_command(p->pgid, p->mark, ended);
    if (!cmd)
        return; /* out of memory: the stop deadline gives up on this part */
    ExecOptions eo = {.on_line = killer_line, .userdata = p, .max_line = 4096};
    p->killer = hostpool_exec_now(r->pool, p->host, cmd, NULL, 0, &eo, NULL);
    p->ended_stop = ended;
    p->killer_until_ms = now_ms + KILL_WAIT_MS;
    free(cmd);
}

/* The command ended by itself (its exit status or signal came; the channel may still be open,
 * a stray holding its output) and what it left running, in its group or marked, may run on:
 * it is stopped over a channel of its own, and the trial's log names it. Its wrapping shell
 * stops it on the trial's own channel and says so: a part whose channel closed after that
 * asks nothing more. A part whose connection failed is not asked (the orphan stop before its
 * host's next trial is, once the host answers). */
static void stop_ended_part(SshRun *r, Part *p, int64_t now_ms)
{
    if (p->killer || p->ended_stop || !p->x || !p->pgid)
        return;
    if (rexec_done(p->x) && p->end_stopped)
        return;
    if (rexec_done(p->x) && rexec_outcome(p->x) != EXEC_EXITED &&
        rexec_outcome(p->x) != EXEC_SIGNALED)
        return;
    start_killer(r, p, 1, now_ms);
}

static void kill_part(SshRun *r, Part *p)
{
    if (p->killer || !p->x || rexec_done(p->x))
        return;
    if (!p->pgid && !rexec_sent(p->x)) {
        /* Never sent to its host (not connected yet): nothing runs there to kill or wait
         * for, and closed now it never will. */
        rexec_close(p->x);
        return;
    }
    if (!p->pgid) {
        p->stop_wanted = 1; /* killed as soon as its group is known */
        return;
    }
    start_killer(r, p, 0, clock_now_ms());
}

static void stop_all(SshRun *r, int64_t now_ms)
{
    if (!r->stopping) {
        r->stopping = 1;
        r->stop_deadline_ms = now_ms + KILL_WAIT_MS;
    }
    for (size_t i = 0; i < r->n; i++)
        kill_part(r, &r->parts[i]);
}

static size_t pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    SshRun *r = run;
    size_t n = hostpool_pollfds(r->pool, fds, cap, deadline_ms);
    int64_t next = r->stopping ? r->stop_deadline_ms : r->deadline_ms;
    for (size_t i = 0; i < r->n; i++) {
        const Part *p = &r->parts[i];
        int64_t exited = p->x && !p->killer && !rexec_done(p->x) ? rexec_exited_ms(p->x) : 0;
        if (exited && exited + STRAY_GRACE_MS < next)
            next = exited + STRAY_GRACE_MS;
        if (p->ended_stop && p->killer && !rexec_done(p->killer) && p->killer_until_ms < next)
            next = p->killer_until_ms;
    }
    if (*deadline_ms < 0 || next < *deadline_ms)
        *deadline_ms = next;
    return n;
}

/* A group we never saw end, and why (returns 1, *cause set). Only a stop whose command ran to
 * its end, a wrapping shell that said its stop of what the command left was over, or a
 * command that exited 0 (a trial that finished) where no stop of what it left was tried, is
 * known to leave nothing: a dropped connection kills nothing, and the exit status or signal
 * that arrives as sshd's session dies, or a command that failed, says nothing of the
 * processes its group started in the background. A drop is named first: a stop over the
 * dropped connection went unanswered because of it. */
static int part_lost(const Part *p, ProcLostCause *cause)
{
    if (!p->pgid || (p->killer && rexec_outcome(p->killer) == EXEC_EXITED))
        return 0;
    if (p->end_stopped && !p->ended_stop) /* its wrapping shell stopped what it left */
        return 0;
    ExecOutcome out = rexec_outcome(p->x);
    if (out == EXEC_SSH_FAILED)
        *cause = PROC_LOST_DROPPED;
    else if (p->ended_stop) /* the stop of what it left went unanswered */
        *cause = PROC_LOST_STOP_UNANSWERED;
    else if (out == EXEC_EXITED && rexec_exit_status(p->x) == 0)
        return 0;
    else if (p->killer || out == EXEC_CLOSED) /* its stop, given up at the stop's deadline */
        *cause = PROC_LOST_STOP_UNANSWERED;
    else
        *cause = PROC_LOST_FAILED;
    return 1;
}

static void finish(SshRun *r)
{
    ProcLostCause cause;
    for (size_t i = 0; i < r->n && r->cfg.on_proc_lost; i++)
        if (part_lost(&r->parts[i], &cause))
            r->cfg.on_proc_lost(r->cfg.userdata, r->schedule->trial,
                                launch_ssh_machine_name(r, &r->parts[i]), r->parts[i].pgid,
                                r->parts[i].mark, cause);
    Observation *o = trial_accumulator_finish(r->acc);
    if (!launcher_end_by_us(o, r->cancelled, r->timed_out, r->cfg.timeout_s)) {
        if (r->failure_status != TRIAL_OK)
            launch_ssh_failure_write(r, o);
        else
            launcher_note_bad_line(o, r->protocol_error);
    }
    r->result = o;
}

static void step(void *run, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    SshRun *r = run;
    hostpool_step(r->pool, fds, n, now_ms);
    if (r->result)
        return;
    if (r->stop_wanted && !r->cancelled) {
        r->cancelled = 1;
        stop_all(r, now_ms);
    }
    int running = 0, killers = 0;
    for (size_t i = 0; i < r->n; i++) {
        Part *p = &r->parts[i];
        if (p->stop_wanted && p->pgid)
            kill_part(r, p);
        /* The command exited, but a stray descendant holds its output open: the part is
         * over; stop its group so the channel closes with the command's own status. */
        int64_t exited = rexec_done(p->x) ? 0 : rexec_exited_ms(p->x);
        if (exited && !p->killer && now_ms >= exited + STRAY_GRACE_MS && p->pgid)
            stop_ended_part(r, p, now_ms);
        if (!rexec_done(p->x)) {
            running++;
        } else {
            /* The command ended by itself: a daemon it left (outside its group: nothing of
             * the channel holds it) is stopped before the trial counts as over, as the local
             * keeper does: by the wrapping shell (end_stopped), else over a channel. */
            stop_ended_part(r, p, now_ms);
            if (!p->killer || p->ended_stop)
                launch_ssh_failure_note(r, p);
        }
        if (p->ended_stop && p->killer && !rexec_done(p->killer) && now_ms >= p->killer_until_ms)
            rexec_close(p->killer); /* unanswered: the part is lost (part_lost) */
        killers += p->killer && !rexec_done(p->killer);
    }
    if (r->failure_status != TRIAL_OK && !r->stopping && running)
        stop_all(r, now_ms);
    if (!r->stopping && now_ms >= r->deadline_ms && running) {
        r->timed_out = 1;
        stop_all(r, now_ms);
    }
    if (r->stopping && now_ms >= r->stop_deadline_ms) {
        /* What a dead connection could not kill, we can no longer see: give up waiting. */
        for (size_t i = 0; i < r->n; i++) {
            rexec_close(r->parts[i].x);
            if (r->parts[i].killer)
                rexec_close(r->parts[i].killer);
        }
        running = killers = 0;
    }
    if (!running && !killers)
        finish(r);
}

static int finished(const void *run)
{
    return ((const SshRun *)run)->result != NULL;
}

static Observation *result(void *run)
{
    SshRun *r = run;
    Observation *o = r->result;
    r->result = NULL;
    return o;
}

static void cancel(void *run)
{
    SshRun *r = run;
    if (r->result)
        return;
    r->cancelled = 1;
    stop_all(r, clock_now_ms());
}

static void run_free(void *run)
{
    SshRun *r = run;
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        rexec_free(r->parts[i].x);
        rexec_free(r->parts[i].killer);
    }
    trial_accumulator_free(r->acc);
    rankcause_free(r->causes);
    observation_free(r->result);
    free(r->failures);
    free(r->parts);
    free(r);
}

const LauncherKind LAUNCHER_PER_HOST = {"per-host", start_per_host, pollfds, step,
                                        finished,   result,         cancel,  run_free};
const LauncherKind LAUNCHER_SINGLE = {"single", start_single, pollfds, step,
                                      finished, result,       cancel,  run_free};
