/* The live driver's runs over SSH: a JobGroup on the host pool (remote/live/liverun.h). */
#include <stdio.h>
#include <stdlib.h>

#include "remote/live/jobgroup.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"
#include "remote/ssh/hostpool.h"

static void *ssh_start(void *ctx, const LiveRunSpec *s, Error *err)
{
    const LiveRunSsh *b = ctx;
    char *t = schedlive_job_template(s->command_template, s->job_dir, s->name, err);
    size_t n = s->alloc->n_hosts;
    size_t *pool_hosts = calloc(n ? n : 1, sizeof *pool_hosts);
    if (!t || !pool_hosts) {
        free(t);
        free(pool_hosts);
        if (t)
            error_set(err, "job: out of memory");
        return NULL;
    }
    for (size_t h = 0; h < n; h++)
        pool_hosts[h] = (size_t)s->nodes[h];
    JobGroup *g = jobgroup_start(b->pool, pool_hosts, b->per_host, t, s->alloc, err);
    free(pool_hosts);
    free(t);
    return g;
}

static int ssh_signal(void *run, int signo, Error *err)
{
    return jobgroup_signal(run, signo, err);
}

static void ssh_step(void *run)
{
    jobgroup_step(run);
}

static int ssh_running(const void *run)
{
    return jobgroup_running(run);
}

static int ssh_ready(const void *run)
{
    return jobgroup_ready(run);
}

static const JobProgress *ssh_progress(const void *run)
{
    return jobgroup_progress(run);
}

static const char *ssh_status(const void *run)
{
    return jobgroup_status(run);
}

static int ssh_rank0_saved(const void *run)
{
    return jobgroup_rank0_saved(run);
}

static size_t ssh_size(const void *run)
{
    return jobgroup_size(run);
}

static void ssh_free(void *run)
{
    jobgroup_free(run);
}

/* Every host the pool has tried: reconnected whenever it drops (capped back-off), so one
 * that went down can come back; one never asked for (IDLE) is left to the first start. */
static int ssh_watch(void *ctx, const char *const *names, size_t n, Error *err)
{
    LiveRunSsh *b = ctx;
    b->nodes = calloc(n ? n : 1, sizeof *b->nodes);
    if (!b->nodes)
        return error_set(err, "live: out of memory");
    b->n_nodes = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(b->nodes[i].name, sizeof b->nodes[i].name, "%s", names[i]);
        HostInfo hi;
        if (i < hostpool_size(b->pool)) {
            hostpool_info(b->pool, i, &hi);
            if (hi.state != HOST_IDLE)
                hostpool_connect(b->pool, i, 1);
            /* down already (schedule --live drained it at the start): no news until it
             * answers */
            b->nodes[i].unusable = hi.state == HOST_DOWN;
        }
    }
    return 0;
}

/* A host the pool finds down after it was up is unusable, one that is ready usable again;
 * one on its way (connecting, handshake) keeps what it was, so a reconnect does not flap
 * the model. A host never reached stays as the start left it (schedule --live drains it
 * there; a start on it fails as a death, twice then the job is left failed). */
static const LiveNodeState *ssh_nodes(void *ctx, size_t *n, long *looks)
{
    LiveRunSsh *b = ctx;
    for (size_t i = 0; i < b->n_nodes && i < hostpool_size(b->pool); i++) {
        HostInfo hi;
        hostpool_info(b->pool, i, &hi);
        LiveNodeState *v = &b->nodes[i];
        int unusable = hi.state == HOST_DOWN && hi.connects > 0 ? 1
                       : hi.state == HOST_READY                 ? 0
                                                                : v->unusable;
        if (unusable == v->unusable)
            continue;
        v->unusable = unusable;
        if (unusable)
            snprintf(v->why, sizeof v->why, "down over SSH (%s)",
                     hi.last_error[0] ? hi.last_error : "no answer");
        else
            snprintf(v->why, sizeof v->why, "it answers over SSH again");
        b->looks++;
    }
    *n = b->n_nodes;
    *looks = b->looks;
    return b->nodes;
}

void liverun_ssh_clear(LiveRunSsh *b)
{
    free(b->nodes);
    b->nodes = NULL;
    b->n_nodes = 0;
}

const LiveRunOps LIVERUN_SSH = {.name = "ssh",
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
