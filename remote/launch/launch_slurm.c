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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/launch/launch_slurm.h"
#include "remote/launch/rankfan.h"
#include "remote/launch/srunlabel.h"
#include "remote/launch/srunwords.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

extern const LauncherKind LAUNCHER_LOCAL;
extern const LauncherKind LAUNCHER_SINGLE;

/* Slurm checks time limits about every 30 s and then waits KillWait: past this much after
 * the step's own limit, tunedeck stops it itself. SCANCEL_WAIT_MS: how long a trial's end
 * waits for the login node's scancel to answer (a controller that is away keeps scancel
 * retrying there; it goes on without us). */
enum { BACKSTOP_S = 120, SCANCEL_WAIT_MS = 10000 };
/* A joined task line is given out at this length, as the inner launchers cut theirs. */
enum { MAX_LINE = 4 << 20 };

#define STEP_MARK "tunedeck-step "

/* Every task: report the step (the first task), say its node (srunwords.h: srun's word of
 * a failed task numbers it within its component of a heterogeneous step, the label within
 * the whole step; the node joins them), name its machine, run the trial command ($1). The
 * command runs as a child of a shell that outlives SIGTERM (trap :), so a task srun stops
 * because another failed (--kill-on-bad-exit) exits with its command's status instead of
 * dying of the signal: srun takes a task killed by a signal for a lost node and drops the
 * output it has not read yet, the failed task's last words with it (h-srun: 5 of 50
 * two-node steps on a loaded machine). The shell's own stderr goes nowhere ("Terminated",
 * which dash says of a child killed by a signal, is not the task's word); the command's is
 * fd 4, the task's, given in a subshell: dash applies a simple command's redirections in
 * the shell itself while it waits, so "sh -c ... 2>&4" had it say "Terminated" there after
 * all. */
static const char TASK_SCRIPT[] =
    "[ \"${SLURM_PROCID:-0}\" = 0 ] && printf '" STEP_MARK "%s.%s\\n' \"$SLURM_JOB_ID\" "
    "\"$SLURM_STEP_ID\" >&2; printf '" SRUNWORDS_NODE_MARK "%s\\n' \"$SLURMD_NODENAME\" >&2; "
    "TUNEDECK_MACHINE=$SLURMD_NODENAME; export TUNEDECK_MACHINE; "
    "trap : TERM; exec 4>&2 2>/dev/null; (exec 2>&4 4>&- sh -c \"$1\")";

typedef struct {
    const LauncherKind *inner; /* local (srun here) or single (srun on the login node) */
    void *run;                 /* the inner launcher's run */
    char *command;
    LaunchConfig cfg; /* the caller's: its log sink, the login node's session */
    char steps[256];  /* "JOB.STEP ..." as each step's first task reported it */
    SrunLines *lines;     /* srun --label's lines, read back per task */
    long line_task;       /* the task of the line being read (on_line); -1: srun's own */
    SrunWords *words;     /* what the step's lines say of why it failed */
    int cancelled;
    int ended;           /* its result was taken: nothing of it runs */
    size_t steps_sent;   /* how much of steps was cancelled (here: fire and forget) */
    RemoteExec *scancel; /* on the login node: waited for, up to scancel_until_ms */
    int64_t scancel_until_ms;
    int64_t backstop_ms; /* past it, the steps are cancelled whatever srun does */
} SlurmRun;

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

/* The machines a step runs on: every worker and parameter server; with per-device ranks only
 * those with a device that has inputs (a PS-only machine has no rank), as over SSH. */
static int takes_part(const Schedule *s, size_t m)
{
    return rankfan_wanted(s) ? s->worker[m] && schedule_machine_inputs(s, m) > 0
                             : s->worker[m] || s->ps[m];
}

static int machine_gpus(const Cluster *c, size_t m)
{
    const MachineType *t = cluster_machine_type(c, m);
    int g = 0;
    for (size_t d = 0; d < t->n_devices; d++)
        g += t->devices[d].kind == DEVICE_GPU;
    return g;
}

