/* The live driver's runs as Slurm batch jobs: submit, poll, signal, read progress
 * (remote/live/liverun_slurm.h). */
#include "remote/live/liverun_slurm_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/model/protocol.h"

enum { READY_AFTER_MS = 10000 }; /* running this long without a progress line: signal anyway */

typedef struct {
    LiveSlurm *s;
    char id[32], label[48];
    char *dir;   /* the job's folder */
    char **argv; /* sbatch's, while it is not submitted yet (the controller did not answer) */
    int fails;   /* calls for this run the controller did not answer, in a row */
    int64_t next_try_ms; /* and when the next may go (liveslurm_backoff_s) */
    char *out_path;
    long offset;
    char partial[4096];
    size_t plen;
    int partial_cut;
    JobProgress progress;
    long round_at_submit;
    int ran, ended, stop_asked, term_sent, saved;
    int script_rc; /* the batch script's exit line: its status; -1 before it */
    int64_t running_since_ms;
    char state[24], waiting[96], granted[256], status[300];
} SlurmRun;

static int scancel(LiveSlurm *s, const char *id, const char *opt1, const char *opt2, Error *err)
{
    const char *argv[6] = {"scancel"};
    size_t n = 1;
    if (opt1)
        argv[n++] = opt1;
    if (opt2)
        argv[n++] = opt2;
    argv[n++] = id;
    argv[n] = NULL;
    return slurm_ctl_run(s->o.ctl, argv, NULL, err) == 0 ? 0 : -1;
}

