/* Live-mode jobs over the host pool: quoted template filling, start, signal, restart. */
#include "remote/live/jobctl.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"
#include "core/model/protocol.h"
#include "remote/launch/orphans.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

#define PGID_MARK "tunedeck-pgid "

struct JobRun {
    HostPool *pool;
    size_t host;
    char *template_text;
    RemoteExec *x, *signaller;
    /* The current run's TUNEDECK_RUN_MARK, "" for none: handed to its wrapping shell, whose
     * stop finds by it what the job started with setsid (outside its group), and put in a KILL.
     * Each run has its own (launch): the old run's guard, or a KILL of it still in flight, must
     * not reach the new run's processes, nor the new run's stop the old run's. */
    char mark[GROUPSTOP_MARK_CHARS + 1];
    long pgid;
    int restarts, restart_pending;
    /* This run's KILL (jobctl_signal) was delivered: its channel then ends signalled, which
     * says nothing of a run left behind (the KILL reached its group and marked processes). */
    int kill_sent, kill_delivered;
    char *next_command;
    JobProgress progress;
    JobWords said; /* the current run's: its error event, else its last stderr line */
    char status[300];
};

/* The value of a list placeholder, unquoted: each host's address ('h') or its
 * "address:slots" line ('f'), joined by `sep`. An IPv6 address (the inventory keeps it bare)
 * goes in brackets on its line, "[::1]:2": "::1:2" could be the host ::1 with 2 slots or
 * ::1:2 with none said. */
