/* The live driver's runs over SSH: a JobGroup on the host pool (remote/live/liverun.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/jobdir.h"
#include "remote/live/jobgroup.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"
#include "remote/ssh/hostpool.h"

/* A run over SSH: its group, what a stop of it left behind needs (its hosts; each member's
 * mark is its JobRun's), and the backend it belongs to. */
typedef struct {
    JobGroup *g;
    LiveRunSsh *b;
    size_t *hosts; /* member i's pool host */
    char job[64];
} SshRun;

static void *ssh_start(void *ctx, const LiveRunSpec *s, LiveRefusal *refusal, Error *err)
{
    *refusal = LIVERUN_REFUSED_ONCE;
    LiveRunSsh *b = ctx;
    size_t n = s->alloc->n_hosts;
    SshRun *r = calloc(1, sizeof *r);
    if (!r || !(r->hosts = calloc(n ? n : 1, sizeof *r->hosts))) {
        free(r);
        error_set(err, "job: out of memory");
        return NULL;
    }
    r->b = b;
    snprintf(r->job, sizeof r->job, "%s", s->name);
    /* no mark in the text: each member's wrapping shell exports its own (jobgroup_start) */
    char *t = schedlive_job_template(s->command_template, s->job_dir, s->name, err);
    for (size_t h = 0; h < n; h++)
        r->hosts[h] = (size_t)s->nodes[h];
    r->g = t ? jobgroup_start(b->pool, r->hosts, b->per_host, t, s->alloc, err) : NULL;
    free(t);
    if (!r->g) {
        free(r->hosts);
        free(r);
        /* a name, folder or template the wrapper refuses is bad input; an exec that could
         * not open (its host's connection dropped) may pass next time */
        *refusal = err->kind == ERROR_INPUT ? LIVERUN_REFUSED_FOR_GOOD : LIVERUN_REFUSED_ONCE;
        return NULL;
    }
    return r;
}

static int ssh_signal(void *run, int signo, Error *err)
{
    return jobgroup_signal(((SshRun *)run)->g, signo, err);
}

static void ssh_step(void *run)
{
    jobgroup_step(((SshRun *)run)->g);
}

static int ssh_running(const void *run)
{
    return jobgroup_running(((const SshRun *)run)->g);
}

static int ssh_ready(const void *run)
{
    return jobgroup_ready(((const SshRun *)run)->g);
}

static const JobProgress *ssh_progress(const void *run)
{
    return jobgroup_progress(((const SshRun *)run)->g);
}

static const char *ssh_status(const void *run)
{
    return jobgroup_status(((const SshRun *)run)->g);
}

static int ssh_rank0_saved(const void *run)
{
    return jobgroup_rank0_saved(((const SshRun *)run)->g);
}

static size_t ssh_size(const void *run)
{
    return jobgroup_size(((const SshRun *)run)->g);
}

