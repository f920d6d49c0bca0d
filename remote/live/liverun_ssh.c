/* The live driver's runs over SSH: a JobGroup on the host pool (remote/live/liverun.h). */
#include <stdlib.h>

#include "remote/live/jobgroup.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"

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

const LiveRunOps LIVERUN_SSH = {.name = "ssh",
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
