/* The live driver's runs as Slurm batch jobs: submit, poll, signal, read progress
 * (remote/live/liverun_slurm.h). */
#include "remote/live/liverun_slurm_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/model/protocol.h"

enum { READY_AFTER_MS = 10000 }; /* running this long without a progress line: signal anyway */

/* Written whole under a new name, then renamed over the script: a symlink or a file someone
 * left at script_path is replaced, never written through. */
static int write_script(const char *dir, const char *script_path, const char *script, Error *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s/.tunedeck-job.sbatch.XXXXXX", dir) < 0)
        return error_set(err, "job: out of memory");
    int fd = mkostemp(tmp, O_CLOEXEC); /* 0600: sbatch reads it as us */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    int ok = f && fputs(script, f) >= 0;
    if (f)
        ok = fclose(f) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    ok = ok && rename(tmp, script_path) == 0;
    int saved = errno;
    if (!ok && fd >= 0)
        unlink(tmp);
    free(tmp);
    return ok ? 0 : error_set(err, "%s: cannot write: %s", script_path, strerror(saved));
}

static void run_free_fields(SlurmRun *r)
{
    liveslurm_argv_free(r->argv);
    free(r->dir);
    free(r->out_path);
    free(r);
}

/* A refusal marked bad input (a folder others can write, the template, the name) is the same
 * at every start; any other (a folder or script not written, out of memory) may pass. */
static void *refused(LiveRefusal *refusal, const Error *err)
{
    *refusal = err->kind == ERROR_INPUT ? LIVERUN_REFUSED_FOR_GOOD : LIVERUN_REFUSED_ONCE;
    return NULL;
}

static void *start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    LiveSlurm *s = ctx;
    const JobAlloc *a = spec->alloc;
    /* checked before the run began (check_folders), and again here: a mode changed since,
     * or a folder someone else made since, is refused before any sbatch */
    char *dir = liveslurm_folder_make(spec->job_dir, spec->name, err);
    if (!dir || liveslurm_folder_trusted(dir, 0, err) < 0) {
        free(dir);
        return refused(refusal, err);
    }
    char *script = liveslurm_script(spec->command_template, spec->name, a, err);
    char *script_path = NULL;
    SlurmRun *r = calloc(1, sizeof *r);
    int *gpus = calloc(a->n_hosts ? a->n_hosts : 1, sizeof *gpus);
    if (!script || !gpus || !r || asprintf(&script_path, "%s/tunedeck-job.sbatch", dir) < 0) {
        if (script)
            error_set(err, "job: out of memory");
        goto fail;
    }
    if (write_script(dir, script_path, script, err) < 0)
        goto fail;
    for (size_t h = 0; h < a->n_hosts; h++)
        gpus[h] = a->hosts[h].gpus;
    r->s = s;
    r->progress = jobctl_progress_none();
    r->script_rc = -1;
    r->dir = dir;
    dir = NULL;
    if (liveslurm_job_name(r->job_name, sizeof r->job_name, spec->name, s->nonce,
                           ++s->submissions) < 0) {
        error_set(err, "job name '%s': too long for Slurm", spec->name);
        error_mark(err, ERROR_INPUT);
        goto fail;
    }
    r->argv = liveslurm_sbatch_argv(r->job_name, r->dir, s->o.partition, spec->node_names, gpus,
                                    a->n_hosts, script_path);
    if (!r->argv) {
        error_set(err, "job: out of memory");
        goto fail;
    }
    /* The sbatch starts now and is collected by a later step: the run says "no Slurm job
     * yet" until it answers, and waits for the controller (waiting()) while it does not. */
    snprintf(r->label, sizeof r->label, "no Slurm job yet");
    s->active++; /* its state comes with the next round: never more than one a poll_s */
    liveslurm_run_calls(r);
    free(script);
    free(script_path);
    free(gpus);
    return r;
fail:
    if (r)
        run_free_fields(r);
    free(dir);
    free(script);
    free(script_path);
    free(gpus);
    return refused(refusal, err);
}

/* The batch script's last line, "tunedeck-batch-exit JOBID STATUS": this job's, not a line
 * the job's own output happens to hold. The job's command writes to the same file and may
 * print that very line (its id is in its environment), so only the output's last line
 * counts (any line after one un-counts it: the script prints its own after the command has
 * exited), and a stop believes it only once Slurm says the script is over (follow). */