/* srun's arguments for the machines of the schedule that have `gpus` GPUs, after `lead`
 * ("srun", or ":" between the components of one heterogeneous step): every task gets all of
 * its node's GPUs (the step is alone on them; the schedule's inputs say which it uses). */
static int append_srun(char **b, size_t *len, const LaunchConfig *cfg, const Schedule *s,
                       const char *command, int gpus, double limit_min, const char *lead,
                       const char *input)
{
    /* A heterogeneous allocation's component k holds the k-th distinct GPU count among all
     * the machines (remote/slurm/slurm_alloc.c makes it so). */
    int component = 0, seen[64];
    size_t distinct = 0;
    for (size_t m = 0; m < s->cluster->n_machines && distinct < 64; m++) {
        int g = machine_gpus(s->cluster, m), known = 0;
        for (size_t k = 0; k < distinct; k++)
            known |= seen[k] == g;
        if (known)
            continue;
        if (g == gpus)
            component = (int)distinct;
        seen[distinct++] = g;
    }
    const Cluster *c = s->cluster;
    size_t nodes = 0, cap = 1;
    for (size_t m = 0; m < c->n_machines; m++)
        if (takes_part(s, m) && machine_gpus(c, m) == gpus) {
            nodes++;
            cap += strlen(c->machines[m].name) + 1;
        }
    char *list = calloc(1, cap);
    if (!list)
        abort();
    for (size_t m = 0; m < c->n_machines; m++)
        if (takes_part(s, m) && machine_gpus(c, m) == gpus) {
            if (list[0])
                strcat(list, ",");
            strcat(list, c->machines[m].name);
        }
    char jobid[64], count[32], time[32], gres[48], het[32];
    snprintf(jobid, sizeof jobid, "--jobid=%s", cfg->slurm_job);
    snprintf(count, sizeof count, "--nodes=%zu", nodes);
    snprintf(time, sizeof time, "--time=%.0f", limit_min);
    snprintf(gres, sizeof gres, "--gres=gpu:%d", gpus);
    const char *argv[20] = {lead, jobid, "--job-name=tunedeck-trial", "--nodelist", list, count,
                            "--ntasks-per-node=1", input, "--kill-on-bad-exit=1",
                            "--label", time};
    size_t n = 11;
    if (gpus > 0)
        argv[n++] = gres;
    if (cfg->slurm_het) {
        snprintf(het, sizeof het, "--het-group=%d", component);
        argv[n++] = het;
    }
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = TASK_SCRIPT;
    argv[n++] = "tunedeck-trial";
    argv[n++] = command;
    char *cmd = shquote_argv(argv, n);
    free(list);
    int rc = cmd ? shquote_append_raw(b, len, cmd) : -1;
    free(cmd);
    return rc;
}

/* The srun command line, every argument quoted. Nodes whose GPU counts differ cannot share
 * one component's --gres (it is per node, and a --gpus total is spread evenly, not as
 * asked), so each GPU count is a component of one heterogeneous step ("srun A : B"): srun
 * numbers its tasks through the whole step, the labels of two components never collide,
 * and one failed task stops every component (--kill-on-bad-exit). Its components read
 * standard input apart, each from the same file descriptor, so with --input=all on a pipe
 * the first took the schedule and the others got nothing (seen on the harness): the input
 * goes to a file of its own, deleted at once and held open as fd 3, which each component
 * opens again from the start (--input=/dev/fd/3, a new read offset each on Linux). */
