/* What the cluster view draws: a plain snapshot of per-host load, GPU holders and jobs,
 * filled by the console from the model (or by the render benchmark). NAN = unknown, so an
 * unknown value is shown as unknown, never as 0. */
#ifndef TUNEDECK_SNAPSHOT_H
#define TUNEDECK_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_queue.h"

/* SNAP_GPU_FOREIGN: held by a job that is not ours (another Slurm user's). */
/* SNAP_GPU_KEPT: idle, but another user's pending job takes it before a resized job of ours
 * would (Slurm): held out of our growth (docs/slurm.md). */
enum { SNAP_MAX_GPUS = 16, SNAP_GPU_FOREIGN = -2, SNAP_GPU_KEPT = -3 };

typedef struct {
    char name[64];
    char role[8];         /* "W", "PS", "W+PS", "" */
    double cpu, gpu, mem; /* utilisation 0..1, NAN unknown */
    double share;         /* fraction of the batch this host carries, NAN unknown */
    int n_gpus;
    short gpu_job[SNAP_MAX_GPUS]; /* index into jobs holding the GPU, -1 free, or
                                     SNAP_GPU_FOREIGN */
} HostLoad;

typedef struct {
    char name[80];
    char label;          /* its letter in the GPU grid; 0: by position */
    int state;           /* the scheduler's job state, or -1 */
    char state_name[12]; /* "running", "stalled"...; empty when not scheduled */
    int starting;        /* stalled to start (from 0 GPUs: a first start or a restart after a
                            stop), not to resize: the job list says "start", not "resize" */
    int pinned;          /* an operator override holds its GPU count */
    int gpus;
    double progress; /* 0..1, NAN unknown */
    double eta_s;    /* predicted completion from now, NAN unknown */
    int resizes;
    char history[48]; /* allocation history, e.g. "1>2>4" */
    char note[128];   /* why it waits, what its real process does */
} JobRow;

typedef struct {
    char source[128]; /* what the numbers come from, shown in the pane title */
    HostLoad *hosts;
    size_t n_hosts;
    JobRow *jobs;
    size_t n_jobs, cap_jobs;
    char jobs_absent[128]; /* why there is no job list, when n_jobs == 0 */
    char jobs_source[128];
    /* The GPU grid: the scheduler's nodes when one runs (NULL: the hosts above). */
    HostLoad *grid;
    size_t n_grid;
    char grid_source[128];
} ClusterSnapshot;

/* What the hosts view draws on a Slurm cluster: the last nodes and queue the controller gave
 * (kept through an outage), the controller's state, and the counts made once per round
 * (slurm_panel_count) so a frame costs its visible rows only. */
typedef struct {
    const SlurmNodes *nodes; /* NULL: none yet */
    const SlurmQueue *queue;
    char where[64];     /* "here" or the login node */
    char partition[64]; /* empty: every partition */
    int64_t down_since_ms; /* the controller has not answered since (clock_now_ms); 0: it does */
    char last_error[300];
    double interval_s; /* until the next round */
    long calls, rounds;
    size_t counts[SLURM_NODE_OTHER + 1]; /* nodes by SlurmNodeState */
    size_t pending;                      /* pending jobs */
    int tuning; /* trials run through Slurm here: they wait while the controller is away */
} SlurmPanel;

#endif
