/* How the live driver's runs start, are signalled and end, as a table of operations: over
 * SSH (a JobGroup on the host pool, LIVERUN_SSH) or through Slurm (a batch job,
 * remote/live/liverun_slurm.h). The driver (schedlive.c) keeps every decision, the
 * checkpoint-stop-restart, deaths, progress and the loss curve; a backend only enacts. */
#ifndef TUNEDECK_LIVERUN_H
#define TUNEDECK_LIVERUN_H

#include <poll.h>
#include <stdint.h>

#include "remote/launch/orphans.h"
#include "remote/live/jobctl.h"
#include "remote/live/livelog.h"

/* One run to start: the job's name (its folder, and its Slurm job name), the folder its
 * jobs run in, the inventory's job_command, and the placement. */
typedef struct {
    const char *name;
    const char *job_dir;
    const char *command_template;
    const JobAlloc *alloc;
    const int *nodes;              /* the scheduler's node (machine) index of each alloc host */
    const char *const *node_names; /* and its name (a Slurm node name) */
} LiveRunSpec;

/* What a backend reads of a node beyond the driver's own runs (Slurm: the node's state, and
 * the GPUs other users' jobs hold there). */
typedef struct {
    int unusable;  /* nothing of ours should run there (drained, down, not responding) */
    int held_gpus; /* GPUs others hold there */
    int pending_gpus; /* GPUs there that other users' pending jobs will take before a job
                         of ours submitted now (Slurm: liveslurm_pending_claims): the idle
                         ones among them are held out of growth, never one a run of ours
                         holds */
    char why[256]; /* its state in the backend's words: "drained in Slurm (reason: fan)" */
    /* a node the backend found after watch (Slurm: one added to the partition, or back from
     * down): what the driver adds to its model */
    char name[64];
    int gpus;
    char gpu_type[32]; /* "" unknown */
} LiveNodeState;

/* Why a backend refused a start (start returned NULL), so the driver knows whether trying
 * again can help: LIVERUN_REFUSED_ONCE, something that may pass (an SSH exec that failed, a
 * script that could not be written, out of memory), is tried once more at a later tick;
 * LIVERUN_REFUSED_FOR_GOOD, the same every time (bad input: a job folder others can write,
 * a template or name the backend cannot use), fails the job at once (docs/scheduler-live.md,
 * "Deaths"). A backend says FOR_GOOD for the errors it marks ERROR_INPUT. The cluster's
 * limits (Slurm's) say more: LIVERUN_REFUSED_TOO_BIG, a limit on one job's size (a
 * partition's MaxNodes, a QOS's MaxTRESPerJob), for good at this size but not below it: the
 * driver gives the job a ceiling under it and it goes on at the size it had
 * (schedlive_ceiling.c); LIVERUN_REFUSED_FOR_NOW, a limit on how many jobs one may have
 * (MaxSubmitJobs), which passes once others end: tried again with a back-off, never failing
 * the job; LIVERUN_REFUSED_LIMIT, one of those two where the words do not say which;
 * LIVERUN_REFUSED_TOO_MANY_NODES, TOO_BIG where the limit counts the job's nodes (MaxNodes,
 * MaxNodesPerJob): the ceiling is what fits on one node fewer, not one GPU fewer. */
typedef enum {
    LIVERUN_REFUSED_ONCE = 0,
    LIVERUN_REFUSED_FOR_GOOD,
    LIVERUN_REFUSED_TOO_BIG,
    LIVERUN_REFUSED_FOR_NOW,
    LIVERUN_REFUSED_LIMIT,
    LIVERUN_REFUSED_TOO_MANY_NODES,
} LiveRefusal;

