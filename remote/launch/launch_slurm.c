/* The `slurm` launcher: each trial is one `srun` step in the session's allocation
 * (LaunchConfig.slurm_job, made by remote/slurm/slurm_alloc), on the machines the schedule
 * uses (machine names are Slurm node names), one task per node with that node's GPUs (a
 * component of one heterogeneous step per GPU count when the nodes differ). The
 * srun client runs here as the local launcher's command, or, when the inventory names a
 * login node (LaunchConfig.remote), on that node as the single launcher's command over the
 * session's SSH connection; either way the schedule reaches the tasks
 * on its standard input (--input=all: every task reads it, as protocol v1 says) and their
 * protocol lines come back merged on its standard output, each with its task's number
 * (--label: srunlabel.h), so a failed trial's reason is the words of the task srun names as
 * failed, whatever the others said meanwhile. Each task learns its machine from
 * SLURMD_NODENAME and reports the step id, so a cancel is `scancel JOB.STEP`. Slurm enforces
 * the step's time limit itself; a step it kills (time limit, node failure) is a failed trial
 * with Slurm's own words as the reason. Timings are the protocol's, never Slurm's. */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "remote/launch/launch_slurm.h"
#include "remote/launch/launch_slurm_priv.h"
#include "remote/launch/srunlabel.h"
#include "remote/launch/srunwords.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"

extern const LauncherKind LAUNCHER_LOCAL;
extern const LauncherKind LAUNCHER_SINGLE;

/* Slurm checks time limits about every 30 s and then waits KillWait: past this much after
 * the step's own limit, tunedeck stops it itself (the backstop: the trial times out).
 * SPARE_S: the inner run's own deadline comes that much later, never reached unless its stop
 * does not end it. SCANCEL_WAIT_MS: how long a trial's end waits for the login node's
 * scancel to answer (a controller that is away keeps scancel retrying there; it goes on
 * without us). */
enum { BACKSTOP_S = 120, SPARE_S = 60, SCANCEL_WAIT_MS = 10000 };
/* A joined task line is given out at this length, as the inner launchers cut theirs. */
enum { MAX_LINE = 4 << 20 };

typedef struct {
    const LauncherKind *inner; /* local (srun here) or single (srun on the login node) */
    void *run;                 /* the inner launcher's run */
    char *command;
    LaunchConfig cfg; /* the caller's: its log sink, the login node's session */
    char steps[256];  /* "JOB.STEP ..." as each step's first task reported it */
    int trial;        /* the schedule's (the journal's number): on_steps_left says it */
    SrunLines *lines;     /* srun --label's lines, read back per task */
    long line_task;       /* the task of the line being read (on_line); -1: srun's own */
    SrunWords *words;     /* what the step's lines say of why it failed */
    int cancelled;
    int ended;           /* its result was taken: nothing of it runs */
    size_t steps_sent;   /* how much of steps was cancelled (here: fire and forget) */
    RemoteExec *scancel; /* on the login node: waited for, up to scancel_until_ms */
    size_t scancel_from, scancel_to; /* the slice of steps it cancels; to == from: settled */
    char unconfirmed[256]; /* steps of login node scancels that did not answer exit 0 */
    char unanswered[256];  /* of those, the steps of scancels with no answer at all */
    int64_t scancel_until_ms;
    int64_t backstop_ms; /* past it, the steps are cancelled whatever srun does */
    int backstop_fired;  /* it passed with srun running: a deadline no more; timed out */
    double timeout_s;    /* the trial's, as the caller gave it (for the timeout's reason) */
    double limit_min;    /* the step's --time */
} SlurmRun;

double launch_slurm_limit_min(double timeout_s)
{
    /* Slurm's --time=0 is no limit at all: a timeout under a minute is a minute */
    double min = ceil(timeout_s / 60);
    return min < 1 ? 1 : min;
}

