/* A live Slurm run's own calls to the controller, one at a time and never waited on: its
 * sbatch, the look-up of its job by name after an sbatch that got no answer, and the
 * scancels the driver asks for (remote/live/liverun_slurm_priv.h). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm_priv.h"

/* A call slower than this is said in the run's waiting text: sbatch and scancel answer in
 * well under a second while slurmctld is up, and take ~9 s to give up while it is not. */
enum { SLOW_CALL_MS = 2000 };

static void back_off(SlurmRun *r)
{
    r->fails++;
    r->next_try_ms =
        clock_now_ms() + (int64_t)(liveslurm_backoff_s(r->s->o.poll_s, r->fails) * 1000);
}

/* The job id is known (sbatch's answer, or the job found by its name): the rounds follow
 * it from the next one on. */
static void took_id(SlurmRun *r, long id)
{
    LiveSlurm *s = r->s;
    snprintf(r->id, sizeof r->id, "%ld", id);
    free(r->out_path);
    r->out_path = liveslurm_output_path(r->dir, r->job_name, r->id);
    if (!r->out_path || liveslurm_remember(s, r->id) < 0) {
        const char *argv[] = {"scancel", r->id, NULL};
        Error ignored;
        slurm_ctl_run(s->o.ctl, argv, NULL, &ignored); /* out of memory: rare, and ends it */
        liveslurm_run_end(r, "not started: job: out of memory");
        return;
    }
    snprintf(r->label, sizeof r->label, "Slurm job %ld", id);
    r->round_at_submit = s->rounds + liveslurm_round_flying(s); /* one under way cannot hold it */
    r->maybe_submitted = 0;
    if (r->unanswered) /* slurmctld may still take the unanswered one after the look-up */
        (void)liveslurm_doubted_add(s, r->job_name, r->id);
    liveslurm_argv_free(r->argv);
    r->argv = NULL;
}

static void start_call(SlurmRun *r, int kind, int cancel, const char *const *argv)
{
    Error err;
    if (!(r->call = slurm_call_start(r->s->o.ctl, argv, &err))) {
        /* nothing ran (no fork, no SSH channel): tried again like an unanswered call */
        if (liveslurm_no_controller(err.msg))
            liveslurm_controller_lost(r->s, err.msg);
        back_off(r);
        return;
    }
    r->call_kind = kind;
    r->call_cancel = cancel;
    r->call_since_ms = clock_now_ms();
}

/* The arguments that pick the submission's job by its unique name among this user's jobs
 * (the look-up's squeue, and the last scancel of a run whose sbatch may have been taken). */
typedef struct {
    char user[96], name[sizeof((SlurmRun *)0)->job_name + 16];
} NameArgs;

static NameArgs name_args(const SlurmRun *r)
{
    NameArgs a;
    snprintf(a.user, sizeof a.user, "--user=%s", r->s->user);
    snprintf(a.name, sizeof a.name, "--name=%s", r->job_name);
    return a;
}

/* squeue by the submission's unique name, this user's jobs, ended ones too (a job that ran
 * and ended before the look-up is still this submission's). */
static void start_lookup(SlurmRun *r)
{
    NameArgs a = name_args(r);
    const char *argv[] = {"squeue",      "--noheader", "--states=all", a.user, a.name,
                          "--format=%i", NULL};
    start_call(r, RUN_CALL_LOOKUP, CANCEL_NONE, argv);
}

static void start_cancel(SlurmRun *r, int which)
{
    const char *argv[5] = {"scancel"};
    size_t n = 1;
    if (which == CANCEL_PENDING)
        argv[n++] = "--state=PENDING";
    if (which == CANCEL_TERM) {
        argv[n++] = "--signal=TERM";
        argv[n++] = "--full";
    }
    argv[n++] = r->id;
    argv[n] = NULL;
    start_call(r, RUN_CALL_SCANCEL, which, argv);
}

/* A refused sbatch ends the run "not started" and says how (LiveRunOps.refused): Slurm's
 * refusal by its words (liveslurm_sbatch_refusal); an exit 0 without a job id may pass (its
 * job, if Slurm took one, is cancelled by name when the run is freed). */
