/* A live job's member runs, started, signalled and ended together. */
#include "remote/live/jobgroup.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/orphans.h"
#include "remote/ssh/groupstop.h"

struct JobGroup {
    JobRun **runs;
    char **addrs; /* each member's host, for the status of one that fails */
    size_t n_addrs;
    size_t n;
    int failed;       /* index of the first member that ended badly, -1 for none */
    int propagated;   /* the rest were sent SIGTERM after that */
    char status[320];
};

JobGroup *jobgroup_start(HostPool *p, const size_t *pool_hosts, int per_host, const char *t,
                         const JobAlloc *a, Error *err)
{
    if (a->n_hosts == 0) {
        error_set(err, "job: an allocation with no host");
        return NULL;
    }
    JobGroup *g = calloc(1, sizeof *g);
    size_t n = per_host ? a->n_hosts : 1;
    if (!g || !(g->runs = calloc(n, sizeof *g->runs)) ||
        !(g->addrs = calloc(n, sizeof *g->addrs))) {
        if (g)
            free(g->runs);
        free(g);
        error_set(err, "job: out of memory");
        return NULL;
    }
    g->n_addrs = n;
    g->failed = -1;
    /* Every member's command line is checked before any starts, so a bad template never
     * leaves part of a job running. */
    for (size_t i = 0; i < n; i++) {
        JobAlloc mine = *a;
        mine.node_rank = i;
        char *cmd = jobctl_command(t, &mine, err);
        if (!cmd) {
            jobgroup_free(g);
            return NULL;
        }
        free(cmd);
    }
    for (size_t i = 0; i < n; i++) {
        if (!(g->addrs[i] = strdup(a->hosts[i].addr ? a->hosts[i].addr : ""))) {
            jobgroup_free(g);
            error_set(err, "job: out of memory");
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        JobAlloc mine = *a;
        mine.node_rank = i;
        char mark[GROUPSTOP_MARK_CHARS + 1];
        if (orphans_mark_new(mark, err) < 0 ||
            !(g->runs[i] = jobctl_start(p, pool_hosts[i], t, &mine, mark, err))) {
            jobgroup_free(g); /* closing their channels ends the members already started */
            return NULL;
        }
        g->n = i + 1;
    }
    return g;
}

int jobgroup_signal(JobGroup *g, int signo, Error *err)
{
    int sent = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (!jobctl_running(g->runs[i]))
            continue;
        if (jobctl_signal(g->runs[i], signo, err) < 0)
            return -1;
        sent++;
    }
    return sent ? 0 : error_set(err, "job: not running");
}

static int ended_badly(const JobRun *r)
{
    const char *s = jobctl_status(r);
    return s[0] && strcmp(s, "exited 0") != 0;
}

void jobgroup_step(JobGroup *g)
{
    for (size_t i = 0; i < g->n; i++) {
        jobctl_step(g->runs[i]);
        if (g->failed < 0 && ended_badly(g->runs[i]))
            g->failed = (int)i;
    }
    int up = jobgroup_running(g);
    if (g->failed >= 0 && !g->propagated && jobgroup_ready(g) && up) {
        Error e;
        g->propagated = 1;
        jobgroup_signal(g, SIGTERM, &e);
    }
    if (!up && !g->status[0]) {
        if (g->failed > 0)
            /* the host as well as the rank: "node 1" alone sent the operator to the
             * placement to find which machine it was */
            snprintf(g->status, sizeof g->status, "node %d on %s: %s", g->failed,
                     g->addrs[g->failed], jobctl_status(g->runs[g->failed]));
        else
            snprintf(g->status, sizeof g->status, "%s", jobctl_status(g->runs[0]));
    }
}

int jobgroup_running(const JobGroup *g)
{
    for (size_t i = 0; i < g->n; i++)
        if (jobctl_running(g->runs[i]))
            return 1;
    return 0;
}

int jobgroup_ready(const JobGroup *g)
{
    for (size_t i = 0; i < g->n; i++)
        if (jobctl_running(g->runs[i]) && !jobctl_pgid(g->runs[i]))
            return 0;
    return 1;
}

size_t jobgroup_size(const JobGroup *g)
{
    return g->n;
}

const JobRun *jobgroup_member(const JobGroup *g, size_t i)
{
    return g->runs[i];
}

const JobProgress *jobgroup_progress(const JobGroup *g)
{
    return jobctl_progress(g->runs[0]);
}

const char *jobgroup_status(const JobGroup *g)
{
    return g->status;
}

int jobgroup_rank0_saved(const JobGroup *g)
{
    return !jobgroup_running(g) && strcmp(jobctl_status(g->runs[0]), "exited 0") == 0;
}

void jobgroup_free(JobGroup *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        jobctl_free(g->runs[i]);
    for (size_t i = 0; g->addrs && i < g->n_addrs; i++)
        free(g->addrs[i]);
    free(g->addrs);
    free(g->runs);
    free(g);
}
