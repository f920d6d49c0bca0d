/* Internal: the live driver's job records and state, shared by remote/live/schedlive.c (the
 * driver: model time, runs served), schedlive_end.c (a run's end), schedlive_progress.c (a
 * run's progress lines and the loss curve), schedlive_enact.c (decisions turned into runs) and
 * the other schedlive_*.c. Not a public API. */
#ifndef TUNEDECK_SCHEDLIVE_PRIV_H
#define TUNEDECK_SCHEDLIVE_PRIV_H

#include "core/sched/losscurve.h"
#include "remote/live/livelog.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"

typedef struct {
    char name[128], model[32];
    char *ckpt_path; /* CHECKPOINT: relative to the job's folder, or absolute */
    void *run;       /* the backend's run (LiveRunOps) */
    int host;        /* machine of the current/last run; -1 before any */
    int run_gpus;    /* GPUs of the current run */
    /* what the scheduler wants now */
    int want_gpus, want_host;
    char **want_hosts;
    int *want_nodes;     /* node (machine) indices of the wanted placement */
    int *want_slot_gpus; /* GPUs on each of them */
    size_t n_want_hosts;
    int *run_nodes; /* those of the current run */
    int *run_slot_gpus;
    int *run_gpu_ids; /* the GPU indices it holds, node by node (run_slot_gpus of each) */
    size_t n_run_nodes;
    int run_port;        /* {master_port} of the current run */
    char run_where[256]; /* its hosts and GPU indices: "h1:0+1,h2:0" */
    char waiting[96];    /* the backend's last reason for not running yet (Slurm's) */
    int wait_logged;
    int need_start;  /* start a run at `want` once no process is up */
    /* the fence (schedlive.h): its last run found another run of it holding its folder, so
     * the next start waits until start_after_ms; fence_said: said once a wait */
    int64_t start_after_ms;
    int fence_said;
    /* the backend refused its last start with a refusal that may pass
     * (LIVERUN_REFUSED_ONCE): it is tried once more at a later tick, and a second refusal
     * in a row fails the job (schedlive_start_run) */
    int start_refused;
    /* the GPUs of its last run seen running (a progress line), 0 before any: the size it
     * goes on at when a larger one is refused for a limit (schedlive_ceiling.c) */
    int ran_gpus;
    int limit_tries; /* starts in a row turned away by a count of jobs (the back-off's) */
    /* its run waits on a limit of its size (LiveRunOps.over_limit) and is being cancelled:
     * its end is a start refused for its size, why the backend's reason */
    int limit_wait;
    LiveRefusal limit_how; /* TOO_BIG, or TOO_MANY_NODES where the limit counts nodes */
    char limit_why[96];
    /* its ceiling (schedlive_ceiling.c): the size refusals of it in a row that set one (the
     * back-off's doubling), the last one's GPUs and node cap (0: a limit on GPUs; both kept
     * once lifted: a run seen past what the limit counts, more GPUs or more nodes, says it was
     * raised) and when it is lifted (0: none held) */
    int ceiling_refusals, ceiling_gpus, ceiling_node_cap;
    int64_t ceiling_until_ms;
    int stop_wanted; /* SIGTERM the current run (once its process group is known) */
    int stopping;    /* SIGTERM sent */
    int64_t stop_sent_ms;
    int killed; /* SIGKILL sent */
    int has_ckpt;
    int runs, resizes, deaths, failed, resize_pending;
    int deaths_near;       /* deaths, each within death_window_s of the one before */
    int64_t last_death_ms; /* wall time of the last death */
    /* the backend took its current run off its GPUs (LiveRunOps.preempted): not a death;
     * preempt_event: the model's stop that followed, logged by schedlive_preempted, not
     * again as a decision; preempt_saved: its checkpoint was already counted then (else the
     * run's end reads rank0_saved again: its exit line may come after the first sighting) */
    int preempted, preemptions, preempt_event, preempt_saved;
    int suspended;    /* the backend holds its run stopped (LiveRunOps.suspended): so does
                         the model (sched_suspend) */
    int suspended_stop_said; /* a stop waiting for the resume: said once a suspension */
    /* its last run exited 0 unasked: the script finished its training, and the model has
     * the job done (sched_complete); complete_event: the model's finish that followed, said
     * then, not again as a decision */
    int ended_itself, complete_event;
    int seen; /* progress lines of the current run already taken */
    int refused_said; /* the current run's first refused protocol line logged */
    long step, saved_step, resumed_step, run_first_step;
    double loss; /* NAN: none reported (a loss may be negative) */
    double eps, epoch;
    LossCurve curve;      /* loss_progress: the job's own (step, loss) points */
    double loss_fraction; /* of training done by the curve; -1 unknown */
    int loss_decile_logged;
    int no_epoch_said; /* real_progress: "its progress lines have no epoch" logged */
    char status[300];
} LiveJob;