static void sbatch_answered(SlurmRun *r, int rc, const char *out, const Error *err)
{
    long id = rc == 0 ? liveslurm_parse_jobid(out) : -1;
    if (rc == 0 && id >= 0) {
        took_id(r, id);
        return;
    }
    r->refused = 1;
    if (rc != 0) {
        r->refusal = liveslurm_sbatch_refusal(err->msg);
        snprintf(r->refused_why, sizeof r->refused_why, "%s", err->msg);
    } else {
        size_t n = strcspn(out, "\n");
        r->refusal = LIVERUN_REFUSED_ONCE;
        snprintf(r->refused_why, sizeof r->refused_why,
                 "sbatch --parsable exited 0 but %s%.*s%s: expected a job id, as '123' or "
                 "'123;CLUSTER'",
                 n ? "answered '" : "printed no job id", n > 60 ? 60 : (int)n, out,
                 n ? "'" : "");
    }
    r->maybe_submitted = rc == 0; /* sbatch took a job: cancelled by name when freed */
    char st[sizeof r->refused_why + 16];
    snprintf(st, sizeof st, "not started: %s", r->refused_why);
    liveslurm_run_end(r, st);
}

static void lookup_answered(SlurmRun *r, int rc, const char *out, const Error *err)
{
    char st[300];
    long id = rc == 0 ? liveslurm_parse_lookup(out) : -2;
    if (id >= 0) {
        liveslurm_say(r->s,
                      "slurm: %s's sbatch got no answer, but Slurm holds its job: Slurm job %ld "
                      "adopted, not submitted again",
                      r->job_name, id);
        took_id(r, id);
        return;
    }
    if (id == -1) { /* not accepted: the next sbatch (same name) goes at once */
        r->maybe_submitted = 0;
        return;
    }
    if (rc != 0)
        snprintf(st, sizeof st, "not started: %s", err->msg);
    else
        snprintf(st, sizeof st, "not started: squeue answered '%.60s': expected a job id", out);
    liveslurm_run_end(r, st);
}

/* Slurm refused a scancel (the job is already ending, say): nothing more is sent for it;
 * the rounds say how it ends. */
static void scancel_answered(SlurmRun *r, int which, int rc, const Error *err)
{
    if (rc != 0)
        liveslurm_say(r->s, "slurm: %s: scancel refused: %s", r->label, err->msg);
    if (which == CANCEL_PENDING)
        r->pending_cancel_sent = 1;
    else if (which == CANCEL_TERM)
        r->term_sent = 1;
    else if (which == CANCEL_KILL)
        r->kill_sent = 1;
    else if (which == CANCEL_REQUEUED)
        r->requeue_cancel_sent = 1;
}

static void collect(SlurmRun *r)
{
    char *out = NULL;
    Error err;
    int kind = r->call_kind, which = r->call_cancel;
    int rc = slurm_call_finish(r->call, &out, &err);
    r->call = NULL;
    r->call_kind = RUN_CALL_NONE;
    if (rc != 0 && liveslurm_no_controller(err.msg)) {
        free(out);
        liveslurm_controller_lost(r->s, err.msg);
        if (kind == RUN_CALL_SBATCH) /* it may have reached slurmctld before the answer was lost */
            r->maybe_submitted = r->unanswered = 1;
        back_off(r);
        return;
    }
    liveslurm_controller_back(r->s); /* answered, if only to refuse */
    r->fails = 0;
    if (kind == RUN_CALL_SBATCH)
        sbatch_answered(r, rc, out, &err);
    else if (kind == RUN_CALL_LOOKUP)
        lookup_answered(r, rc, out, &err);
    else
        scancel_answered(r, which, rc, &err);
    free(out);
}

/* The scancel the run needs now: a requeued copy's before the end before the TERM before a
 * pending job's cancel. */
static int cancel_due(const SlurmRun *r)
{
    if (r->taken == LIVESLURM_TAKEN_REQUEUED && !r->requeue_cancel_sent)
        return CANCEL_REQUEUED;
    if (r->kill_asked && !r->kill_sent)
        return CANCEL_KILL;
    if (r->stop_asked && r->ran && !r->term_sent && !r->kill_sent)
        return CANCEL_TERM;
    if (r->stop_asked && !r->ran && !r->pending_cancel_sent && !r->kill_sent)
        return CANCEL_PENDING;
    return CANCEL_NONE;
}

void liveslurm_run_calls(SlurmRun *r)
{
    if (r->call) {
        if (!liveslurm_call_poll(r->call))
            return;
        collect(r);
    }
    /* end_seen_ms: Slurm said the job ended, its exit line awaited: nothing left to cancel */
    if (r->ended || r->end_seen_ms || r->call || (r->fails && clock_now_ms() < r->next_try_ms))
        return;
    if (r->argv) {
        if (r->maybe_submitted)
            start_lookup(r); /* before any other sbatch: never two copies of one job */
        else if (r->stop_asked)
            liveslurm_run_end(r, "cancelled while pending"); /* never submitted */
        else
            start_call(r, RUN_CALL_SBATCH, CANCEL_NONE, (const char *const *)r->argv);
        return;
    }
    int which = cancel_due(r);
    if (which != CANCEL_NONE)
        start_cancel(r, which);
}

