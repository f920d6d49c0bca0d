/* The scheduler's live mode: a SchedState (core/sched/sched.h) run in wall-clock time whose every
 * decision is enacted on real jobs over the SSH host pool (remote/live/jobctl.h).
 *
 * Node i of the scheduler is machine i of the inventory. A START runs the inventory's
 * job_command on the placement's first machine (or, with "job_launch": "per-host", on every
 * machine of the placement with its own {node_rank}) with its placeholders filled
 * (jobctl.h) and CUDA_VISIBLE_DEVICES set to the GPU indices the scheduler gave it there; a
 * RESIZE sends SIGTERM to the job's process group (the job writes
 * its checkpoint and exits 0), then starts it again at the new placement with {resume} set
 * to that checkpoint; STOP and FINISH checkpoint and stop. A job whose process ends without
 * being asked is reported and started again from its last checkpoint, once.
 *
 * Each job runs in its own folder, JOB_DIR/NAME on the launch host (created by the command
 * line, which also exports TUNEDECK_JOB=NAME), so a relative --checkpoint in the template is
 * per job; {resume} is that file name (the command runs in the folder). Restarting on another
 * machine needs that folder on shared storage (the loopback hosts share one file system).
 *
 * Runs start and end through a backend (remote/live/liverun.h): SSH on the host pool by
 * default, or Slurm batch jobs (remote/live/liverun_slurm.h, docs/slurm.md).
 *
 * Non-blocking like the launchers: schedlive_pollfds() then poll() then schedlive_step(). */
#ifndef TUNEDECK_SCHEDLIVE_H
#define TUNEDECK_SCHEDLIVE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/evloop.h"
#include "core/model/cluster.h"
#include "core/sched/sched.h"
#include "remote/live/livelog.h"
#include "remote/ssh/hostpool.h"

typedef struct SchedLive SchedLive;

typedef LiveLogFn SchedLiveLogFn; /* remote/live/livelog.h */

typedef struct {
    double time_scale;      /* simulated seconds per wall second; default 1 */
    double tick_s;          /* wall seconds between model advances; default 0.2 */
    double stop_timeout_s;  /* SIGTERM, then SIGKILL after this long; default 20 */
    /* A job is left failed at its second death within this long (wall time) of the one
     * before; a death later than that is counted as a first again. Default 3600. */
    double death_window_s;
    /* A ceiling (a size the cluster refused the job: schedlive_ceiling.c) holds this long
     * (wall time), then decisions may try the job larger again, as the limit may have been
     * raised; each refusal that sets it again doubles it, up to ceiling_retry_max_s.
     * Defaults SCHEDLIVE_CEILING_RETRY_S, _MAX_S (a Slurm inventory's "slurm" block sets
     * them: ceiling_retry_s, ceiling_retry_max_s). */
    double ceiling_retry_s, ceiling_retry_max_s;
    const char *job_dir;    /* default "tunedeck-jobs" (relative: the remote user's home) */
    const char *workload;   /* the workload's file, named when one of its jobs is refused */
    const char *inventory;  /* the inventory's file, named when its job_command is refused;
                               NULL: the inventory's name */
    int job_command_flag;   /* the template came from --job-command: its errors name that */
    const char *checkpoint; /* --checkpoint-file (schedule --live, the console): the file name
                               the template writes; NULL: its --checkpoint word */
    int real_progress;      /* each progress line's epoch replaces the model's progress
                               (sched_report_progress): jobs finish when they really do */
    int loss_progress;      /* each job's own loss curve (core/sched/losscurve.h) says how
                               much of it is done, in place of the catalogue's progress */
    double loss_tol;        /* loss_progress: done within this share of the way to the
                               asymptote; default 0.05 */
    SchedLiveLogFn log;     /* every decision, enactment, death, progress change */
    void *userdata;
    /* How runs start and end (remote/live/liverun.h); NULL: over SSH on the pool. With a
     * backend the pool may be NULL (Slurm: remote/live/liverun_slurm.h). */
    const struct LiveRunOps *backend;
    void *backend_ctx;
    /* Over SSH: per machine, 1 when its job folders were checked before the run
     * (jobdir_check_hosts: schedule --live); NULL or 0: the driver checks them once the host
     * answers, and places no job there before (remote/live/liverun.h). */
    const unsigned char *folders_checked;
} SchedLiveOptions;