size_t launch_slurm_step_mark(const char *line, const char *job)
{
    /* The task's mark shares its stream with the trial command's own stderr, which may
     * print anything: only a step of this trial's own allocation ("JOB.STEP", both numbers,
     * nothing after) is taken, so no line of a trial can make a stop `scancel` another job,
     * a whole allocation, or another user's step (an operator may be a Slurm admin). In a
     * heterogeneous allocation the id is the leader's, and `scancel LEADER.STEP` ends the
     * step in every component (seen on the harness). */
    size_t mark = strlen(STEP_MARK), jl = job ? strlen(job) : 0;
    if (!jl || strncmp(line, STEP_MARK, mark) != 0 || strncmp(line + mark, job, jl) != 0 ||
        line[mark + jl] != '.')
        return 0;
    const char *step = line + mark + jl + 1;
    size_t sl = strspn(step, "0123456789");
    if (!sl || sl > 10 || (step[sl] && step[sl] != '\r'))
        return 0;
    return jl + 1 + sl;
}

/* A line for the caller's log, with the task's number when it has one ("task 1: ..."). */
static void log_line(SlurmRun *r, long task, StreamKind stream, const char *line)
{
    if (!r->cfg.on_log)
        return;
    size_t cap = strlen(line) + 32;
    char *said = task >= 0 ? malloc(cap) : NULL;
    if (said)
        snprintf(said, cap, "task %ld: %s", task, line);
    r->cfg.on_log(r->cfg.userdata, "slurm", stream, said ? said : line);
    free(said);
}

/* A line of standard error: a task's (`task`), or srun's own (-1). */
static void read_stderr(SlurmRun *r, long task, const char *line)
{
    size_t n = launch_slurm_step_mark(line, r->cfg.slurm_job);
    if (n) {
        const char *id = line + strlen(STEP_MARK);
        size_t used = strlen(r->steps);
        if (used + n + 2 < sizeof r->steps)
            snprintf(r->steps + used, sizeof r->steps - used, "%s%.*s", used ? " " : "", (int)n,
                     id);
        return;
    }
    int mark = srunwords_node(r->words, task, line);
    if (mark == 2 && r->cfg.on_log) {
        /* once per task: the log says which node the "task N:" lines are of */
        char said[160];
        snprintf(said, sizeof said, "task %ld runs on %s", task, srunwords_node_of(r->words, task));
        r->cfg.on_log(r->cfg.userdata, "slurm", STREAM_STDERR, said);
    }
    if (mark)
        return;
    srunwords_stderr(r->words, task, line);
    log_line(r, task, STREAM_STDERR, line);
}

/* srun --label's line, before the inner launcher reads it, its pieces joined. A task's
 * standard error is read here and not passed on: the inner launcher gives the command's last
 * line of standard error as its reason, and that would be whichever task spoke last; srun's
 * own lines go on. Standard output goes on as the task wrote it (a protocol line parses),
 * its task kept for on_log. */
static const char *on_line(void *userdata, StreamKind stream, const char *line)
{
    SlurmRun *r = userdata;
    const char *text;
    long task;
    if (!srunlines_push(r->lines, (int)stream, line, &task, &text))
        return NULL;
    if (task >= 0 && stream == STREAM_STDERR) {
        read_stderr(r, task, text);
        return NULL;
    }
    r->line_task = task;
    srunwords_stdout(r->words, text);
    return text;
}

static void on_log(void *userdata, const char *machine, StreamKind stream, const char *line)
{
    (void)machine;
    SlurmRun *r = userdata;
    long task = r->line_task;
    r->line_task = -1;
    if (stream == STREAM_STDERR)
        read_stderr(r, task, line);
    else
        log_line(r, task, stream, line);
}

/* The tuner's pruning, through the inner launcher: a trial it stops is cancelled as the
 * operator's cancel is, its steps included. */