static void exit_line(SlurmRun *r)
{
    size_t ml = strlen(LIVESLURM_EXIT_MARK), il = strlen(r->id);
    const char *p = r->partial;
    if (r->partial_cut || strncmp(p, LIVESLURM_EXIT_MARK, ml) != 0 ||
        strncmp(p + ml, r->id, il) != 0 || p[ml + il] != ' ') {
        if (r->plen > 0) /* the script's own line is followed by none (it prints '\n' first) */
            r->script_rc = -1;
        return;
    }
    char *end;
    long rc = strtol(p + ml + il + 1, &end, 10);
    if (end != p + ml + il + 1 && !*end && rc >= 0 && rc < 256) {
        r->script_rc = (int)rc;
        r->line_round = r->s->rounds + (r->s->round != NULL); /* one in flight may predate it */
        r->line_early = 0;
    }
}

/* A line that may say why the job failed: its error event, else its last line that is
 * neither protocol nor the batch script's exit line. */
static void note_said(SlurmRun *r, const TrialEvent *ev)
{
    if (ev->kind == EVENT_ERROR && ev->text)
        jobctl_words_note(&r->said, ev->text, 1);
    else if (ev->kind == EVENT_LOG && ev->text &&
             strncmp(ev->text, LIVESLURM_EXIT_MARK, strlen(LIVESLURM_EXIT_MARK)) != 0)
        jobctl_words_note(&r->said, ev->text, 0);
}

/* The job's protocol lines from its output file, from where the last read stopped. */
static void read_output(SlurmRun *r)
{
    if (!r->out_path)
        return; /* not submitted yet */
    FILE *f = fopen(r->out_path, "r");
    if (!f)
        return;
    if (fseek(f, r->offset, SEEK_SET) == 0) {
        char buf[8192];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
            r->offset += (long)got;
            for (size_t i = 0; i < got; i++) {
                if (buf[i] != '\n') {
                    if (r->plen < sizeof r->partial - 1)
                        r->partial[r->plen++] = buf[i];
                    else
                        r->partial_cut = 1;
                    continue;
                }
                r->partial[r->plen] = 0;
                exit_line(r);
                TrialEvent ev;
                Error e;
                int parsed = r->partial_cut ? 1 : protocol_parse_line_n(r->partial, r->plen, &ev, &e);
                if (parsed < 0)
                    jobctl_progress_refused(&r->progress, e.msg);
                if (parsed == 0) {
                    if (ev.kind == EVENT_PROGRESS)
                        jobctl_progress_note(&r->progress, &ev);
                    note_said(r, &ev);
                    trial_event_clear(&ev);
                }
                r->plen = 0;
                r->partial_cut = 0;
            }
        }
    }
    fclose(f);
}

/* The scheduler placed the job where it saw GPUs free, yet Slurm keeps it pending: other
 * jobs got there first (another user's job of higher priority, one the backfill planned, or
 * a node Slurm holds back). Said once, with Slurm's reason; the run keeps waiting. */
static void say_still_pending(SlurmRun *r, const SlurmJobInfo *j)
{
    int64_t now = clock_now_ms();
    if (!r->pending_since_ms)
        r->pending_since_ms = now;
    if (r->pending_said || now - r->pending_since_ms < r->s->o.pending_say_s * 1000)
        return;
    r->pending_said = 1;
    liveslurm_say(r->s,
                  "slurm: %s (%s) is still pending after %g s (reason: %s): the GPUs it was "
                  "placed on went to other jobs; it starts when Slurm frees some",
                  r->label, r->job_name, r->s->o.pending_say_s, j->reason);
}

/* Suspended: it keeps its GPUs (Slurm 22.05 frees a suspended job's CPUs, not its GRES; a
 * GPU job asking for them is not started by suspending ours), so the model keeps counting
 * them; said once a suspension, and its end. */
static void note_suspended(SlurmRun *r, const SlurmJobInfo *j, LiveSlurmTaken t)
{
    if (t == LIVESLURM_TAKEN_SUSPENDED && !r->suspended_ms) {
        r->suspended_ms = clock_now_ms();
        liveslurm_say(r->s,
                      "slurm: %s (%s) is suspended (preempted with PreemptMode=SUSPEND, or "
                      "scontrol suspend): Slurm keeps its GPUs while it is suspended (it frees "
                      "only its CPUs), so the scheduler keeps counting them, at its size, and "
                      "counts no progress for it until Slurm resumes it; it goes on from where "
                      "it stopped then",
                      r->label, r->job_name);
    } else if (t != LIVESLURM_TAKEN_SUSPENDED && r->suspended_ms) {
        int resumed = strcmp(j->state, "RUNNING") == 0;
        liveslurm_say(r->s, "slurm: %s (%s) is %s after %.0f s suspended%s", r->label, r->job_name,
                      resumed ? "resumed" : j->state,
                      (double)(clock_now_ms() - r->suspended_ms) / 1000,
                      resumed ? ": its progress counts again" : "");
        r->suspended_ms = 0;
    }
}