typedef struct {
    const char *name, *model;
    int running; /* a process is up (or starting, or waiting for Slurm to grant it) */
    int gpus;    /* GPUs of the current run, 0 when none */
    /* its hosts' GPU indices (CUDA_VISIBLE_DEVICES): "h1:0+1,h2:0"; on Slurm the ones
     * Slurm granted, "" while the job is pending */
    const char *gpu_ids;
    const char *host; /* launch machine of the current/last run, "" before any */
    int runs;         /* processes started */
    int resizes;      /* checkpoint-stop-restarts enacted */
    int deaths;       /* ends nobody asked for (a preemption is not one) */
    int preemptions;  /* runs the backend took off their GPUs for another job (Slurm) */
    int suspended;    /* its run is suspended (Slurm): it keeps its GPUs, makes no progress */
    int failed;       /* died again after its one restart: left stopped */
    int ceiling_gpus; /* the most GPUs the scheduler gives it: the cluster refused it more
                         (sched_set_ceiling); 0 none, and once the job is done or failed (the
                         three ceiling fields: no cap is left to show) */
    int ceiling_nodes; /* the most nodes: the limit refused counts nodes; 0 none */
    double ceiling_left_s; /* wall time until its ceiling is lifted (as of the last step) */
    long step;        /* last progress line of any run (-1: none yet) */
    double loss;      /* last progress line's loss, any sign; NAN: none given */
    double examples_per_s, epoch; /* -1: not given */
    long saved_step;       /* step of the last checkpoint written on a stop (-1: none) */
    long resumed_step;     /* first step of the latest resumed run (-1: none) */
    double model_progress; /* the scheduler's simulated progress, 0..1 */
    double loss_fraction;  /* loss_progress: training done by the job's loss curve; -1 */
    const char *status;    /* last run's end: "exited 0", "killed by SIGKILL", ... */
} SchedLiveJob;

/* The state, cluster and pool must outlive the driver; the pool holds the cluster's machines
 * in order (hostpool_add_cluster). Fails without a job_command, or for a job name that
 * cannot be a folder name (letters, digits, '.', '_', '-'). */
SchedLive *schedlive_new(SchedState *s, const Cluster *c, HostPool *p, const SchedLiveOptions *o,
                         Error *err);
void schedlive_free(SchedLive *l);