static int on_iteration(void *userdata, int iter, double time_s)
{
    SlurmRun *r = userdata;
    int stop = r->cfg.on_iteration(r->cfg.iter_userdata, iter, time_s);
    if (stop)
        r->cancelled = 1;
    return stop;
}

static void *start(const LaunchConfig *cfg, const Schedule *s, Error *err)
{
    if (!cfg->command || !cfg->command[0]) {
        error_set(err, "slurm launcher: expected a trial command (--trial-cmd)");
        return NULL;
    }
    if (!cfg->slurm_job || !cfg->slurm_job[0]) {
        error_set(err, "slurm launcher: expected an allocation (the session makes one)");
        return NULL;
    }
    double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600;
    double limit_min = launch_slurm_limit_min(timeout_s);
    SlurmRun *r = calloc(1, sizeof *r);
    if (!r) {
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    r->cfg = *cfg;
    r->trial = s->trial;
    r->timeout_s = timeout_s;
    r->limit_min = limit_min;
    r->line_task = -1;
    r->words = srunwords_new();
    if (!(r->lines = srunlines_new(MAX_LINE))) {
        free(r);
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    r->inner = cfg->remote ? &LAUNCHER_SINGLE : &LAUNCHER_LOCAL;
    if (!(r->command = launch_slurm_command(cfg, s, limit_min, err))) {
        srunlines_free(r->lines);
        free(r);
        return NULL;
    }
    LaunchConfig inner = *cfg;
    inner.command = r->command;
    inner.timeout_s = limit_min * 60 + BACKSTOP_S + SPARE_S;
    inner.on_log = on_log;
    inner.on_line = on_line;
    /* The step, not a process group, is what a stop reaches; and the callbacks share
     * userdata, which is now this run, not the caller's. */
    inner.on_proc = NULL;
    inner.on_proc_lost = NULL;
    inner.on_steps_left = NULL;
    inner.ranks_elsewhere = 1; /* each task fans out its own node's ranks */
    inner.userdata = r;
    inner.on_iteration = cfg->on_iteration ? on_iteration : NULL;
    inner.iter_userdata = r;
    r->backstop_ms = clock_now_ms() + (int64_t)((limit_min * 60 + BACKSTOP_S) * 1000);
    if (!(r->run = r->inner->start(&inner, s, err))) {
        error_prefix(err, "slurm launcher");
        free(r->command);
        srunlines_free(r->lines);
        free(r);
        return NULL;
    }
    return r;
}

void launch_slurm_backstop_move(void *run, int64_t at_ms)
{
    ((SlurmRun *)run)->backstop_ms = at_ms;
}

/* scancel of the steps here, not waited for: it answers at once, unless the controller is
 * away (then it retries for a while, and the screen must not wait with it). A grandchild,
 * so nothing is left to reap; the srun clients end with their steps, or by SIGTERM. */
static void scancel_here(const char *steps)
{
    char copy[256];
    const char *argv[16];
    launch_slurm_steps_argv(steps, copy, sizeof copy, argv, 16);
    pid_t child = childsig_fork(); /* scancel starts with no handler of ours */
    if (child < 0)
        return;
    if (child > 0) {
        waitpid(child, NULL, 0); /* it only forks */
        return;
    }
    /* Only async-signal-safe calls from here: the tuner has a thread. */
    if (fork() != 0)
        _exit(0);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
    }
    execvp("scancel", (char *const *)argv);
    _exit(127);
}

/* A login node scancel that did not exit 0 (cut by the connection's drop, refused, not
 * answered in time) leaves its steps maybe running: an unreachable end passes them on with
 * those never sent (leave_steps). A cancel's or a timeout's end passes on only those of a
 * scancel that gave no answer of its own (no exit status nor signal): the connection dropped
 * under it, the host was down so it was never sent, its channel was refused, or it did not
 * answer in SCANCEL_WAIT_MS (a connection that died without a word looks so until the
 * heartbeats notice). A scancel that ran there and failed (the step had ended: "Invalid job
 * id specified") has said its last word; sent again it would say the same. */
static void settle_scancel(SlurmRun *r)
{
    if (!r->scancel || r->scancel_to <= r->scancel_from)
        return;
    ExecOutcome out = rexec_outcome(r->scancel);
    const char *steps = r->steps + r->scancel_from;
    size_t len = r->scancel_to - r->scancel_from;
    if (!(out == EXEC_EXITED && rexec_exit_status(r->scancel) == 0))
        launch_slurm_steps_join(r->unconfirmed, sizeof r->unconfirmed, steps, len);
    if (out == EXEC_SSH_FAILED || out == EXEC_CLOSED)
        launch_slurm_steps_join(r->unanswered, sizeof r->unanswered, steps, len);
    r->scancel_from = r->scancel_to;
}

/* The steps reported and not yet cancelled are cancelled where srun runs. On the login node
 * the scancel is a channel of the same session, stepped with the trial's own until it
 * answers (or SCANCEL_WAIT_MS), so the trial ends only after its steps were told to. */
static void scancel_steps(SlurmRun *r)
{
    size_t len = strlen(r->steps);
    if (r->steps_sent >= len || (r->scancel && !rexec_done(r->scancel)))
        return; /* nothing new; or the last one is still under way: the next step sends */
    const char *steps = r->steps + r->steps_sent;
    size_t from = r->steps_sent;
    r->steps_sent = len;
    if (!r->cfg.remote) {
        scancel_here(steps);
        return;
    }
    char *cmd = launch_slurm_scancel_command(steps);
    long host = cmd ? hostpool_find(r->cfg.remote, r->cfg.remote_host) : -1;
    settle_scancel(r);
    rexec_free(r->scancel);
    r->scancel_from = from;
    r->scancel_to = len;
    r->scancel = host >= 0
                     ? hostpool_exec_now(r->cfg.remote, (size_t)host, cmd, NULL, 0, NULL, NULL)
                     : NULL;
    r->scancel_until_ms = clock_now_ms() + SCANCEL_WAIT_MS;
    free(cmd);
}

static int scancel_pending(const SlurmRun *r)
{
    return r->scancel && !rexec_done(r->scancel);
}

static size_t pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    SlurmRun *r = run;
    size_t n = r->inner->pollfds(r->run, fds, cap, deadline_ms);
    /* A backstop that fired is no deadline: the loop would spin on it, past, until srun
     * ended (its stop's wait, or Slurm's KillWait), once the scancel had answered. */
    int64_t next = scancel_pending(r)                                   ? r->scancel_until_ms
                   : r->inner->finished(r->run) || r->backstop_fired ? -1
                                                                       : r->backstop_ms;
    if (next >= 0 && (*deadline_ms < 0 || next < *deadline_ms))
        *deadline_ms = next;
    return n;
}

