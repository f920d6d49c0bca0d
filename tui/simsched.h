/* The console's cluster scheduler on the simulator: a SchedState advanced in accelerated
 * time from the console's timer, and turned into what the cluster view draws. */
#ifndef TUNEDECK_SIMSCHED_H
#define TUNEDECK_SIMSCHED_H

#include <stdint.h>

#include "core/model/cluster.h"
#include "core/sched/sched.h"
#include "remote/live/liverun_slurm.h"
#include "remote/live/schedlive.h"
#include "tui/snapshot.h"

typedef struct {
    int nodes, gpus_per_node;
    const char *policy;
    const char *model; /* catalogue entry of the Poisson arrivals */
    int jobs;
    double arrival_mean_s;
    double speed; /* simulated seconds per real second */
    int tick_ms;  /* real time between advances */
    uint64_t seed;
    const char *catalogue_dir; /* the job catalogue's folder (catalogue_load) */
} SimSchedOptions;

typedef struct SimSched SimSched;

/* Live mode (`tunedeck --cluster F --workload W`): the same SchedState, advanced in wall-clock
 * time by remote/live/schedlive.h, which enacts every decision on real jobs over the pool. */
typedef struct {
    const Cluster *cluster; /* node i is machine i */
    HostPool *pool;         /* the console's pool of the inventory's machines */
    /* On Slurm (pool NULL): the runs are batch jobs, and the grid shows what Slurm granted
     * (each job's gpu_ids, other users' jobs as SNAP_GPU_FOREIGN). Outlives the SimSched. */
    LiveSlurm *slurm;
    const char *workload; /* a workload CSV (sched_load_workload) */
    const char *inventory; /* the inventory's file, named in its errors (NULL: its name) */
    int job_command_flag;  /* the template came from --job-command: its errors name that */
    const char *checkpoint; /* --checkpoint-file: the file the template writes (NULL: its
                               --checkpoint word; SchedLiveOptions.checkpoint) */
    const char *policy;
    double time_scale; /* simulated seconds per wall second */
    const char *job_dir;
    int gpus_per_node; /* > 0: every machine's GPU count (else its type's GPU devices) */
    uint64_t seed;
    const char *catalogue_dir; /* the job catalogue's folder (catalogue_load) */
    SchedLiveLogFn log;        /* the driver's lines (decisions, enactments, deaths) */
    void *userdata;
} SimSchedLiveOptions;

void simsched_defaults(SimSchedOptions *o);
SimSched *simsched_new(const SimSchedOptions *o, Error *err);
SimSched *simsched_new_live(const SimSchedLiveOptions *o, Error *err);
void simsched_free(SimSched *s);
/* The live driver (its fds and deadline go into the console's poll), NULL on the simulator. */
SchedLive *simsched_live(const SimSched *s);

const SchedState *simsched_state(const SimSched *s);
SchedState *simsched_state_mut(SimSched *s);
/* The next moment to advance (clock_now_ms), or -1 when paused or every job is done. Live,
 * the next moment the screen reads the driver's state again (every tick_ms, paused or not):
 * the driver moves it on every poll, and a snapshot of every job at each of them cost the
 * console a redraw per poll (30 a second) with a 3,000-job workload. */
int64_t simsched_deadline(const SimSched *s);
void simsched_set_paused(SimSched *s, int paused);
/* Advances simulated time by what elapsed since the last tick (times the speed). Returns 1
 * when it did (live: when the screen's reading is due; the deadline moves on), 0 when not
 * yet (or paused, or done), -1 with err. */
int simsched_tick(SimSched *s, int64_t now_ms, Error *err);
/* Fills the GPU grid and the job list of a snapshot (other fields untouched). Job rows
 * are in job order so that job i is letter i of the grid. */
void simsched_snapshot(const SimSched *s, ClusterSnapshot *out);
/* Marks the GPUs of a placement "n1:0+1,n3:2" (Slurm's grant) as held by owner in the grid
 * (hosts by name; unknown hosts and indices are skipped). Returns the GPUs marked. */
int simsched_mark_where(HostLoad *grid, size_t n, const char *where, short owner);
/* "   840s d resnet110-3 resize 2>4" for event i. */
/* A live job's note in the job list: what its real process does (FAILED (why), run, stop,
 * suspended, starting), then the model's `model_note` (why it waits), "; " between; cut to
 * cap, it ends in "..." (a cut reason never reads as whole). Pure. */
void simsched_live_note(const SchedLiveJob *lj, const char *model_note, char *out, size_t cap);
void simsched_event_text(const SimSched *s, size_t i, char *out, size_t cap);
/* The label of job i in the grid: a-z, A-Z, 0-9, then '*'. */
char simsched_job_label(size_t job);

#endif
