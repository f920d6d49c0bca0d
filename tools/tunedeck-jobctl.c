/* tunedeck-jobctl: drives one live-mode job through the remote layer's job control, for the
 * integration test: start at one size, restart at another from its checkpoint, KILL and
 * restart again, stop.
 * Prints the job's progress and status lines as they happen. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/exitcode.h"
#include "remote/launch/orphans.h"
#include "remote/live/jobctl.h"
#include "remote/ssh/groupstop.h"

static HostPool *pool;

typedef struct {
    JobRun *j;
    int (*cond)(JobRun *);
} Wait;

static int holds(void *ctx)
{
    Wait *w = ctx;
    return w->cond(w->j);
}

/* The job's control runs after the pool's step, every round. */
static void job_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    (void)now_ms;
    jobctl_step(ctx);
}

/* Serves the pool until cond(j) holds or the deadline; returns whether it held. */
static int serve(JobRun *j, int (*cond)(JobRun *), double timeout_s)
{
    Wait w = {j, cond};
    EvLoop *loop = evloop_new();
    if (loop && hostpool_attach(pool, loop) > 0 && evloop_add(loop, NULL, job_step, j) > 0)
        evloop_run(loop, holds, &w, clock_now_ms() + (int64_t)(timeout_s * 1000));
    evloop_free(loop);
    return cond(j);
}

static int progress_twice(JobRun *j)
{
    return jobctl_progress(j)->seen >= 2 && jobctl_pgid(j);
}
static int stopped(JobRun *j)
{
    return !jobctl_running(j) && jobctl_status(j)[0];
}
static int restarted(JobRun *j)
{
    return jobctl_restarts(j) > 0 && jobctl_running(j);
}

static int progress_after_restart(JobRun *j)
{
    return jobctl_progress(j)->seen >= 2 && jobctl_pgid(j);
}

static int restarted_again(JobRun *j)
{
    return jobctl_restarts(j) > 1 && jobctl_running(j);
}

static void report(JobRun *j, const char *when)
{
    const JobProgress *p = jobctl_progress(j);
    printf("%s: pgid %ld progress step %ld epoch %.2f examples_per_s %.0f status '%s' mark %s\n",
           when, jobctl_pgid(j), p->step, p->epoch, p->examples_per_s, jobctl_status(j),
           jobctl_mark(j));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    /* --help as every installed program takes it (tunedeck(1)): the usage on stdout, exit 0. */
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        printf("usage: tunedeck-jobctl INVENTORY CHECKPOINT\n");
        return EXIT_OK;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: tunedeck-jobctl INVENTORY CHECKPOINT\n");
        return EXIT_USAGE;
    }
    Error err;
    Cluster *cl = cluster_load(argv[1], &err);
    if (!cl || !cl->job_command[0] || cl->n_machines < 2) {
        fprintf(stderr, "tunedeck-jobctl: %s\n",
                cl ? "expected job_command and 2 machines" : err.msg);
        return EXIT_BAD_INPUT;
    }
    HostPoolOptions po = {0};
    pool = hostpool_new(&po, &err);
    if (!pool || hostpool_add_cluster(pool, cl, &err) < 0) {
        fprintf(stderr, "tunedeck-jobctl: %s\n", err.msg);
        return EXIT_USAGE;
    }
    static const int first_gpu[] = {0};
    const JobHost both[] = {{.addr = cl->machines[0].name, .gpus = 1, .gpu_ids = first_gpu},
                            {.addr = cl->machines[1].name, .gpus = 1, .gpu_ids = first_gpu}};
    JobAlloc a = {.gpus = 2, .hosts = both, .n_hosts = 2, .resume = ""};
    /* a run's mark, as schedule --live gives each (its command inherits it here): the remote
     * suite's job leaves a setsid daemon that only the mark names */
    char mark[GROUPSTOP_MARK_CHARS + 1];
    JobRun *j = orphans_mark_new(mark, &err) < 0
                    ? NULL
                    : jobctl_start(pool, 0, cl->job_command, &a, mark, &err);
    int rc = 1;
    if (!j) {
        fprintf(stderr, "tunedeck-jobctl: %s\n", err.msg);
        goto out;
    }
    printf("given mark %s\n", mark);
    if (!serve(j, progress_twice, 10))
        goto fail;
    report(j, "started");
    JobAlloc b = {.gpus = 1, .hosts = both, .n_hosts = 1, .resume = argv[2]};
    /* a run's end waits up to the job's stop_timeout_s (20 s, by the host's clock) for what it
     * left in its group after the TERM (groupstop.h): the remote suite's leftover ignores TERM;
     * 45 s leaves a loaded host its SSH round trips and the restart */
    if (jobctl_restart(j, &b, &err) < 0 || !serve(j, restarted, 45) ||
        !serve(j, progress_after_restart, 10))
        goto fail;
    report(j, "restarted");
    FILE *ck = fopen(argv[2], "r");
    long ck_step = -1;
    if (ck && fscanf(ck, "%ld", &ck_step) == 1)
        printf("checkpoint at restart: step %ld\n", ck_step);
    if (ck)
        fclose(ck);
    /* the KILL jobctl.h documents for a stop not answered, then a restart: the run's channel
     * ends signalled by our own KILL, which must not read as a run that may linger */
    if (jobctl_signal(j, SIGKILL, &err) < 0 || !serve(j, stopped, 45))
        goto fail;
    report(j, "killed");
    if (jobctl_restart(j, &b, &err) < 0 || !serve(j, restarted_again, 45) ||
        !serve(j, progress_after_restart, 10))
        goto fail;
    report(j, "restarted after kill");
    if (jobctl_signal(j, SIGTERM, &err) < 0 || !serve(j, stopped, 45))
        goto fail;
    report(j, "stopped");
    rc = 0;
    goto out;
fail:
    report(j, "failed");
    fprintf(stderr, "tunedeck-jobctl: %s\n", err.msg);
out:
    jobctl_free(j);
    hostpool_free(pool);
    cluster_free(cl);
    return rc;
}