const char *liveslurm_run_calls_waiting(const SlurmRun *r)
{
    int submitting = r->argv != NULL;
    if (r->fails)
        return submitting ? "the controller (sbatch is retried)"
                          : "the controller (scancel is retried)";
    if (r->call && clock_now_ms() - r->call_since_ms > SLOW_CALL_MS)
        return submitting ? "the controller (submitting: sbatch has not answered yet)"
                          : "the controller (scancel has not answered yet)";
    return NULL;
}

size_t liveslurm_run_pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    const SlurmRun *r = run;
    return r->call && !r->ended ? slurm_call_pollfds(r->call, fds, cap, deadline_ms) : 0;
}

/* One poll() over the fds of every call not done yet, until each has ended or passed its own
 * deadline (slurm_call_step settles it then); then each is collected and freed. All started
 * together, so the wait is one call's timeout at most, however many there are. */
static void wait_all(SlurmCall **calls, size_t n_calls)
{
    for (;;) {
        struct pollfd fds[64];
        size_t n = 0, left = 0;
        int64_t deadline = -1;
        for (size_t i = 0; i < n_calls; i++) {
            if (liveslurm_call_poll(calls[i]))
                continue;
            left++;
            if (n < 64)
                n += slurm_call_pollfds(calls[i], fds + n, 64 - n, &deadline);
        }
        if (!left)
            break;
        int64_t wait = deadline < 0 ? 100 : deadline - clock_now_ms();
        (void)poll(fds, n, wait < 0 ? 0 : wait > 1000 ? 1000 : (int)wait);
    }
    for (size_t i = 0; i < n_calls; i++) {
        char *out = NULL;
        Error ignored;
        slurm_call_finish(calls[i], &out, &ignored);
        free(out);
    }
}

void liveslurm_final_add(LiveSlurm *s, SlurmCall *k)
{
    if (s->n_finals == s->cap_finals) {
        size_t nc = s->cap_finals ? s->cap_finals * 2 : 8;
        SlurmCall **grown = realloc(s->finals, nc * sizeof *grown);
        if (!grown) {
            wait_all(&k, 1); /* out of memory for the list: this one is waited for now */
            return;
        }
        s->finals = grown;
        s->cap_finals = nc;
    }
    s->finals[s->n_finals++] = k;
}

/* A final scancel, started now and waited for with the others (liveslurm_finals_wait). */
static void start_final(LiveSlurm *s, const char *const *argv)
{
    Error ignored;
    SlurmCall *k = slurm_call_start(s->o.ctl, argv, &ignored);
    if (k)
        liveslurm_final_add(s, k);
}

void liveslurm_run_calls_end(SlurmRun *r)
{
    int sbatch_flying = r->call && r->call_kind == RUN_CALL_SBATCH;
    slurm_call_free(r->call); /* its process group killed and reaped */
    r->call = NULL;
    /* A submission whose sbatch ever went unanswered may have a second job under its name,
     * taken after the last job round looked (or never watched: no memory to note it):
     * cancelled by the name, which is the submission's alone and covers its own job too,
     * ended or not. */
    if (r->unanswered) {
        NameArgs a = name_args(r);
        const char *argv[] = {"scancel", a.user, a.name, NULL};
        start_final(r->s, argv);
        return;
    }
    /* An ended run may still have a job in Slurm: one whose sbatch answered without its id. */
    if ((r->ended || r->end_seen_ms) && !(r->maybe_submitted && !r->id[0]))
        return;
    /* The driver's teardown: it stopped its runs first, so this is only for a run it could
     * not stop. */
    if (r->id[0]) {
        const char *argv[] = {"scancel", r->id, NULL};
        start_final(r->s, argv);
    } else if (sbatch_flying || r->maybe_submitted) {
        NameArgs a = name_args(r);
        const char *argv[] = {"scancel", a.user, a.name, NULL};
        start_final(r->s, argv);
    }
}

void liveslurm_finals_wait(LiveSlurm *s)
{
    wait_all(s->finals, s->n_finals);
    free(s->finals);
    s->finals = NULL;
    s->n_finals = s->cap_finals = 0;
}
