/* Stand-in backends of the live driver and the driver set up on them
 * (tests/support/livestandin.h). */
#include "tests/support/livestandin.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/jobctl.h"
#include "tests/support/fixtures.h"

void *standin_run_new(size_t size)
{
    StandinRun *r = calloc(1, size);
    cr_assert_not_null(r);
    r->p = jobctl_progress_none();
    return r;
}

int standin_signal(void *run, int signo, Error *err)
{
    (void)err;
    StandinRun *r = run;
    snprintf(r->status, sizeof r->status, signo == SIGKILL ? "killed by SIGKILL" : "exited 0");
    return 0;
}

int standin_running(const void *run)
{
    return !((const StandinRun *)run)->status[0];
}

int standin_ready(const void *run)
{
    (void)run;
    return 1;
}

const JobProgress *standin_progress(const void *run)
{
    return &((const StandinRun *)run)->p;
}

const char *standin_status(const void *run)
{
    return ((const StandinRun *)run)->status;
}

size_t standin_size(const void *run)
{
    (void)run;
    return 1;
}

void liverig_open(LiveRig *r, Cluster *c, const LiveRunOps *backend, double time_scale)
{
    liverig_open_with(r, c, &(SchedLiveOptions){.time_scale = time_scale, .backend = backend});
}

void liverig_open_with(LiveRig *r, Cluster *c, const SchedLiveOptions *opts)
{
    Error e;
    r->c = c;
    r->cat = fixture_catalogue();
    r->s = fixture_doubling_with_j0(r->cat);
    r->text[0] = 0;
    r->log = (FixtureLog){.text = r->text, .cap = sizeof r->text};
    SchedLiveOptions o = *opts;
    o.tick_s = 0.01;
    o.log = fixture_log_line;
    o.userdata = &r->log;
    r->l = schedlive_new(r->s, c, NULL, &o, &e);
    cr_assert_not_null(r->l, "%s", e.msg);
}

void liverig_run_until(LiveRig *r, int (*done)(const SchedLiveJob *j), int timeout_ms,
                       SchedLiveJob *j)
{
    int64_t until = clock_now_ms() + timeout_ms;
    do {
        schedlive_step(r->l, NULL, 0, clock_now_ms());
        schedlive_job(r->l, 0, j);
    } while (!done(j) && clock_now_ms() < until);
}

void liverig_close(LiveRig *r)
{
    schedlive_stop_all(r->l);
    for (int i = 0; i < 100 && !schedlive_done(r->l); i++)
        schedlive_step(r->l, NULL, 0, clock_now_ms());
    cr_assert(schedlive_done(r->l), "%s", r->text);
    schedlive_free(r->l);
    sched_free(r->s);
    catalogue_free(r->cat);
    cluster_free(r->c);
}

LiveNodeState standin_node[2];
long standin_looks;

int standin_watch(void *ctx, const char *const *names, const int *unusable, size_t n,
                  Error *err)
{
    (void)ctx, (void)names, (void)unusable, (void)err;
    cr_assert_eq(n, 2);
    return 0;
}

const LiveNodeState *standin_nodes(void *ctx, size_t *n, long *looks)
{
    (void)ctx;
    *n = 2;
    *looks = standin_looks;
    return standin_node;
}

void standin_node_says(LiveRig *r, int node, int unusable, const char *why)
{
    standin_node[node].unusable = unusable;
    snprintf(standin_node[node].why, sizeof standin_node[node].why, "%s", why);
    standin_looks++;
    schedlive_step(r->l, NULL, 0, clock_now_ms());
}

Cluster *standin_cluster(int gpus_a, int gpus_b)
{
    Cluster *c = cluster_new("t");
    DeviceSpec da[8], db[8];
    memset(da, 0, sizeof da);
    memset(db, 0, sizeof db);
    for (int i = 0; i < 8; i++) {
        snprintf(da[i].id, sizeof da[i].id, "gpu%d", i);
        da[i].kind = i < gpus_a ? DEVICE_GPU : DEVICE_CPU;
        db[i] = da[i];
        db[i].kind = i < gpus_b ? DEVICE_GPU : DEVICE_CPU;
    }
    MachineType ta = {.name = "a", .bandwidth_gbps = 10, .devices = da, .n_devices = 8};
    MachineType tb = {.name = "b", .bandwidth_gbps = 10, .devices = db, .n_devices = 8};
    long ia = cluster_add_type(c, &ta, NULL), ib = cluster_add_type(c, &tb, NULL);
    cr_assert(ia >= 0 && ib >= 0);
    cr_assert_eq(cluster_add_machine(c, "m0", "127.0.0.1", (size_t)ia, NULL), 0);
    cr_assert_eq(cluster_add_machine(c, "m1", "127.0.0.1", (size_t)ib, NULL), 0);
    cluster_finish(c);
    return c;
}

Cluster *standin_two_by_two(void)
{
    Cluster *c = standin_cluster(2, 2);
    snprintf(c->job_command, sizeof c->job_command,
             "w --gpus {gpus} --checkpoint c.ckpt --resume {resume}");
    return c;
}

void standin_says_step(JobProgress *p, long step, double loss)
{
    TrialEvent ev = {
        .kind = EVENT_PROGRESS, .step = step, .epoch = -1, .loss = loss, .examples_per_s = -1};
    jobctl_progress_note(p, &ev);
}

StandinRun *standin_last_run;

static void *watched_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)spec, (void)err, (void)refusal;
    return standin_last_run = standin_run_new(sizeof(StandinRun));
}

static void watched_step(void *run)
{
    (void)run;
}

const LiveRunOps STANDIN_WATCHED = {.name = "watched",
                                    .start = watched_start,
                                    .signal = standin_signal,
                                    .step = watched_step,
                                    .rank0_saved = standin_ready,
                                    STANDIN_WATCH_OPS,
                                    STANDIN_OPS};