/* mkdir -p, and the folder's absolute path (the nodes see the same file system). */
static char *make_dir(const char *job_dir, const char *name, Error *err)
{
    char cwd[4096] = "";
    if (job_dir[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        error_set(err, "job folder: %s", strerror(errno));
        return NULL;
    }
    char *path = NULL;
    if (asprintf(&path, "%s%s%s/%s", cwd, cwd[0] ? "/" : "", job_dir, name) < 0) {
        error_set(err, "job: out of memory");
        return NULL;
    }
    for (char *p = path + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                error_set(err, "job folder %s: %s", path, strerror(errno));
                free(path);
                return NULL;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return path;
}

/* A call for r the controller did not answer: said, and the next try backs off. 0 when
 * Slurm answered (a refusal). */
static int unanswered(SlurmRun *r, const Error *err)
{
    if (!liveslurm_no_controller(err->msg))
        return 0;
    liveslurm_controller_lost(r->s, err->msg);
    r->fails++;
    r->next_try_ms =
        clock_now_ms() + (int64_t)(liveslurm_backoff_s(r->s->o.poll_s, r->fails) * 1000);
    return 1;
}

/* scancel for r, not before its back-off is over: a controller that does not answer makes
 * each try wait ~9 s, and the driver asks again every step until one goes through. */
static int scancel_run(SlurmRun *r, const char *opt1, const char *opt2, Error *err)
{
    if (r->fails && clock_now_ms() < r->next_try_ms)
        return error_set(err, "%s: waiting for the controller", r->label);
    if (scancel(r->s, r->id, opt1, opt2, err) < 0) {
        unanswered(r, err);
        return -1;
    }
    r->fails = 0;
    liveslurm_controller_back(r->s);
    return 0;
}

/* sbatch: 0 submitted, 1 the controller did not answer (kept, retried), -1 refused. */
static int submit(SlurmRun *r, Error *err)
{
    LiveSlurm *s = r->s;
    char *out = NULL;
    if (slurm_ctl_run(s->o.ctl, (const char *const *)r->argv, &out, err) != 0) {
        free(out);
        return unanswered(r, err) ? 1 : -1;
    }
    liveslurm_controller_back(s);
    long id = liveslurm_parse_jobid(out);
    if (id < 0) {
        error_set(err, "sbatch --parsable answered '%.60s': expected a job id", out);
        free(out);
        return -1;
    }
    free(out);
    snprintf(r->id, sizeof r->id, "%ld", id);
    if (asprintf(&r->out_path, "%s/slurm-%ld.out", r->dir, id) < 0)
        r->out_path = NULL; /* left undefined by a failed asprintf */
    if (!r->out_path || liveslurm_remember(s, r->id) < 0) {
        Error ignored;
        scancel(s, r->id, NULL, NULL, &ignored);
        return error_set(err, "job: out of memory");
    }
    snprintf(r->label, sizeof r->label, "Slurm job %ld", id);
    r->round_at_submit = s->rounds + (s->round != NULL); /* one in flight cannot hold it */
    r->fails = 0;
    liveslurm_argv_free(r->argv);
    r->argv = NULL;
    return 0;
}

static void run_free_fields(SlurmRun *r)
{
    liveslurm_argv_free(r->argv);
    free(r->dir);
    free(r->out_path);
    free(r);
}

static void *start(void *ctx, const LiveRunSpec *spec, Error *err)
{
    LiveSlurm *s = ctx;
    const JobAlloc *a = spec->alloc;
    char *dir = make_dir(spec->job_dir, spec->name, err);
    if (!dir)
        return NULL;
    char *script = liveslurm_script(spec->command_template, spec->name, a, err);
    char *script_path = NULL;
    SlurmRun *r = calloc(1, sizeof *r);
    int *gpus = calloc(a->n_hosts ? a->n_hosts : 1, sizeof *gpus);
    if (!script || !gpus || !r || asprintf(&script_path, "%s/tunedeck-job.sbatch", dir) < 0) {
        if (script)
            error_set(err, "job: out of memory");
        goto fail;
    }
    FILE *f = fopen(script_path, "w");
    if (!f || fputs(script, f) < 0 || fclose(f) != 0) {
        error_set(err, "%s: cannot write", script_path);
        goto fail;
    }
    for (size_t h = 0; h < a->n_hosts; h++)
        gpus[h] = a->hosts[h].gpus;
    r->s = s;
    r->script_rc = -1;
    r->dir = dir;
    dir = NULL;
    r->argv = liveslurm_sbatch_argv(spec->name, r->dir, s->o.partition, spec->node_names, gpus,
                                    a->n_hosts, script_path);
    if (!r->argv) {
        error_set(err, "job: out of memory");
        goto fail;
    }
    /* Not answered: the run waits for the controller (waiting()) and step() tries again. */
    snprintf(r->label, sizeof r->label, "no Slurm job yet");
    if (submit(r, err) < 0)
        goto fail;
    s->active++; /* its state comes with the next round: never more than one a poll_s */
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
    return NULL;
}

/* The batch script's last line, "tunedeck-batch-exit JOBID STATUS": this job's, not a line
 * the job's own output happens to hold. */
static void exit_line(SlurmRun *r)
{
    size_t ml = strlen(LIVESLURM_EXIT_MARK), il = strlen(r->id);
    const char *p = r->partial;
    if (r->partial_cut || strncmp(p, LIVESLURM_EXIT_MARK, ml) != 0 ||
        strncmp(p + ml, r->id, il) != 0 || p[ml + il] != ' ')
        return;
    char *end;
    long rc = strtol(p + ml + il + 1, &end, 10);
    if (end != p + ml + il + 1 && !*end && rc >= 0 && rc < 256)
        r->script_rc = (int)rc;
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
                if (!r->partial_cut && protocol_parse_line(r->partial, &ev, &e) == 0) {
                    if (ev.kind == EVENT_PROGRESS) {
                        r->progress.step = ev.step;
                        r->progress.epoch = ev.epoch;
                        r->progress.loss = ev.loss;
                        r->progress.examples_per_s = ev.examples_per_s;
                        r->progress.seen++;
                    }
                    trial_event_clear(&ev);
                }
                r->plen = 0;
                r->partial_cut = 0;
            }
        }
    }
    fclose(f);
}

static void end(SlurmRun *r, const char *status)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    r->ended = 1;
    r->granted[0] = r->waiting[0] = 0;
    r->s->active--;
}