static int keep_stale(LiveRunSsh *b, const char *job, const char *host, long pgid,
                      const char *mark)
{
    char(*grown)[64] = realloc(b->stale_job, (b->stale.n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    b->stale_job = grown;
    if (orphans_add(&b->stale, 0, host, pgid, mark) < 0)
        return -1;
    snprintf(b->stale_job[b->stale.n - 1], sizeof *grown, "%s", job);
    return 0;
}

/* A member whose end its shell did not report (its connection dropped, or a signal ended the
 * shell, as when only sshd died) is kept, to be stopped once its host answers. */
static void ssh_free(void *run)
{
    SshRun *r = run;
    for (size_t i = 0; i < jobgroup_size(r->g); i++) {
        const JobRun *m = jobgroup_member(r->g, i);
        if (!jobctl_may_linger(m) || jobctl_pgid(m) < 2)
            continue;
        HostInfo hi;
        hostpool_info(r->b->pool, r->hosts[i], &hi);
        if (keep_stale(r->b, r->job, hi.name, jobctl_pgid(m), jobctl_mark(m)) < 0)
            livelog(r->b->log, r->b->userdata,
                    "%s: out of memory: its run left on %s (process group %ld) is not stopped",
                    r->job, hi.name, jobctl_pgid(m));
    }
    jobgroup_free(r->g);
    free(r->hosts);
    free(r);
}

#define CHECK_WAIT "waiting for its job folders' check"
enum { CHECK_TIMEOUT_MS = 30000, CHECK_RETRY_MS = 10000 };

/* Host i's job folders (jobdir.h), for a host not checked before the run or back from down:
 * checked once it answers (one probe at a time), so that no job is placed there before; 1
 * when they passed. A refusal is said once and holds until the host goes down; a check that
 * got no answer is tried again after a pause. */
static int folders_ok(LiveRunSsh *b, size_t i, const HostInfo *hi, int64_t now_ms)
{
    if (!b->checked)
        return 1;
    if (hi->state == HOST_DOWN && hi->connects > 0 && !b->probes[i])
        b->checked[i] = 0; /* checked afresh when it answers again */
    JobdirProbe *pr = b->probes[i];
    if (pr && (jobdir_probe_done(pr) || now_ms - jobdir_probe_began_ms(pr) > CHECK_TIMEOUT_MS)) {
        Error e;
        b->probes[i] = NULL;
        if (jobdir_probe_end(pr, hi->name, b->job_dir, &e) == 0) {
            b->checked[i] = 1;
        } else if (e.kind == ERROR_INPUT) {
            b->checked[i] = -1;
            livelog(b->log, b->userdata, "%s: no job goes there", e.msg);
        } else {
            b->probe_retry_ms[i] = now_ms + CHECK_RETRY_MS;
            livelog(b->log, b->userdata, "%s: tried again in %d s", e.msg, CHECK_RETRY_MS / 1000);
        }
    }
    if (hi->state == HOST_IDLE && b->checked[i] == 0)
        hostpool_connect(b->pool, i, 1); /* connected for its check */
    if (hi->state == HOST_READY && b->checked[i] == 0 && !b->probes[i] &&
        now_ms >= b->probe_retry_ms[i]) {
        Error e;
        if (!(b->probes[i] = jobdir_probe_begin(b->pool, i, b->folder_cmd, &e))) {
            b->probe_retry_ms[i] = now_ms + CHECK_RETRY_MS;
            livelog(b->log, b->userdata, "%s: tried again in %d s", e.msg, CHECK_RETRY_MS / 1000);
        }
    }
    return b->checked[i] == 1;
}

/* Every host the pool has tried: reconnected whenever it drops (capped back-off), so one
 * that went down can come back; one never asked for (IDLE) is left to the first start. */
static int ssh_watch(void *ctx, const char *const *names, const int *unusable, size_t n,
                     Error *err)
{
    LiveRunSsh *b = ctx;
    b->nodes = calloc(n ? n : 1, sizeof *b->nodes);
    if (b->folder_cmd) {
        b->checked = calloc(n ? n : 1, sizeof *b->checked);
        b->probes = calloc(n ? n : 1, sizeof *b->probes);
        b->probe_retry_ms = calloc(n ? n : 1, sizeof *b->probe_retry_ms);
    }
    if (!b->nodes || (b->folder_cmd && (!b->checked || !b->probes || !b->probe_retry_ms)))
        return error_set(err, "live: out of memory");
    b->n_nodes = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(b->nodes[i].name, sizeof b->nodes[i].name, "%s", names[i]);
        HostInfo hi;
        if (i < hostpool_size(b->pool)) {
            hostpool_info(b->pool, i, &hi);
            if (hi.state != HOST_IDLE)
                hostpool_connect(b->pool, i, 1);
            /* down already, or still connecting when schedule --live gave up on it and
             * drained it: no news until it answers (read as usable, a host still connecting
             * was undrained at the first look, and never drained again if it then failed,
             * having never connected) */
            b->nodes[i].unusable = (unusable && unusable[i]) || hi.state == HOST_DOWN;
            if (b->checked && b->prechecked && b->prechecked[i])
                b->checked[i] = 1;
            else if (b->checked && !b->nodes[i].unusable) { /* no job before its check */
                b->nodes[i].unusable = 1;
                snprintf(b->nodes[i].why, sizeof b->nodes[i].why, "%s", CHECK_WAIT);
            }
        }
    }
    return 0;
}

/* A host the pool finds down after it was up is unusable, one that is ready usable again
 * once its job folders passed (folders_ok);
 * one on its way (connecting, handshake) keeps what it was, so a reconnect does not flap
 * the model. A host never reached stays as the start left it (schedule --live drains it
 * there; a start on it fails as a death, twice then the job is left failed). */
static const LiveNodeState *ssh_nodes(void *ctx, size_t *n, long *looks)
{
    LiveRunSsh *b = ctx;
    int64_t now_ms = clock_now_ms();
    for (size_t i = 0; i < b->n_nodes && i < hostpool_size(b->pool); i++) {
        HostInfo hi;
        hostpool_info(b->pool, i, &hi);
        LiveNodeState *v = &b->nodes[i];
        int down = hi.state == HOST_DOWN && hi.connects > 0;
        int checked = folders_ok(b, i, &hi, now_ms);
        int unusable = down ? 1 : hi.state == HOST_READY ? !checked : v->unusable;
        if (unusable == v->unusable)
            continue;
        v->unusable = unusable;
        if (down)
            snprintf(v->why, sizeof v->why, "down over SSH (%s)",
                     hi.last_error[0] ? hi.last_error : "no answer");
        else if (unusable)
            snprintf(v->why, sizeof v->why, "%s",
                     b->checked[i] < 0 ? "refused for its job folders (said above)" : CHECK_WAIT);
        else if (b->checked)
            snprintf(v->why, sizeof v->why,
                     "it answers over SSH again and its job folders are checked");
        else
            snprintf(v->why, sizeof v->why, "it answers over SSH again");
        b->looks++;
    }
    *n = b->n_nodes;
    *looks = b->looks;
    return b->nodes;
}

static int host_ready(const LiveRunSsh *b, const char *name)
{
    long h = hostpool_find(b->pool, name);
    HostInfo hi;
    if (h < 0)
        return 0;
    hostpool_info(b->pool, (size_t)h, &hi);
    return hi.state == HOST_READY;
}

/* The stop in flight has ended: a group stopped or gone is done with; one whose host did not
 * answer, or that still runs, is tried again after a pause. */
static void stale_stop_done(LiveRunSsh *b, int64_t now_ms)
{
    orphans_stop_end(b->stop);
    b->stop = NULL;
    int again = 0;
    for (size_t i = 0; i < b->batch.n; i++) {
        const Orphan *o = &b->batch.items[i];
        int gone = !strcmp(o->result, "gone"), done = gone || !strcmp(o->result, "stopped");
        if (!gone) /* nothing of it left: the usual end, said by no one */
            livelog(b->log, b->userdata, "%s: its run left on %s when its end was not seen "
                                         "(process group %ld): %s",
                    b->batch_job[i], o->machine, o->pgid,
                    done          ? "stopped"
                    : o->result[0] ? o->result
                                   : "no answer yet, tried again");
        size_t k = 0;
        for (size_t j = 0; j < b->stale.n; j++) {
            const Orphan *s = &b->stale.items[j];
            int same = done && s->pgid == o->pgid && !strcmp(s->machine, o->machine) &&
                       !strcmp(s->mark, o->mark);
            if (!same) {
                b->stale.items[k] = *s;
                memcpy(b->stale_job[k++], b->stale_job[j], sizeof *b->stale_job);
            }
        }
        b->stale.n = k;
        again |= !done;
    }
    orphans_clear(&b->batch);
    free(b->batch_job);
    b->batch_job = NULL;
    if (again)
        b->retry_at_ms = now_ms + 10000;
}

/* Stops the runs left behind on hosts that answer (one stop at a time, on the driver's loop:
 * the pool is stepped with the runs' channels). */
static void ssh_tick(void *ctx, int64_t now_ms)
{
    LiveRunSsh *b = ctx;
    if (b->stop && orphans_stop_settled(b->stop, now_ms))
        stale_stop_done(b, now_ms);
    if (b->stop || now_ms < b->retry_at_ms || b->stale.n == 0)
        return;
    b->batch_job = calloc(b->stale.n, sizeof *b->batch_job);
    if (!b->batch_job)
        return;
    for (size_t i = 0; i < b->stale.n; i++) {
        const Orphan *o = &b->stale.items[i];
        if (!host_ready(b, o->machine) || orphans_add(&b->batch, 0, o->machine, o->pgid, o->mark) < 0)
            continue;
        memcpy(b->batch_job[b->batch.n - 1], b->stale_job[i], sizeof *b->batch_job);
    }
    if (b->batch.n)
        b->stop = orphans_stop_begin(b->pool, &b->batch, 10.0);
    if (!b->stop) {
        orphans_clear(&b->batch);
        free(b->batch_job);
        b->batch_job = NULL;
    }
}

void liverun_ssh_clear(LiveRunSsh *b)
{
    /* the stop in flight, then one more of those left on hosts that answer now, waited on */
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            b->retry_at_ms = 0;
            ssh_tick(b, clock_now_ms());
        }
        if (b->stop) {
            orphans_stop_wait(b->stop);
            stale_stop_done(b, 0);
        }
    }
    for (size_t i = 0; i < b->stale.n; i++)
        livelog(b->log, b->userdata,
                "%s: its run left on %s when its end was not seen (process group %ld) may "
                "still run: the host did not answer again (stop it there by hand)",
                b->stale_job[i], b->stale.items[i].machine, b->stale.items[i].pgid);
    orphans_clear(&b->stale);
    free(b->stale_job);
    b->stale_job = NULL;
    for (size_t i = 0; b->probes && i < b->n_nodes; i++)
        if (b->probes[i])
            jobdir_probe_end(b->probes[i], "", "", NULL);
    free(b->probes);
    free(b->probe_retry_ms);
    free(b->checked);
    free(b->folder_cmd);
    b->probes = NULL;
    b->probe_retry_ms = NULL;
    b->checked = NULL;
    b->folder_cmd = NULL;
    free(b->nodes);
    b->nodes = NULL;
    b->n_nodes = 0;
}

const LiveRunOps LIVERUN_SSH = {.name = "ssh",
                                .tick = ssh_tick,
                                .watch = ssh_watch,
                                .nodes = ssh_nodes,
                                .start = ssh_start,
                                .signal = ssh_signal,
                                .step = ssh_step,
                                .running = ssh_running,
                                .ready = ssh_ready,
                                .progress = ssh_progress,
                                .status = ssh_status,
                                .rank0_saved = ssh_rank0_saved,
                                .size = ssh_size,
                                .free = ssh_free};