/* Slurm took the job off its GPUs for another job (preemption, docs/slurm.md): not a death.
 * Its end (PREEMPTED) or its requeue ends the run once Slurm says it ended, with how in
 * taken_how for the driver (LiveRunOps.preempted), which gives its GPUs back to the model and
 * has the next decision place it again, from its checkpoint. A requeued copy is cancelled
 * (liveslurm_run_calls: CANCEL_REQUEUED) rather than left to Slurm: Slurm would start it on
 * the same nodes, the preemptor's now, with the size and {resume} of its first submission,
 * while the policy may place it elsewhere now and its checkpoint is newer. Returns 1 when the
 * job was taken (the rest of follow does not apply). */
static int taken_off(SlurmRun *r, const SlurmJobInfo *j)
{
    LiveSlurmTaken t = liveslurm_taken(j);
    note_suspended(r, j, t);
    if (t != LIVESLURM_TAKEN_PREEMPTED && t != LIVESLURM_TAKEN_REQUEUED)
        return 0;
    if (!r->taken) {
        r->taken = t;
        /* its script's exit line: the checkpoint the TERM wrote, once Slurm's record agrees.
         * An ended PREEMPTED job has the script's status as its ExitCode (0:9 when KillWait
         * ran out and the script was killed, whatever line the job's command printed last);
         * a requeued one has none (slurmctld drops a requeued job's batch status): its line
         * counts unless a round saw the job running, not requeued, after it (line_early;
         * docs/slurm.md, "The exit line is not taken on the job's word"). */
        liveslurm_note_exit(r, t == LIVESLURM_TAKEN_PREEMPTED ? j : NULL);
        r->saved = liveslurm_line_saved(r);
        if (t == LIVESLURM_TAKEN_PREEMPTED)
            snprintf(r->taken_how, sizeof r->taken_how,
                     "preempted by Slurm (PreemptMode=CANCEL: it ended PREEMPTED)");
        else
            snprintf(r->taken_how, sizeof r->taken_how,
                     "requeued by Slurm (Restarts=%d: preempted with PreemptMode=REQUEUE, or its "
                     "node failed; now %s): its requeued copy is cancelled",
                     j->restarts, j->state);
        r->granted[0] = r->waiting[0] = 0;
        if (!r->ran)
            r->ran = 1; /* it ran, if for less than a round */
    }
    if (slurm_jobinfo_ended(j->state))
        liveslurm_ended_in_slurm(r, r->taken == LIVESLURM_TAKEN_PREEMPTED ? j : NULL,
                                 r->taken == LIVESLURM_TAKEN_PREEMPTED
                                     ? "preempted by Slurm"
                                     : "requeued by Slurm (its copy cancelled)");
    return 1;
}

/* Slurm's last round says the batch script is over, with the status its exit line says, but
 * the job is not ended yet (COMPLETING: its epilog runs). A script killed by a signal printed
 * no line: one read then is the job's. Not once our KILL is asked: scancel makes the job
 * COMPLETING at once, before its script is killed, with ExitCode 0:0 until the script's end
 * comes in (slurmctld's job_signal), so COMPLETING then says nothing of the script; the run
 * waits for the ended job, whose ExitCode is the script's (0:9 when it was killed). */
static int script_over_in_slurm(const SlurmRun *r)
{
    const SlurmJobInfo *parts[1];
    if (r->s->rounds <= r->round_at_submit || r->kill_asked)
        return 0;
    return slurm_jobinfo_components(&r->s->jobs, r->id, parts, 1) > 0 &&
           strcmp(parts[0]->state, "COMPLETING") == 0 && parts[0]->exit_signal == 0 &&
           parts[0]->exit_code == r->script_rc;
}