static char *srun_command(const LaunchConfig *cfg, const Schedule *s, const char *command,
                          double limit_min, Error *err)
{
    const Cluster *c = s->cluster;
    int counts[64];
    size_t groups = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        if (!takes_part(s, m))
            continue;
        int g = machine_gpus(c, m), seen = 0;
        for (size_t k = 0; k < groups; k++)
            seen |= counts[k] == g;
        if (!seen && groups < sizeof counts / sizeof *counts)
            counts[groups++] = g;
    }
    if (!groups) {
        error_set(err, "slurm launcher: the schedule uses no machine");
        return NULL;
    }
    char *b = NULL;
    size_t len = 0;
    int rc = 0;
    if (groups == 1) {
        rc = shquote_append_raw(&b, &len, "exec ") < 0 ||
             append_srun(&b, &len, cfg, s, command, counts[0], limit_min, "srun",
                         "--input=all") < 0;
    } else {
        rc = shquote_append_raw(&b, &len, "f=$(mktemp) && exec 3<>\"$f\" && rm -f \"$f\" && "
                                          "cat >&3 || exit 1; exec ") < 0;
        for (size_t k = 0; k < groups && !rc; k++)
            rc = (k && shquote_append_raw(&b, &len, " ") < 0) ||
                 append_srun(&b, &len, cfg, s, command, counts[k], limit_min,
                             k ? ":" : "srun", "--input=/dev/fd/3") < 0;
    }
    if (rc) {
        free(b);
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    return b;
}

/* trial.ranks "per-device": each task starts the ranks of its own node (rankfan.h) —
 * `case $TUNEDECK_MACHINE in 'n1') exec sh -c '<n1's fan-out>' ;; ... esac` — with
 * MASTER_ADDR the NodeAddr of rank 0's node (the Slurm inventory's machine host). */