struct SchedLive {
    SchedState *s;
    const Cluster *c;
    HostPool *pool; /* NULL with a backend of the options' */
    const LiveRunOps *ops;
    void *ops_ctx;
    LiveRunSsh ssh; /* ops_ctx of the default backend */
    SchedLiveOptions o;
    char *checkpoint;
    LiveJob *jobs;
    size_t n_jobs;
    size_t events_seen;
    int64_t last_ms; /* wall time the model was last advanced to */
    int stopping_all, done;
    /* the nodes as the backend reads them (schedlive_nodes.c): what the model was told */
    int *node_unusable, *node_held;
    /* idle GPUs held out of growth for other users' pending jobs (a share of the backend's
     * pending_gpus: never one a run of ours holds in the model), their total as last said */
    int *node_kept;
    int kept_said, any_pending;
    long node_looks;
    int nodes_known;
    int join_failed; /* a node the backend found could not be added (said once) */
};

/* A line to the options' log (remote/live/livelog.h). */
#define schedlive_log(l, ...) livelog((l)->o.log, (l)->o.userdata, __VA_ARGS__)

/* Machine m's name; "?" out of range. */
const char *schedlive_machine(const SchedLive *l, int m);
/* Where a job is, for a log line: "at step N", or "before its first progress line" while it
 * has reported none (its step is -1 then, which no line should show). */
const char *schedlive_at_step(char *buf, size_t size, long step);
void schedlive_free_want(LiveJob *j);

/* schedlive_end.c: the job's run (j->run, its status set) has ended: a start the backend
 * refused after all, a run it took (said then), one the fence turned away (tried again), a
 * stop with or without its checkpoint, a run that ended by itself (the job done in the model:
 * sched_complete, its GPUs back), or a death (restarted once, a second in a row within
 * death_window_s leaves the job failed; none where its host went down). The run is freed. */
void schedlive_run_ended(SchedLive *l, LiveJob *j, int64_t now);
/* How a run that ended unasked stood, for its line: "after step N (its last progress line;
 * STATUS)", since it ended some time after the last step it reported, not at it; or "before
 * its first progress line (STATUS)" for step -1 (the caller passes -1 when this run printed
 * none, whatever the job's step from its runs before). Returns buf. */
const char *schedlive_ended(char *buf, size_t size, long step, const char *status);

/* schedlive_progress.c: the lines the job's current run (j->run, not NULL) printed since the
 * last call (LiveRunOps.progress): its first said once (a resume checked against the
 * checkpoint's step), the job's step, loss, speed and epoch, and the model's progress told
 * from them (loss_progress: each line a point of the job's loss curve; real_progress: its
 * epoch), not while the run is being stopped for good (stopping_all). */
void schedlive_take_progress(SchedLive *l, LiveJob *j);

/* schedlive_enact.c: a decision becomes what the job wants (and the stop of its current
 * run); a start runs at what it wants; a stopping job whose run holds a node j wants, or
 * NULL. */