size_t schedlive_pollfds(SchedLive *l, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
/* Advances the model to the wall clock, enacts its new decisions, serves the jobs. */
void schedlive_step(SchedLive *l, const struct pollfd *fds, size_t n, int64_t now_ms);
/* Registers the driver (and so its pool) on a loop; returns the source id or -1. */
long schedlive_attach(SchedLive *l, EvLoop *loop);
/* Ends the run: the model stops advancing, every job is checkpointed and stopped. */
void schedlive_stop_all(SchedLive *l);
/* After stop_all, or once every job has ended (finished, ended by itself with exit 0, or
 * failed; none left to arrive), which ends the run by itself: no job process is left. */
int schedlive_done(const SchedLive *l);
double schedlive_sim_time(const SchedLive *l);

/* Idle GPUs of the node held out of growth for other users' pending jobs (Slurm; 0 else). */
int schedlive_node_kept(const SchedLive *l, int node);

size_t schedlive_job_count(const SchedLive *l);
/* The job's ceiling as its status lines and the console's job list say it, with the wall time
 * until its lift, when a larger size may be tried: "ceiling 2 GPUs, retry in 4m10s" ("ceiling
 * 2 GPUs on 1 node, ..." where the limit counts nodes); "" without one. Returns buf. */
const char *schedlive_ceiling_text(const SchedLiveJob *j, char *buf, size_t size);
void schedlive_job(const SchedLive *l, size_t i, SchedLiveJob *out);

/* ---- pure helpers (schedlive_setup.c, unit-tested) ---- */

/* The scheduler's nodes, machine i as node i: the GPU devices of each machine's type (or
 * gpus_override > 0 for every machine), consecutive machines of one type and size grouped.
 * *groups is malloc'd (caller frees) and points into c for the type names. */
int schedlive_node_groups(const Cluster *c, int gpus_override, SchedNodeGroup **groups, size_t *n,
                          Error *err);
/* What schedlive_new refuses that needs no host, for callers to check before they connect
 * any (a typo then costs no connection): the template (job_command, NULL or "" refused, inv
 * naming its file) and the checkpoint file it writes (o->checkpoint, else the template's
 * --checkpoint word), copied into ck; errors are bad input (exit 3). */
int schedlive_check_command(const char *job_command, const char *inv, const SchedLiveOptions *o,
                            char *ck, size_t cap, Error *err);
/* That for c's job_command, every job of s a name the job's folder can have, and every job's
 * folder that o's backend can check before the run (its check_folders: Slurm's, on this
 * machine) ours and no one else's to write. */
int schedlive_check(const SchedState *s, const Cluster *c, const SchedLiveOptions *o, char *ck,
                    size_t cap, Error *err);
/* The file name after `--checkpoint` in a template (e.g. "tiny-job.ckpt"); copies into
 * out; -1 when there is none. */
int schedlive_template_checkpoint(const char *template_text, char *out, size_t cap);
/* The longest job name live mode takes: it names the job's folder (NAME_MAX on Linux). */
#define SCHEDLIVE_NAME_MAX 255
/* The per-job template: "trap : TERM; (umask 077 && mkdir -p DIR/NAME) && chmod 700 DIR/NAME
 * && cd DIR/NAME && (the run's fence: SCHEDLIVE_FENCE_LOCK; on rank 0 those beyond {nnodes}
 * too) && TUNEDECK_JOB=NAME && export TUNEDECK_JOB TUNEDECK_RUN_MARK && ... && TEMPLATE", DIR
 * and NAME quoted, the hostfile written through mktemp and mv. The text sets no
 * TUNEDECK_RUN_MARK: each member's wrapping shell exports its run's own (jobctl_start), and
 * the text's `export` passes it on. Caller frees. */
char *schedlive_job_template(const char *template_text, const char *job_dir, const char *name,
                             Error *err);

/* The fence between two runs of one job (docs/scheduler-live.md, "Fence"): each node rank of a
 * run holds an flock on this file in the job's folder for as long as any of its processes
 * lives. A run that finds it held (a run left behind on a host whose sshd died, still
 * running, on a shared job folder) exits 75 (EX_TEMPFAIL) at once, before the job starts,
 * saying SCHEDLIVE_FENCE_WORD on stderr: not a death, the driver starts it again later (the
 * old run is stopped once its host answers: liverun_ssh.c). */
#define SCHEDLIVE_FENCE_PREFIX ".tunedeck-run-"
#define SCHEDLIVE_FENCE_SUFFIX ".lock"
#define SCHEDLIVE_FENCE_LOCK SCHEDLIVE_FENCE_PREFIX "{node_rank}" SCHEDLIVE_FENCE_SUFFIX
/* Rank 0 of a run also finds held the lock of any rank beyond its own run's {nnodes}: an old
 * run's rank left behind when the job shrank (2 hosts -> 1) fences it the same way. */
#define SCHEDLIVE_FENCE_GLOB SCHEDLIVE_FENCE_PREFIX "*" SCHEDLIVE_FENCE_SUFFIX
#define SCHEDLIVE_FENCE_WORD "tunedeck-folder-busy"
enum { SCHEDLIVE_FENCE_RETRY_S = 5 };
/* A start the cluster turned away by a count of jobs (Slurm's MaxSubmitJobs) is tried again
 * after this long, doubled at each refusal in a row up to the most (remote/live/
 * schedlive_ceiling.c). */
enum { SCHEDLIVE_LIMIT_RETRY_S = 10, SCHEDLIVE_LIMIT_RETRY_MAX_S = 160 };
/* A ceiling's first back-off and its most: a grow refused again costs a checkpoint and a
 * stop, so at most one such try every hour once the limit stays; an operator who raises it
 * sees the job grow within 5 minutes of a first refusal. */
enum { SCHEDLIVE_CEILING_RETRY_S = 300, SCHEDLIVE_CEILING_RETRY_MAX_S = 3600 };
/* A placement as text: "h1:0+1,h2:0" (ids: slots[h] indices per host, in order), or with ids
 * NULL each host's count, "h1:2,h2:1". Cut at a whole host when out is short. */
void schedlive_where_text(const char *const *names, const int *slots, const int *ids, size_t n,
                          char *out, size_t cap);

#endif
