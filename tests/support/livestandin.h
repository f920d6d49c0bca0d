/* Stand-in backends of the live driver (LiveRunOps) for its unit tests
 * (tests/remote/live/test_schedlive*.c): what every stand-in run shares, and the driver set up
 * on them with the doubling policy and one job, j0. Each helper fails the calling test
 * (Criterion assertions) instead of returning an error. */
#ifndef TUNEDECK_TEST_LIVESTANDIN_H
#define TUNEDECK_TEST_LIVESTANDIN_H

#include <stddef.h>
#include <stdlib.h>

#include "core/sched/catalogue.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"
#include "tests/support/liveslurm_fixture.h"

/* The head of every stand-in run: its progress lines, and the status that ends it ("" while
 * it runs). A test's own run type starts with one, so the shared ops below read it. */
typedef struct {
    JobProgress p;
    char status[48];
} StandinRun;

/* A zeroed run of `size` bytes (at least a StandinRun) with no progress line yet. */
void *standin_run_new(size_t size);

/* A run's progress line to `p`: `step`, with `loss` (NAN: none), no epoch and no rate. */
void standin_says_step(JobProgress *p, long step, double loss);

/* The ops most stand-ins share: a signal ends the run (SIGKILL killed, else exited 0); it
 * runs until it has a status; always ready; its progress and status; one process group. */
int standin_signal(void *run, int signo, Error *err);
int standin_running(const void *run);
int standin_ready(const void *run);
const JobProgress *standin_progress(const void *run);
const char *standin_status(const void *run);
size_t standin_size(const void *run);

/* The fields of a stand-in's LiveRunOps that the shared ops fill (all but name, start,
 * signal, step and rank0_saved, which the stand-in gives, and preempted): after its own, as
 * {.name = ..., ..., STANDIN_OPS}. */
#define STANDIN_OPS                                                                                \
    .running = standin_running, .ready = standin_ready, .progress = standin_progress,              \
    .status = standin_status, .size = standin_size, .free = free

/* Machines m0 and m1 (127.0.0.1) with gpus_a and gpus_b GPUs of 8 devices; the caller frees
 * it (or hands it to a LiveRig). */
Cluster *standin_cluster(int gpus_a, int gpus_b);
/* Two nodes of 2 GPUs whose job command checkpoints and resumes. */
Cluster *standin_two_by_two(void);

/* A backend's watch of two nodes in the states a test sets (LiveRunOps.watch and nodes:
 * STANDIN_WATCH_OPS in its ops): standin_node[i], with standin_looks counting the changes. */
extern LiveNodeState standin_node[2];
extern long standin_looks;
int standin_watch(void *ctx, const char *const *names, const int *unusable, size_t n,
                  Error *err);
const LiveNodeState *standin_nodes(void *ctx, size_t *n, long *looks);
#define STANDIN_WATCH_OPS .watch = standin_watch, .nodes = standin_nodes

/* The live driver on `c` (owned from here on) with the doubling policy and j0, its runs
 * through `backend` at `time_scale`, a tick every 0.01 s, no host pool; what it says
 * gathered in log. */
typedef struct {
    Cluster *c;
    Catalogue *cat;
    SchedState *s;
    SchedLive *l;
    char text[16384];
    FixtureLog log;
} LiveRig;

void liverig_open(LiveRig *r, Cluster *c, const LiveRunOps *backend, double time_scale);
/* The same with the driver's options given (their tick, log and userdata are the rig's). */
void liverig_open_with(LiveRig *r, Cluster *c, const SchedLiveOptions *opts);

/* Steps the driver (no fds) until done(j0's state) holds or timeout_ms have passed; j0's
 * last state in *j. */
void liverig_run_until(LiveRig *r, int (*done)(const SchedLiveJob *j), int timeout_ms,
                       SchedLiveJob *j);

/* A backend whose runs print nothing and end when the test sets their status, over the
 * watched nodes above; standin_last_run is the run it started last. */
extern StandinRun *standin_last_run;
extern const LiveRunOps STANDIN_WATCHED;

/* Node `node` is now as the test says (one more look), and the driver takes one step. */
void standin_node_says(LiveRig *r, int node, int unusable, const char *why);

/* Stops every job, steps the driver until it is done (asserted, 100 steps at most), frees it
 * all. */
void liverig_close(LiveRig *r);

#endif