static char *ranks_command(const Schedule *s, const char *command, Error *err)
{
    const Cluster *c = s->cluster;
    char *b = NULL;
    size_t len = 0;
    int rc = shquote_append_raw(&b, &len, "case $TUNEDECK_MACHINE in\n");
    for (size_t m = 0; m < c->n_machines && rc == 0; m++) {
        if (!takes_part(s, m))
            continue;
        char *fan = rankfan_script(s, m, 0, command, err);
        if (!fan) {
            free(b);
            return NULL;
        }
        rc = shquote_append(&b, &len, c->machines[m].name) < 0 ||
             shquote_append_raw(&b, &len, ") exec sh -c ") < 0 ||
             shquote_append(&b, &len, fan) < 0 || shquote_append_raw(&b, &len, " ;;\n") < 0;
        free(fan);
    }
    if (rc || shquote_append_raw(&b, &len,
                                 "*) echo \"tunedeck: node $TUNEDECK_MACHINE has no rank in this "
                                 "schedule\" >&2; exit 1 ;;\nesac\n") < 0) {
        free(b);
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    return b;
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

char *launch_slurm_command(const LaunchConfig *cfg, const Schedule *s, double limit_min,
                           Error *err)
{
    char *fan = rankfan_wanted(s) ? ranks_command(s, cfg->command, err) : NULL;
    if (rankfan_wanted(s) && !fan)
        return NULL;
    char *cmd = srun_command(cfg, s, fan ? fan : cfg->command, limit_min, err);
    free(fan);
    return cmd;
}

/* The step ids as scancel's arguments, in `copy` (a copy of steps that argv points into). */
static size_t steps_argv(const char *steps, char *copy, size_t copy_cap, const char **argv,
                         size_t cap)
{
    size_t n = 0;
    snprintf(copy, copy_cap, "%s", steps);
    argv[n++] = "scancel";
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && n + 1 < cap;
         t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    argv[n] = NULL;
    return n;
}

char *launch_slurm_scancel_command(const char *steps)
{
    char copy[256];
    const char *argv[16];
    size_t n = steps_argv(steps, copy, sizeof copy, argv, 16);
    return n > 1 ? shquote_argv(argv, n) : NULL;
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
    double limit_min = (double)(long)((timeout_s + 59) / 60);
    SlurmRun *r = calloc(1, sizeof *r);
    if (!r) {
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    r->cfg = *cfg;
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
    inner.timeout_s = limit_min * 60 + BACKSTOP_S;
    inner.on_log = on_log;
    inner.on_line = on_line;
    /* The step, not a process group, is what a stop reaches; and the callbacks share
     * userdata, which is now this run, not the caller's. */
    inner.on_proc = NULL;
    inner.on_proc_lost = NULL;
    inner.ranks_elsewhere = 1; /* each task fans out its own node's ranks */
    inner.userdata = r;
    inner.on_iteration = cfg->on_iteration ? on_iteration : NULL;
    inner.iter_userdata = r;
    r->backstop_ms = clock_now_ms() + (int64_t)(inner.timeout_s * 1000);
    if (!(r->run = r->inner->start(&inner, s, err))) {
        error_prefix(err, "slurm launcher");
        free(r->command);
        srunlines_free(r->lines);
        free(r);
        return NULL;
    }
    return r;
}

/* scancel of the steps here, not waited for: it answers at once, unless the controller is
 * away (then it retries for a while, and the screen must not wait with it). A grandchild,
 * so nothing is left to reap; the srun clients end with their steps, or by SIGTERM. */
static void scancel_here(const char *steps)
{
    char copy[256];
    const char *argv[16];
    steps_argv(steps, copy, sizeof copy, argv, 16);
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

/* The steps reported and not yet cancelled are cancelled where srun runs. On the login node
 * the scancel is a channel of the same session, stepped with the trial's own until it
 * answers (or SCANCEL_WAIT_MS), so the trial ends only after its steps were told to. */
static void scancel_steps(SlurmRun *r)
{
    size_t len = strlen(r->steps);
    if (r->steps_sent >= len || (r->scancel && !rexec_done(r->scancel)))
        return; /* nothing new; or the last one is still under way: the next step sends */
    const char *steps = r->steps + r->steps_sent;
    r->steps_sent = len;
    if (!r->cfg.remote) {
        scancel_here(steps);
        return;
    }
    char *cmd = launch_slurm_scancel_command(steps);
    long host = cmd ? hostpool_find(r->cfg.remote, r->cfg.remote_host) : -1;
    rexec_free(r->scancel);
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
    int64_t next = scancel_pending(r) ? r->scancel_until_ms
                   : r->inner->finished(r->run) ? -1
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
     * Slurm's own limit: ours to end. */
    if (r->cancelled || (!r->inner->finished(r->run) && now_ms >= r->backstop_ms))
        scancel_steps(r);
    if (scancel_pending(r) && now_ms >= r->scancel_until_ms)
        rexec_close(r->scancel);
}

static int finished(const void *run)
{
    const SlurmRun *r = run;
    return r->inner->finished(r->run) && !scancel_pending(r);
}

static Observation *result(void *run)
{
    SlurmRun *r = run;
    if (scancel_pending(r))
        return NULL;
    Observation *o = r->inner->result(r->run);
    r->ended = r->ended || o;
    if (!o || r->cancelled || o->status == TRIAL_TIMEOUT)
        return o;
    srunwords_explain(r->words, o);
    return o;
}

static void cancel(void *run)
{
    SlurmRun *r = run;
    if (r->inner->finished(r->run))
        return;
    r->cancelled = 1;
    scancel_steps(r);
    r->inner->cancel(r->run);
}

static size_t pool_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    SlurmRun *r = ctx;
    int64_t until = r->scancel_until_ms;
    if (*deadline_ms < 0 || until < *deadline_ms)
        *deadline_ms = until;
    return hostpool_pollfds(r->cfg.remote, fds, cap, deadline_ms);
}

static void pool_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hostpool_step(((SlurmRun *)ctx)->cfg.remote, fds, n, now_ms);
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
            evloop_run_source(pool_pollfds, pool_step, r, pool_scancel_done, r,
                              r->scancel_until_ms);
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