/* Where the job is, from the last round and its output file. */
static void follow(SlurmRun *r)
{
    read_output(r);
    /* Our own stop: the exit line says how it went as soon as Slurm says the script is over
     * (COMPLETING: the job's end may take a while, Slurm queues what follows); an exit line
     * while Slurm still has it RUNNING is one the job's command printed, and believing it
     * would count a run still running as stopped with its checkpoint written. Any other end
     * waits for Slurm's word on it: a job someone else cancelled checkpoints and exits 0 too,
     * but it is a death (CANCELLED). */
    if (r->script_rc >= 0 && r->stop_asked && !r->end_seen_ms && !script_over_in_slurm(r))
        r->s->round_now = 1; /* Slurm's word on it, at once, within the cadence (tick) */
    if (r->script_rc >= 0 && r->stop_asked && script_over_in_slurm(r)) {
        char st[32];
        snprintf(st, sizeof st, "exited %d", r->script_rc);
        r->saved = r->script_rc == 0;
        r->ran = 1;
        liveslurm_run_end(r, st);
        return;
    }
    if (r->end_seen_ms) {
        liveslurm_end_held(r); /* Slurm has said how it ended: only its exit line is awaited */
        return;
    }
    LiveSlurm *s = r->s;
    if (s->rounds <= r->round_at_submit)
        return; /* no round has seen it yet */
    const SlurmJobInfo *parts[16];
    size_t n = slurm_jobinfo_components(&s->jobs, r->id, parts, 16);
    if (n > 16)
        n = 16;
    if (n == 0) {
        liveslurm_ended_in_slurm(r, NULL, "slurm: the job is gone from the controller");
        return;
    }
    const SlurmJobInfo *j = parts[0];
    snprintf(r->state, sizeof r->state, "%s", j->state);
    if (r->script_rc >= 0 && s->rounds > r->line_round && j->restarts == 0 &&
        strcmp(j->state, "RUNNING") == 0)
        r->line_early = 1; /* the script is not over, and was not requeued, after its line */
    if (taken_off(r, j))
        return;
    if (strcmp(j->state, "PENDING") == 0) {
        /* "None": Slurm's word for a pending job it is about to start */
        snprintf(r->waiting, sizeof r->waiting, "%s", strcmp(j->reason, "None") ? j->reason : "");
        if (!liveslurm_size_reason(r->waiting)) {
            r->over_limit_ms = 0;
        } else if (!r->over_limit_ms) {
            r->over_limit_ms = clock_now_ms();
            s->look_now = 1; /* the nodes' states, read now rather than within node_round_s */
        }
        say_still_pending(r, j);
        return;
    }
    r->waiting[0] = 0;
    if (strcmp(j->state, "RUNNING") == 0) {
        if (!r->ran)
            r->running_since_ms = clock_now_ms();
        r->ran = 1; /* a stop asked while it was pending now sends the TERM */
        slurm_jobinfo_where(parts, n, r->granted, sizeof r->granted);
        return;
    }
    if (!slurm_jobinfo_ended(j->state))
        return;     /* CONFIGURING, COMPLETING, SUSPENDED...: not over yet */
    read_output(r); /* the last lines, written before it ended */
    char status[300];
    liveslurm_status_text(j, r->ran, status, sizeof status);
    /* cancelled by someone else, the job may still have checkpointed and exited 0 */
    liveslurm_ended_in_slurm(r, j, status);
}

/* The run's call collected if it answered, where its job is, then the call that is due. */
static void step(void *run)
{
    SlurmRun *r = run;
    if (!r->ended)
        liveslurm_run_calls(r);
    if (r->ended || r->argv)
        return; /* no job id yet */
    follow(r);
    if (!r->ended)
        liveslurm_run_calls(r);
}

/* A stop goes as the call that is due once the one in flight (its sbatch, an earlier
 * scancel) has answered: never two at once, never before the job id is known. */
static int signal_run(void *run, int signo, Error *err)
{
    SlurmRun *r = run;
    if (r->ended)
        return error_set(err, "%s: not running", r->label);
    if (r->end_seen_ms) /* nothing to signal; asked again until it ends, which comes soon */
        return error_set(err, "%s: ended in Slurm, its exit line awaited", r->label);
    if (signo != SIGKILL && signo != SIGTERM)
        return error_set(err, "%s: only SIGTERM and SIGKILL are sent", r->label);
    if (r->argv && !r->call && !r->maybe_submitted) {
        liveslurm_run_end(r, "cancelled while pending"); /* never submitted: nothing to stop */
        return 0;
    }
    r->stop_asked = 1;
    r->kill_asked |= signo == SIGKILL;
    liveslurm_run_calls(r);
    if (r->ended || r->argv)
        return 0; /* cancelled once its sbatch (or the look-up by name) answers */
    /* Pending: nothing to checkpoint. --state=PENDING leaves it alone if it started since
     * the last round; the next round then sees it running and the TERM goes. */
    if (signo == SIGTERM && !r->ran)
        return 0;
    /* Not through yet: the driver asks again, and its stop clock starts once it is. */
    if (signo == SIGTERM ? r->term_sent || r->kill_sent : r->kill_sent)
        return 0;
    return error_set(err, "%s: %s", r->label,
                     r->fails ? "waiting for the controller" : "scancel on its way");
}