static void step(void *run, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    SlurmRun *r = run;
    r->inner->step(r->run, fds, n, now_ms); /* the login node's session too: the scancel */
    /* A cancel's steps (some may report only after it), or steps srun did not end with
     * Slurm's own limit: ours to end, and srun stopped as a cancel stops it. */
    int fires = !r->backstop_fired && !r->cancelled && !r->inner->finished(r->run) &&
                now_ms >= r->backstop_ms;
    r->backstop_fired |= fires;
    if (r->cancelled || (!r->inner->finished(r->run) && r->backstop_fired))
        scancel_steps(r);
    if (fires)
        r->inner->cancel(r->run);
    if (scancel_pending(r) && now_ms >= r->scancel_until_ms)
        rexec_close(r->scancel);
}

static int finished(const void *run)
{
    const SlurmRun *r = run;
    return r->inner->finished(r->run) && !scancel_pending(r);
}

/* The login node's connection dropped under srun (the trial is unreachable: srun's end was
 * never seen): its steps run on there, holding the allocation's nodes, until the session
 * cancels them once the login node answers again (remote/session/login_steps.h). Those a
 * scancel already went for count too unless it answered exit 0: the drop may have stopped
 * it reaching the login node. A trial cancelled or timed out ended its srun itself, and
 * passes on the steps of its scancels that had no answer (settle_scancel). The reason says
 * so: the trial's own words come first, so the note may be cut short. */