typedef struct LiveRunOps {
    const char *name; /* "ssh", "slurm" */
    /* Starts a run (its ctx must outlive it); NULL with err and *refusal when it cannot. */
    void *(*start)(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err);
    /* SIGTERM: checkpoint and exit; SIGKILL: end it now. */
    int (*signal)(void *run, int signo, Error *err);
    void (*step)(void *run);         /* after the backend's tick */
    int (*running)(const void *run); /* up, starting, or waiting for its allocation */
    int (*ready)(const void *run);   /* a SIGTERM now reaches a job that can checkpoint */
    const JobProgress *(*progress)(const void *run);
    /* "" while running; then "exited 0" (a clean end: it wrote its checkpoint when asked),
     * "exited N", "killed by SIGKILL", "slurm: TIMEOUT (TimeLimit)"... */
    const char *(*status)(const void *run);
    int (*rank0_saved)(const void *run); /* ended, and rank 0 wrote its checkpoint */
    size_t (*size)(const void *run);     /* processes started (one per host, or one) */
    /* Optional (NULL for SSH, where the driver chose the GPUs): */
    const char *(*label)(const void *run);   /* "Slurm job 12" */
    const char *(*granted)(const void *run); /* the placement granted: "n3:0+1"; "" not yet */
    const char *(*waiting)(const void *run); /* why it is not running yet: "Resources"; "" */
    /* How the backend took the run off its GPUs for another job, once it did: "preempted by
     * Slurm (PreemptMode=CANCEL: ...)"; "" while it did not. Not a death: the driver gives
     * the job's GPUs back to the model at once and starts it again, from its checkpoint,
     * where a later decision places it; the run itself ends once the backend has cleared
     * what is left of it (Slurm: a requeued copy cancelled). */
    const char *(*preempted)(const void *run);
    /* Optional: 1 while the backend holds the run stopped for another job and will let it go
     * on (Slurm: SUSPENDED, PreemptMode=SUSPEND or scontrol suspend). Not a death nor a
     * preemption: the run keeps its GPUs; the driver keeps them the job's in the model, at
     * its size, and counts no progress for it until this says 0 again (sched_suspend). Its
     * ready() is 0 meanwhile: a stop waits for the resume. */
    int (*suspended)(const void *run);
    /* Optional, for a backend whose start only begins the request (Slurm: start returns
     * the run before sbatch answers): once the run has ended (status non-empty) because the
     * backend's request was refused after all (sbatch answered with an error, or without a
     * job id), why (the backend's words) and *refusal, as start's would be; NULL for any
     * other end. The driver takes it as a refused start (no death, no run), tried once more
     * or left failed (docs/scheduler-live.md, "Deaths"). */
    const char *(*refused)(const void *run, LiveRefusal *refusal);
    /* Optional: while the run waits for its allocation on a limit of its size that it cannot
     * pass as it is, the backend's reason (Slurm: a pending job's PartitionNodeLimit, or a
     * QOS's or association's per-job limit, "QOSMaxGRESPerJob": a limit slurmctld takes the
     * job under rather than refuse it, without EnforcePartLimits or DenyOnLimit); NULL
     * otherwise. The driver cancels the run and takes it as a start refused *refusal
     * (when not NULL): LIVERUN_REFUSED_TOO_BIG, or _TOO_MANY_NODES where the limit counts the
     * job's nodes (PartitionNodeLimit): a ceiling, and the job back at the size it had. */
    const char *(*over_limit)(const void *run, LiveRefusal *refusal);
    void (*tick)(void *ctx, int64_t now_ms); /* once per driver step, before the runs */
    /* The driver's nodes (node i named names[i], copied) for the backend to watch, once
     * before the first tick; unusable[i]: the driver holds it out already for the backend's
     * reason (schedule --live drained a host that had not answered at the start), so the
     * backend's "usable" is news about it, and its "unusable" is not. */
    int (*watch)(void *ctx, const char *const *names, const int *unusable, size_t n,
                 Error *err);
    /* With watch: node i as last read, *n of them: watch's, then any the backend found
     * since (appended, so an index never changes); NULL until every node has been read once
     * (the driver makes no decision before). *looks counts the reads that changed something. */
    const LiveNodeState *(*nodes)(void *ctx, size_t *n, long *looks);
    /* Optional: the fds the backend waits on and its earliest deadline (lowered; < 0 none),
     * its own (Slurm: the job and node rounds in flight) and a run's (its sbatch, look-up
     * or scancel in flight), so the driver wakes as soon as one answers or ends and then
     * ticks and steps, rather than at its next tick. The backend reads them itself (a poll
     * without waiting): the driver only wakes. NULL for SSH: its channels are the host
     * pool's, which the driver polls. */
    size_t (*pollfds)(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
    size_t (*run_pollfds)(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
    /* Optional: before the run begins, every job's folder (JOB_DIR/NAME, names[i]) that the
     * backend can check from here; -1 with err (bad input, exit 3) naming the job, the
     * folder, its owner or mode, what is expected and the fix, so a folder others can write
     * refuses the run rather than fail each job as it starts (Slurm: the folders are on this
     * machine's shared file system; a start checks its folder again). NULL for SSH: the
     * folders are on the hosts, which must be connected first: `schedule --live` checks
     * them on each host with jobdir_check_hosts (remote/live/jobdir.h) once they are, and
     * the wrapper makes each one private at its start (schedlive_job_template). */
    int (*check_folders)(void *ctx, const char *job_dir, const char *const *names, size_t n,
                         Error *err);
    void (*free)(void *run); /* ends a run still up (closing its channels, or scancel) */
} LiveRunOps;

/* Over SSH: ctx is a LiveRunSsh. The command runs in JOB_DIR/NAME on the placement's first
 * host (per_host: on every host, {node_rank} each), with CUDA_VISIBLE_DEVICES the driver's
 * chosen GPU indices (schedlive_job_template). */
typedef struct {
    HostPool *pool; /* machine i of the inventory is host i of the pool */
    int per_host;
    LiveLogFn log; /* the stops of runs left behind (below) */
    void *userdata;
    /* The hosts as the pool last saw them (watch, nodes): a host that goes down is
     * unusable until it answers again, so the scheduler moves its runs and places none
     * there, as over Slurm; the watch keeps every host it reached reconnecting. */
    LiveNodeState *nodes;
    size_t n_nodes;
    long looks;
    /* The job folders' check (remote/live/jobdir.h) of each host not checked before the run
     * (prechecked: schedule --live's, of the hosts that answered then; NULL: none, as in the
     * console): such a host is unusable until it answers and its check passes (the watch
     * connects it); a refusal keeps it so, said once, until it goes down and answers again,
     * when it is checked afresh. folder_cmd: jobdir_command for the run (schedlive_new). */
    char *folder_cmd;
    const char *job_dir;
    const unsigned char *prechecked;
    signed char *checked; /* per node: 1 passed, -1 refused, 0 not yet */
    struct JobdirProbe **probes;
    int64_t *probe_retry_ms;
    /* Runs left behind: a member whose connection dropped with no exit status may still run
     * on its host (only its sshd died). Each is stopped by its TUNEDECK_RUN_MARK once its
     * host answers (tick); until then the fence (schedlive.h) keeps a new run of the job
     * off its folder. stale_job[i] names stale.items[i]'s job; batch is the stop in flight. */
    OrphanList stale, batch;
    char (*stale_job)[64], (*batch_job)[64];
    OrphanStop *stop;
    int64_t retry_at_ms;
} LiveRunSsh;

extern const LiveRunOps LIVERUN_SSH;
/* Frees what watch allocated. */
void liverun_ssh_clear(LiveRunSsh *b);

#endif