static void step(void *run)
{
    SlurmRun *r = run;
    if (r->ended)
        return;
    if (r->argv) { /* its sbatch met no controller: again once the back-off is over */
        Error err;
        if (clock_now_ms() >= r->next_try_ms && submit(r, &err) < 0) {
            char st[300];
            snprintf(st, sizeof st, "not started: %s", err.msg);
            end(r, st);
        }
        return;
    }
    read_output(r);
    /* Our own stop: the exit line says how it went at once (the job may still be completing:
     * Slurm queues what follows). Any other end waits for Slurm's word on it: a job someone
     * else cancelled checkpoints and exits 0 too, but it is a death (CANCELLED). */
    if (r->script_rc >= 0 && r->stop_asked) {
        char st[32];
        snprintf(st, sizeof st, "exited %d", r->script_rc);
        r->saved = r->script_rc == 0;
        r->ran = 1;
        end(r, st);
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
        end(r, "slurm: the job is gone from the controller");
        return;
    }
    const SlurmJobInfo *j = parts[0];
    snprintf(r->state, sizeof r->state, "%s", j->state);
    if (strcmp(j->state, "PENDING") == 0) {
        /* "None": Slurm's word for a pending job it is about to start */
        snprintf(r->waiting, sizeof r->waiting, "%s", strcmp(j->reason, "None") ? j->reason : "");
        Error ignored;
        if (r->stop_asked && r->fails) /* its cancel met no controller */
            scancel_run(r, "--state=PENDING", NULL, &ignored);
        return;
    }
    r->waiting[0] = 0;
    if (strcmp(j->state, "RUNNING") == 0) {
        if (!r->ran)
            r->running_since_ms = clock_now_ms();
        r->ran = 1;
        slurm_jobinfo_where(parts, n, r->granted, sizeof r->granted);
        if (r->stop_asked && !r->term_sent) { /* it started while its pending cancel flew */
            Error err;
            if (scancel_run(r, "--signal=TERM", "--full", &err) == 0)
                r->term_sent = 1;
        }
        return;
    }
    if (!slurm_jobinfo_ended(j->state))
        return;     /* CONFIGURING, COMPLETING, SUSPENDED...: not over yet */
    read_output(r); /* the last lines, written before it ended */
    char status[300];
    liveslurm_status_text(j, r->ran, status, sizeof status);
    /* cancelled by someone else, the job may still have checkpointed and exited 0 */
    r->saved = strcmp(status, "exited 0") == 0 || r->script_rc == 0;
    end(r, status);
}

static int signal_run(void *run, int signo, Error *err)
{
    SlurmRun *r = run;
    if (r->ended)
        return error_set(err, "%s: not running", r->label);
    if (r->argv && (signo == SIGKILL || signo == SIGTERM)) {
        end(r, "cancelled while pending"); /* never submitted: nothing to stop */
        return 0;
    }
    if (signo == SIGKILL)
        return scancel_run(r, NULL, NULL, err);
    if (signo != SIGTERM)
        return error_set(err, "%s: only SIGTERM and SIGKILL are sent", r->label);
    r->stop_asked = 1;
    if (r->ran) {
        /* the controller not answering: the driver asks again, and its stop clock starts
         * when the TERM goes through */
        if (scancel_run(r, "--signal=TERM", "--full", err) < 0)
            return -1;
        r->term_sent = 1;
        return 0;
    }
    /* Pending: nothing to checkpoint. --state=PENDING leaves it alone if it started since
     * the last round; the next round then sees it running and sends the TERM. */
    Error ignored;
    scancel_run(r, "--state=PENDING", NULL, &ignored);
    return 0;
}

static int running(const void *run)
{
    return !((const SlurmRun *)run)->ended;
}

static int ready(const void *run)
{
    const SlurmRun *r = run;
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

static const char *waiting(const void *run)
{
    const SlurmRun *r = run;
    if (r->ended)
        return "";
    if (r->argv)
        return "the controller (sbatch is retried)";
    if (r->fails)
        return "the controller (scancel is retried)";
    return r->waiting;
}

static void free_run(void *run)
{
    SlurmRun *r = run;
    if (!r)
        return;
    if (!r->ended) { /* nothing is left behind: the job is cancelled */
        Error err;
        if (!r->argv)
            scancel(r->s, r->id, NULL, NULL, &err);
        r->s->active--;
    }
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
                                  .tick = liveslurm_tick,
                                  .watch = liveslurm_watch,
                                  .nodes = liveslurm_nodes,
                                  .free = free_run};