static char *join_hosts(const JobAlloc *a, int what, const char *sep)
{
    char *out = NULL;
    size_t len = 0;
    int rc = shquote_append_raw(&out, &len, "");
    for (size_t i = 0; rc == 0 && i < a->n_hosts; i++) {
        const JobHost *h = &a->hosts[i];
        char item[320];
        if (what == 'h')
            snprintf(item, sizeof item, "%s", h->addr);
        else if (strchr(h->addr, ':'))
            snprintf(item, sizeof item, "[%s]:%d", h->addr, h->gpus);
        else
            snprintf(item, sizeof item, "%s:%d", h->addr, h->gpus);
        rc = shquote_append_raw(&out, &len, i ? sep : "");
        if (rc == 0)
            rc = shquote_append_raw(&out, &len, item);
    }
    if (rc < 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* This host's GPU indices joined by ',' ("0,1"); "" when it holds none. */
static void gpu_ids_text(const JobHost *h, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; h && i < h->gpus && n + 16 < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%d", i ? "," : "", h->gpu_ids[i]);
}

static int is_key(const char *key, size_t klen, const char *name)
{
    return strlen(name) == klen && memcmp(key, name, klen) == 0;
}

/* Appends the quoted value of {key} (klen bytes); 1 for an unknown key, -1 out of memory. */
static int append_value(char **b, size_t *len, const char *key, size_t klen, const JobAlloc *a)
{
    const JobHost *self = a->node_rank < a->n_hosts ? &a->hosts[a->node_rank] : NULL;
    char text[1024];
    if (is_key(key, klen, "gpus"))
        snprintf(text, sizeof text, "%d", a->gpus);
    else if (is_key(key, klen, "resume"))
        return shquote_append(b, len, a->resume ? a->resume : "");
    else if (is_key(key, klen, "master_addr"))
        return shquote_append(b, len, a->n_hosts ? a->hosts[0].addr : "");
    else if (is_key(key, klen, "master_port"))
        snprintf(text, sizeof text, "%d", a->master_port);
    else if (is_key(key, klen, "nnodes"))
        snprintf(text, sizeof text, "%zu", a->n_hosts);
    else if (is_key(key, klen, "node_rank"))
        snprintf(text, sizeof text, "%zu", a->node_rank);
    else if (is_key(key, klen, "gpus_per_host"))
        snprintf(text, sizeof text, "%d", self ? self->gpus : 0);
    else if (is_key(key, klen, "gpu_ids"))
        gpu_ids_text(self, text, sizeof text);
    else if (is_key(key, klen, "hostfile"))
        snprintf(text, sizeof text, "%s", JOBCTL_HOSTFILE);
    else if (is_key(key, klen, "hosts") || is_key(key, klen, "hostfile_text") ||
             is_key(key, klen, "host_slots")) {
        /* The hostfile's lines newline-separated (one quoted word), or comma-separated as
         * horovodrun -H and MPICH's -hosts take them: neither reads "address:slots" lines
         * from a file (Horovod's and Open MPI's hostfiles say "address slots=N"). */
        char *joined = is_key(key, klen, "hosts")           ? join_hosts(a, 'h', ",")
                       : is_key(key, klen, "hostfile_text") ? join_hosts(a, 'f', "\n")
                                                            : join_hosts(a, 'f', ",");
        int rc = joined ? shquote_append(b, len, joined) : -1;
        free(joined);
        return rc;
    } else
        return 1;
    return shquote_append(b, len, text);
}

char *jobctl_command(const char *t, const JobAlloc *a, Error *err)
{
    char *b = NULL;
    size_t len = 0;
    int rc = shquote_append_raw(&b, &len, "");
    for (const char *p = t; rc == 0 && *p;) {
        const char *open = strchr(p, '{');
        const char *close = open ? strchr(open, '}') : NULL;
        if (!open || !close) {
            rc = shquote_append_raw(&b, &len, p);
            break;
        }
        /* The literal text between placeholders is the operator's own command line and
         * goes in as written, whatever its length. */
        rc = shquote_append_raw_n(&b, &len, p, (size_t)(open - p));
        if (rc == 0)
            rc = append_value(&b, &len, open + 1, (size_t)(close - open - 1), a);
        if (rc > 0) {
            free(b);
            error_set(err,
                      "job_command: unknown placeholder '{%.*s}': expected one of " JOBCTL_PLACEHOLDERS,
                      (int)(close - open - 1), open + 1);
            error_mark(err, ERROR_INPUT); /* the template's: the same at every start */
            return NULL;
        }
        p = close + 1;
    }
    if (rc < 0) {
        free(b);
        error_set(err, "job_command: out of memory");
        return NULL;
    }
    return b;
}

static void on_line(void *ud, RemoteExec *x, StreamKind s, const char *line, int cut)
{
    JobRun *j = ud;
    if (s == STREAM_STDERR) {
        /* Only the wrapper's first line: the job's own stderr could print the mark too, and a
         * group of 1 or less would make the later `kill -- -PGID` hit every process. */
        if (j->pgid == 0 && strncmp(line, PGID_MARK, strlen(PGID_MARK)) == 0) {
            long pgid = strtol(line + strlen(PGID_MARK), NULL, 10);
            if (pgid > 1)
                j->pgid = pgid;
            return;
        }
        jobctl_words_stderr(&j->said, line, rexec_line_len(x));
        return;
    }
    TrialEvent ev;
    Error e;
    if (cut)
        return;
    if (protocol_parse_line_n(line, rexec_line_len(x), &ev, &e) < 0) {
        jobctl_progress_refused(&j->progress, e.msg);
        return;
    }
    if (ev.kind == EVENT_ERROR && ev.text)
        jobctl_words_note(&j->said, ev.text, 1);
    if (ev.kind == EVENT_PROGRESS)
        jobctl_progress_note(&j->progress, &ev);
    trial_event_clear(&ev);
}

JobProgress jobctl_progress_none(void)
{
    return (JobProgress){.step = 0,
                         .epoch = -1,
                         .examples_per_s = -1,
                         .loss = NAN,
                         .seen = 0,
                         .first_step = 0,
                         .first_loss = NAN};
}

void jobctl_progress_note(JobProgress *p, const TrialEvent *ev)
{
    if (!p->seen) {
        p->first_step = ev->step;
        p->first_loss = ev->loss;
    }
    p->step = ev->step;
    p->epoch = ev->epoch;
    p->loss = ev->loss;
    p->examples_per_s = ev->examples_per_s;
    p->points[p->seen % JOBPROGRESS_POINTS] = (JobLossPoint){ev->step, ev->loss};
    p->seen++;
}

void jobctl_words_note(JobWords *w, const char *line, int error)
{
    if (!error && (w->from_error || !line[0]))
        return;
    termsafe(w->text, sizeof w->text, line);
    w->from_error |= error;
}

void jobctl_words_stderr(JobWords *w, const char *line, size_t len)
{
    int ended;
    long own = groupstop_own_part(line, len, &w->left_noted, &ended);
    if (own < 0)
        return;
    if ((size_t)own == len) {
        jobctl_words_note(w, line, 0);
        return;
    }
    char text[sizeof w->text];
    snprintf(text, sizeof text, "%.*s", (int)own, line);
    jobctl_words_note(w, text, 0);
}

void jobctl_progress_refused(JobProgress *p, const char *why)
{
    if (!p->refused++)
        termsafe(p->first_refused, sizeof p->first_refused, why);
}

char *jobctl_launch_text(const char *command, const char *mark)
{
    char *b = NULL;
    size_t len = 0;
    /* The guard stops the job's group, and the processes that carry its run's mark, once its
     * sshd session is gone (schedule --live killed outright: groupstop.h): TERM, the job
     * checkpoints, KILL once its shell and the marked processes ended or after the live
     * scheduler's stop_timeout_s (20 s, never set otherwise). The command runs under the
     * trials' wrapping shell (groupstop_trial_sh, as `tunedeck-job`: it ends with the job's
     * exit status as is, no signal raised, as the `sh -c` it replaces did), handed over in a
     * variable: once the job has ended, by itself or on a stop's TERM after its checkpoint,
     * what it left in its group is stopped on this channel. The run's mark is exported to that
     * shell as a trial's is, and from it to the command: its stop also finds what left the
     * group with setsid (a data-loader server), which a mark exported inside the command never
     * told it. */
    if (shquote_append_raw(&b, &len,
                           "printf '" PGID_MARK "%s\\n' \"$$\" >&2; " GROUPSTOP_GUARD_SH(
                               GROUPSTOP_JOB_TICKS) GROUPSTOP_CMD_VAR "=") < 0 ||
        shquote_append(&b, &len, command) < 0 ||
        (mark && mark[0] &&
         (shquote_append_raw(&b, &len, " TUNEDECK_RUN_MARK=") < 0 ||
          shquote_append(&b, &len, mark) < 0 ||
          shquote_append_raw(&b, &len, "; export TUNEDECK_RUN_MARK") < 0)) ||
        shquote_append_raw(&b, &len, "; export " GROUPSTOP_CMD_VAR "; exec sh -c ") < 0 ||
        shquote_append(&b, &len, groupstop_trial_sh) < 0 ||
        shquote_append_raw(&b, &len, " " GROUPSTOP_JOB_NAME) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

static int launch(JobRun *j, const char *command, Error *err)
{
    char *b = jobctl_launch_text(command, j->mark);
    if (!b)
        return error_set(err, "job: out of memory");
    ExecOptions o = {.on_line = on_line, .userdata = j};
    rexec_free(j->x);
    j->pgid = 0;
    j->kill_sent = j->kill_delivered = 0;
    j->progress = jobctl_progress_none(); /* progress is the current run's */
    j->said = (JobWords){0};
    j->x = hostpool_exec(j->pool, j->host, b, NULL, 0, &o, err);
    free(b);
    return j->x ? 0 : -1;
}

JobRun *jobctl_start(HostPool *p, size_t host, const char *t, const JobAlloc *a, const char *mark,
                     Error *err)
{
    if (mark && mark[0] && !groupstop_mark_ok(mark)) {
        error_set(err, "job: run mark '%.40s': expected %d lowercase hex digits", mark,
                  GROUPSTOP_MARK_CHARS);
        return NULL;
    }
    char *cmd = jobctl_command(t, a, err);
    if (!cmd)
        return NULL;
    JobRun *j = calloc(1, sizeof *j);
    if (!j || !(j->template_text = strdup(t))) {
        free(cmd);
        free(j);
        error_set(err, "job: out of memory");
        return NULL;
    }
    j->pool = p;
    j->host = host;
    snprintf(j->mark, sizeof j->mark, "%s", mark ? mark : "");
    if (launch(j, cmd, err) < 0) {
        free(cmd);
        jobctl_free(j);
        return NULL;
    }
    free(cmd);
    return j;
}

char *jobctl_signal_text(int signo, long pgid, const char *mark, Error *err)
{
    const char *name = sigabbrev_np(signo);
    if (!name) {
        error_set(err, "job: unknown signal %d", signo);
        return NULL;
    }
    /* The KILL (stop_timeout_s after the TERM) also reaches the run's marked processes that
     * left its group: it ends the wrapping shell, whose own stop of them then never comes. Any
     * other signal goes to the group only while it is still the run's (GROUPSTOP_OURS_SH: its
     * wrapping shell, pid pgid, carries the mark): the channel is seen done a moment after the
     * shell's end, and the guard's after that, so a resize's TERM may come once the group is
     * gone and its number another's. With no mark nothing tells: the group, as before. */
    char *cmd;
    if (signo == SIGKILL && mark && mark[0])
        cmd = groupstop_kill_command(pgid, mark);
    else if (mark && mark[0])
        cmd = groupstop_signal_command(pgid, mark, name);
    else {
        char text[64];
        snprintf(text, sizeof text, "kill -%s -%ld", name, pgid);
        cmd = strdup(text);
    }
    if (!cmd)
        error_set(err, "job: out of memory");
    return cmd;
}

/* Notes whether the KILL sent to the run was delivered: its sender's channel exited 0. */
static void note_signaller(JobRun *j)
{
    if (j->kill_sent && j->signaller && rexec_done(j->signaller) &&
        rexec_outcome(j->signaller) == EXEC_EXITED && rexec_exit_status(j->signaller) == 0)
        j->kill_delivered = 1;
}

int jobctl_signal(JobRun *j, int signo, Error *err)
{
    if (!j->x || rexec_done(j->x))
        return error_set(err, "job: not running");
    if (!j->pgid)
        return error_set(err, "job: its process group is not known yet");
    char *cmd = jobctl_signal_text(signo, j->pgid, j->mark, err);
    if (!cmd)
        return -1;
    note_signaller(j);
    rexec_free(j->signaller);
    j->kill_sent = 0;
    j->signaller = hostpool_exec_now(j->pool, j->host, cmd, NULL, 0, NULL, err);
    free(cmd);
    if (!j->signaller)
        return -1;
    j->kill_sent = signo == SIGKILL;
    return 0;
}

/* The old run may still hold the host: it ended without its exit status, and not on a KILL
 * of ours that was delivered. */
static int lingers(JobRun *j)
{
    note_signaller(j);
    return jobctl_may_linger(j) && !j->kill_delivered;
}

int jobctl_relaunch_due(int pending, int x_done, int signaller_done, int lingers_on)
{
    if (!pending || !x_done || !signaller_done)
        return 0;
    return lingers_on ? -1 : 1;
}

int jobctl_restart(JobRun *j, const JobAlloc *a, Error *err)
{
    /* Refused at once, every time: a relaunch would share the host with what is left. A KILL
     * of ours still on its way is waited for (jobctl_step) before that is known. */
    int kill_in_flight = j->kill_sent && j->signaller && !rexec_done(j->signaller);
    if (!jobctl_running(j) && !kill_in_flight && lingers(j))
        return error_set(err,
                         "job: not restarted: its last run ended without its exit status "
                         "(%.200s), its processes may still run on the host",
                         j->status);
    char *cmd = jobctl_command(j->template_text, a, err);
    if (!cmd)
        return -1;
    if (jobctl_running(j) && jobctl_signal(j, SIGTERM, err) < 0) {
        free(cmd);
        return -1; /* nothing pending: the run goes on as it was */
    }
    free(j->next_command);
    j->next_command = cmd;
    j->restart_pending = 1;
    return 0;
}

void jobctl_step(JobRun *j)
{
    if (j->x && rexec_done(j->x) && !j->status[0]) {
        ExecOutcome o = rexec_outcome(j->x);
        /* A failed run says why in its own words: a training script's exception is its
         * last stderr line (or the error event it printed), not only a status. */
        if (o == EXEC_EXITED && rexec_exit_status(j->x) != 0 && j->said.text[0])
            snprintf(j->status, sizeof j->status, "exited %d: %s", rexec_exit_status(j->x),
                     j->said.text);
        else if (o == EXEC_EXITED)
            snprintf(j->status, sizeof j->status, "exited %d", rexec_exit_status(j->x));
        else
            snprintf(j->status, sizeof j->status, "%s", rexec_error(j->x));
    }
    /* The relaunch waits for the signal sent to the old run to have been delivered: the new
     * run's processes are not there when it lands. */
    int due = jobctl_relaunch_due(j->restart_pending, j->x && rexec_done(j->x),
                                  !j->signaller || rexec_done(j->signaller),
                                  j->restart_pending && lingers(j));
    if (due != 0) {
        j->restart_pending = 0;
        /* An old run that ended without its shell's exit status may still run on the host,
         * on the GPUs the new allocation counts on: no relaunch, which the caller is told. */
        if (due < 0) {
            if (strncmp(j->status, "not restarted", 13) == 0)
                return;
            char was[sizeof j->status];
            snprintf(was, sizeof was, "%s", j->status);
            snprintf(j->status, sizeof j->status,
                     "not restarted: the run ended without its exit status (%.200s), its "
                     "processes may still run on the host",
                     was);
            return;
        }
        j->status[0] = 0;
        j->restarts++;
        Error e;
        /* A relaunch of a run started with a mark gets a fresh one (the first launch exports
         * the caller's): the old run may still be stopping (its guard, a KILL in flight, its
         * wrapping shell's own stop go by the mark they were given), and a mark must name one
         * run's processes only. */
        if ((j->mark[0] && orphans_mark_new(j->mark, &e) < 0) ||
            launch(j, j->next_command, &e) < 0) /* said by jobctl_status, not lost */
            snprintf(j->status, sizeof j->status, "restart failed: %s", e.msg);
    }
}

int jobctl_running(const JobRun *j)
{
    return j->x && !rexec_done(j->x);
}

int jobctl_restarts(const JobRun *j)
{
    return j->restarts;
}

long jobctl_pgid(const JobRun *j)
{
    return j->pgid;
}

const char *jobctl_mark(const JobRun *j)
{
    return j->mark;
}

const JobProgress *jobctl_progress(const JobRun *j)
{
    return &j->progress;
}

int jobctl_may_linger(const JobRun *j)
{
    return j->x && rexec_done(j->x) && rexec_outcome(j->x) != EXEC_EXITED;
}

const char *jobctl_status(const JobRun *j)
{
    return j->status;
}

void jobctl_free(JobRun *j)
{
    if (!j)
        return;
    rexec_free(j->x);
    rexec_free(j->signaller);
    free(j->template_text);
    free(j->next_command);
    free(j);
}