static int running(const void *run)
{
    return !((const SlurmRun *)run)->ended;
}

/* Not while suspended: its stopped processes cannot act on a TERM, and on the harness the
 * scancel --signal=TERM did not answer until Slurm resumed the job (24 s), which a longer
 * suspension would turn into a timeout read as the controller away. The driver's stop waits
 * for the resume instead (its stop clock starts with the TERM that goes then). */
static int ready(const void *run)
{
    const SlurmRun *r = run;
    if (r->suspended_ms)
        return 0;
    return !r->ran || r->progress.seen > 0 || clock_now_ms() - r->running_since_ms > READY_AFTER_MS;
}

static const JobProgress *progress(const void *run)
{
    return &((const SlurmRun *)run)->progress;
}

static const char *status(const void *run)
{
    return ((const SlurmRun *)run)->status;
}

static int rank0_saved(const void *run)
{
    return ((const SlurmRun *)run)->saved;
}

static size_t size(const void *run)
{
    (void)run;
    return 1;
}

static const char *label(const void *run)
{
    return ((const SlurmRun *)run)->label;
}

static const char *granted(const void *run)
{
    return ((const SlurmRun *)run)->granted;
}

static const char *preempted(const void *run)
{
    return ((const SlurmRun *)run)->taken_how;
}

static int suspended(const void *run)
{
    const SlurmRun *r = run;
    return !r->ended && r->suspended_ms != 0;
}

static const char *refused_start(const void *run, LiveRefusal *refusal)
{
    const SlurmRun *r = run;
    if (!r->ended || !r->refused)
        return NULL;
    *refusal = r->refusal;
    return r->refused_why;
}

/* Pending on a limit of its size, and the nodes' states read since it was first seen so:
 * PartitionNodeLimit also stands for a requested node down or drained, which the driver then
 * knows (its run moves instead). */
static const char *over_limit(const void *run, LiveRefusal *refusal)
{
    const SlurmRun *r = run;
    if (r->ended || r->ran || !r->over_limit_ms || r->s->states_asked_ms < r->over_limit_ms)
        return NULL;
    if (refusal)
        *refusal = liveslurm_nodes_reason(r->waiting) ? LIVERUN_REFUSED_TOO_MANY_NODES
                                                      : LIVERUN_REFUSED_TOO_BIG;
    return r->waiting;
}

static const char *waiting(const void *run)
{
    const SlurmRun *r = run;
    if (r->ended)
        return "";
    const char *why = liveslurm_run_calls_waiting(r);
    return why ? why : r->waiting;
}

static void free_run(void *run)
{
    SlurmRun *r = run;
    if (!r)
        return;
    liveslurm_run_calls_end(r); /* nothing is left behind: its call, its job */
    if (!r->ended)
        r->s->active--;
    liveslurm_unfollow(r->s, r->id);
    run_free_fields(r);
}

const LiveRunOps LIVERUN_SLURM = {.name = "slurm",
                                  .start = start,
                                  .signal = signal_run,
                                  .step = step,
                                  .running = running,
                                  .ready = ready,
                                  .progress = progress,
                                  .status = status,
                                  .rank0_saved = rank0_saved,
                                  .size = size,
                                  .label = label,
                                  .granted = granted,
                                  .waiting = waiting,
                                  .preempted = preempted,
                                  .suspended = suspended,
                                  .refused = refused_start,
                                  .over_limit = over_limit,
                                  .tick = liveslurm_tick,
                                  .watch = liveslurm_watch,
                                  .nodes = liveslurm_nodes,
                                  .pollfds = liveslurm_pollfds,
                                  .run_pollfds = liveslurm_run_pollfds,
                                  .check_folders = liveslurm_check_folders,
                                  .free = free_run};