static void leave_steps(SlurmRun *r, Observation *o)
{
    if (!r->cfg.remote || !r->cfg.on_steps_left)
        return;
    settle_scancel(r);
    char left[sizeof r->steps];
    if (o->status == TRIAL_UNREACHABLE) {
        snprintf(left, sizeof left, "%s", r->unconfirmed);
        launch_slurm_steps_join(left, sizeof left, r->steps + r->steps_sent,
                                strlen(r->steps + r->steps_sent));
        r->steps_sent = strlen(r->steps);
    } else {
        snprintf(left, sizeof left, "%s", r->unanswered);
    }
    r->unconfirmed[0] = r->unanswered[0] = '\0';
    if (!left[0])
        return;
    r->cfg.on_steps_left(r->cfg.steps_userdata, r->trial, left);
    size_t used = strlen(o->reason);
    snprintf(o->reason + used, sizeof o->reason - used,
             "; its %s %s may still run: cancelled once the login node answers again",
             strchr(left, ' ') ? "steps" : "step", left);
}

static Observation *result(void *run)
{
    SlurmRun *r = run;
    if (scancel_pending(r))
        return NULL;
    Observation *o = r->inner->result(r->run);
    r->ended = r->ended || o;
    if (!o)
        return o;
    if (r->backstop_fired && !r->cancelled) {
        /* the inner run was cancelled at the backstop: the trial timed out, by its own
         * timeout (the inner run's is the step's limit and more) */
        o->status = TRIAL_TIMEOUT;
        snprintf(o->reason, sizeof o->reason,
                 "ran past the %g s trial timeout: Slurm had not ended its step %d s after its "
                 "%g min limit",
                 r->timeout_s, BACKSTOP_S, r->limit_min);
    }
    if (!r->cancelled && o->status != TRIAL_TIMEOUT)
        srunwords_explain(r->words, o);
    if (r->cancelled || o->status == TRIAL_TIMEOUT || o->status == TRIAL_UNREACHABLE)
        leave_steps(r, o);
    return o;
}

static void cancel(void *run)
{
    SlurmRun *r = run;
    if (r->inner->finished(r->run) || r->backstop_fired)
        return; /* the backstop stops it already, as a timeout */
    r->cancelled = 1;
    scancel_steps(r);
    r->inner->cancel(r->run);
}

static int pool_scancel_done(void *ctx)
{
    return !scancel_pending(ctx);
}

static void run_free(void *run)
{
    SlurmRun *r = run;
    if (!r)
        return;
    /* The inner run forgets it finished once its result is taken: a step whose result
     * came back has ended, and needs no scancel. A run dropped while it ran (the tuner
     * cancels first, so only a caller that did not) is cancelled now; on the login node
     * that waits for scancel's answer, as a cancel does. */
    int dropped = !r->ended && (r->cancelled || !r->inner->finished(r->run));
    for (int round = 0; round < 2; round++) { /* a second for steps reported meanwhile */
        if (dropped)
            scancel_steps(r);
        if (scancel_pending(r))
            hostpool_run_until(r->cfg.remote, pool_scancel_done, r, r->scancel_until_ms);
    }
    rexec_free(r->scancel);
    r->inner->free(r->run);
    free(r->command);
    srunlines_free(r->lines);
    srunwords_free(r->words);
    free(r);
}

const LauncherKind LAUNCHER_SLURM = {"slurm",  start,  pollfds, step,
                                     finished, result, cancel,  run_free};