void schedlive_enact(SchedLive *l, const SchedEvent *ev);
void schedlive_start_run(SchedLive *l, LiveJob *j);
/* The backend refused the job's start at `gpus` GPUs on `nodes` nodes, slot_gpus GPUs on each
 * (the placement it asked for; NULL: not known) (start's NULL, or
 * LiveRunOps.refused once the run ended): one that may pass is tried once more at the next
 * tick, one for good (or a second in a row) leaves the job failed, one for the cluster's
 * limits goes to schedlive_limit_refused; why is said in the log and the job's status. */
void schedlive_start_refused(SchedLive *l, LiveJob *j, LiveRefusal refusal, int gpus, size_t nodes,
                             const int *slot_gpus, const char *why);
/* schedlive_ceiling.c: a start refused for a limit (TOO_BIG, TOO_MANY_NODES, FOR_NOW, LIMIT)
 * at `gpus` GPUs on `nodes` nodes: a size limit sets the job's ceiling in the model
 * (sched_set_ceiling) below `gpus` (below `nodes` for a limit on nodes: sched_node_ceiling of
 * the placement slot_gpus) for a back-off, and the
 * job goes on at the size it last ran at (ran_gpus) or waits for a decision within it; at
 * 1 GPU it is left failed. A count of jobs is tried again after a back-off (10 s, doubled
 * up to SCHEDLIVE_LIMIT_RETRY_MAX_S), the job never failed for it. */
void schedlive_limit_refused(SchedLive *l, LiveJob *j, LiveRefusal how, int gpus, size_t nodes,
                             const int *slot_gpus, const char *why);
/* schedlive_ceiling.c: the job's current run was seen running (a progress line) at run_gpus on
 * n_run_nodes: the size it goes on at when a larger one is refused (ran_gpus), and, past a
 * lifted ceiling in what its limit counts, the back-off starts afresh. Called once per run,
 * at its end or when the backend takes it (schedlive_preempted), before its size is cleared. */
void schedlive_ran(LiveJob *j);
/* Lifts each ceiling whose back-off has passed by `now` (ceiling_retry_s, doubled at each
 * refusal that set one again, up to ceiling_retry_max_s), so later decisions may try the job
 * larger again: the cluster's limit may have been raised meanwhile. */
void schedlive_ceilings_expire(SchedLive *l, int64_t now);
/* Leaves the job failed: never started again, its GPUs given back in the model. */
void schedlive_fail(SchedLive *l, LiveJob *j);
const LiveJob *schedlive_blocker(const SchedLive *l, const LiveJob *j);

/* schedlive_preempt.c: the backend took the job's run off its GPUs for another job (Slurm's
 * preemption, LiveRunOps.preempted): once a run, said, the job's GPUs given back to the model
 * (sched_evict) and its start left to a later decision, from its checkpoint if the TERM left
 * one. Returns 1 when the run is (or was) taken: the driver then sends it no signal, and its
 * end is no death. */
int schedlive_preempted(SchedLive *l, LiveJob *j);
/* The model follows the backend's word that the job's run is suspended (and its end): the
 * job keeps its GPUs and size there and makes no progress while it is (sched_suspend). A run
 * that ended or was taken is not suspended. */
void schedlive_sync_suspended(SchedLive *l, LiveJob *j);

/* schedlive_nodes.c: the backend watches the model's nodes (its watch op); after each tick,
 * what it read changes the model: a node it calls unusable is drained (sched_drain_node:
 * the runs there move at the next decision) and drained no more when it is usable again;
 * GPUs others hold are held in the model (sched_hold_gpus); a node it found since is added
 * (sched_add_node: the next decision may place there). Each change is logged once.
 * sync returns 0 while the backend has not read every node once: no decision yet. */
int schedlive_watch_nodes(SchedLive *l, Error *err);
int schedlive_sync_nodes(SchedLive *l);
/* A node of the job's run that the backend now calls unusable (its host down over SSH,
 * drained or down in Slurm), or -1. */
int schedlive_run_on_unusable(const SchedLive *l, const LiveJob *j);

#endif
