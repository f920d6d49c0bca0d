/* The cluster scheduler as a steppable state: ring-allreduce jobs on nodes × GPUs, a policy
 * that re-allocates every interval, a stall on every resize (seed: ring-dynamic-scheduling).
 *
 * How to drive it (the console, `tunedeck schedule`, tests and the benchmark all do this):
 *
 *   Catalogue *cat = catalogue_load(dir, &err);           // core/sched/catalogue.h: job models
 *   SchedConfig cfg; sched_config_default(&cfg);           // 16 × 4 GPUs, 60 s, 30 s stall
 *   cfg.policy = "doubling";
 *   SchedState *s = sched_new(&cfg, cat, &err);            // keeps cat: free it after s
 *   sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 4, 512}, &err);  // or
 *   sched_load_workload(s, "workload-1.csv", &err);
 *   while (!sched_finished(s)) sched_advance(s, 60.0, &err); // simulated seconds
 *   for (i < sched_job_count(s)) sched_job_info(s, i, &info);  // name, model, gpus, progress
 *   sched_node_gpus(s, node, owners, n);                    // which job holds each GPU
 *   for (i < sched_event_count(s)) sched_event(s, i);       // the decision log
 *   sched_free(s); catalogue_free(cat);
 *
 * Overrides (pin to a GPU count, pause, drain a node, GPUs held by others) take effect at
 * the next decision.
 * Events carry the placement (node index and GPUs per node) so that a live driver can turn
 * each start/resize/stop into a checkpoint-stop-restart of a real job on those hosts, and
 * feed measured progress back with sched_report_progress(). Within one decision, shrinks
 * and stops are logged before grows and starts; the log is in time order.
 * Everything is deterministic for a seed; nothing here does I/O except the workload loader.
 * Policies: doubling (precompute), doubling-explore (exploratory), doubling-seed (the
 * seed's rule as written), optimus, tiresias, fixed-1/2/4/8 — see docs/scheduler.md. */
#ifndef TUNEDECK_SCHED_H
#define TUNEDECK_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"

typedef struct Catalogue Catalogue; /* core/sched/catalogue.h */
typedef struct SchedState SchedState;

/* Nodes of one kind in a mixed cluster (see docs/scheduler.md for the speed figures). */
typedef struct {
    const char *type; /* GPU type, e.g. "T4", "V100" (copied) */
    int nodes, gpus_per_node;
    double speed; /* relative GPU speed: 1 = the GPUs the job models were measured on */
} SchedNodeGroup;

typedef struct {
    int nodes, gpus_per_node; /* a uniform cluster (ignored when groups are given) */
    double interval_s;        /* time between decisions (60 s in the Pollux artifact) */
    double resize_cost_s;     /* checkpoint-stop-restart stall on every (re)allocation (30 s) */
    const char *policy;       /* name in the policy table: see sched_policy_names() */
    uint64_t seed;
    const char *const *node_names; /* optional: nodes entries; default "node00".. */
    const SchedNodeGroup *groups;  /* optional: a mixed cluster, nodes numbered group by */
    size_t n_groups;               /* group in this order */
} SchedConfig;

void sched_config_default(SchedConfig *cfg);
/* NULL-terminated list of policy names, for --help and the console's chooser. */
const char *const *sched_policy_names(void);
/* The same names joined by ", ", then " (also: ...)" for their aliases: for help and errors. */
const char *sched_policy_names_joined(void);

typedef struct {
    const char *name;  /* copied */
    const char *model; /* a catalogue entry: "cifar10", "resnet110", ... */
    double submit_s;   /* simulated time of arrival */
    int gpus;          /* what the owner asked for (used by tiresias, fixed batch sizing) */
    int batch_size;    /* the owner's global batch; 0 = the model's initial batch */
} SchedJobSpec;

typedef enum {
    SCHED_JOB_QUEUED,  /* submitted (or arrived) and holding no GPU */
    SCHED_JOB_STALLED, /* holding GPUs, checkpoint-stop-restart in progress */
    SCHED_JOB_RUNNING,
    SCHED_JOB_PAUSED, /* paused by the operator */
    SCHED_JOB_DONE,
    SCHED_JOB_FUTURE, /* submission time not reached yet */
    SCHED_JOB_FAILED, /* given up outside the scheduler (sched_abandon): holds no GPU */
} SchedJobState;

const char *sched_job_state_name(SchedJobState st);

/* One allocation change of a job: start (from 0), resize, stop (to 0). */
typedef struct {
    double time_s;
    int gpus_from, gpus_to;
} SchedResize;

typedef struct {
    const char *name, *model; /* owned by the state; valid until sched_free */
    SchedJobState state;
    double submit_s, start_s, finish_s; /* start_s/finish_s < 0 until they happen */
    int gpus, nodes;                    /* allocated now */
    int batch_size;                     /* global batch in use (0 when not running) */
    int requested_gpus;
    double progress; /* 0..1 of the job's total work */
    double epoch;    /* fractional epochs done */
    int epochs_total;
    double gpu_s; /* GPU-seconds held so far (stalls included) */
    double stall_left_s;
    int pinned_gpus; /* 0 = not pinned */
    int paused;
    int suspended; /* sched_suspend: holds its GPUs, makes no progress */
    int ceiling_gpus; /* the most GPUs it may be given (sched_set_ceiling); 0 none */
    int ceiling_nodes; /* the most nodes it may be placed over (sched_set_node_ceiling); 0 none */
    size_t n_resizes;
    const SchedResize *resizes; /* owned by the state; valid until the next sched_advance */
} SchedJobInfo;

typedef enum {
    SCHED_EV_START,  /* first allocation of a job (or restart after a preemption) */
    SCHED_EV_RESIZE, /* GPU count or hosts changed: checkpoint, stop, restart */
    SCHED_EV_STOP,   /* preempted or paused: checkpoint and stop, keeps no GPU */
    SCHED_EV_FINISH, /* reached its epoch count (or finished outside: sched_complete); GPUs freed */
} SchedEventKind;

const char *sched_event_kind_name(SchedEventKind k);

typedef struct {
    int node; /* node index */
    int gpus; /* GPUs used on it */
} SchedSlot;

typedef struct {
    double time_s;
    SchedEventKind kind;
    int job;                /* index for sched_job_info */
    int gpus_from, gpus_to; /* GPU counts before and after */
    int batch_size;         /* global batch after */
    size_t n_slots;         /* placement after (0 for stop/finish) */
    const SchedSlot *slots; /* owned by the state */
    /* > 0: not a decision but the job lowered under the ceiling a backend's refusal set
     * (sched_set_ceiling): a resize to the size it keeps, or a stop; 0 otherwise */
    int ceiling_gpus;
    /* finish only: 1 when the job ended by itself outside the model (sched_complete), so an
     * operator reading events can tell it from a finish the model decided; 0 otherwise */
    int by_itself;
} SchedEvent;

SchedState *sched_new(const SchedConfig *cfg, const Catalogue *cat, Error *err);
void sched_free(SchedState *s);

/* Adds a job; fails (and adds nothing) for an unknown model, a negative time, a time
 * before the last submitted job, or a pin larger than the cluster. */
int sched_submit(SchedState *s, const SchedJobSpec *spec, Error *err);
/* Reads `name,time,application,num_replicas,batch_size` CSV (the Pollux workloads) and
 * submits every row; errors name the file, line and field; nothing is added on error. */
int sched_load_workload(SchedState *s, const char *path, Error *err);
/* The seed's workload: n jobs of `model`, exponential inter-arrival times of mean
 * arrival_mean_s, drawn from cfg.seed. */
int sched_add_poisson(SchedState *s, const char *model, double arrival_mean_s, int n, Error *err);

/* Advances simulated time by dt_s, deciding at every interval boundary crossed. */
int sched_advance(SchedState *s, double dt_s, Error *err);
/* Runs until every submitted job is done (or max_s of simulated time passes). */
int sched_run(SchedState *s, double max_s, Error *err);
double sched_now(const SchedState *s);
int sched_finished(const SchedState *s);

size_t sched_job_count(const SchedState *s);
int sched_job_info(const SchedState *s, size_t job, SchedJobInfo *out);
/* -1 when no job has that name. */
int sched_job_find(const SchedState *s, const char *name);

int sched_node_count(const SchedState *s);
/* The largest node's GPU count (every node's, in a uniform cluster). */
int sched_gpus_per_node(const SchedState *s);
int sched_node_gpu_count(const SchedState *s, int node);
const char *sched_node_type(const SchedState *s, int node); /* "" in a uniform cluster */
double sched_node_speed(const SchedState *s, int node);
const char *sched_node_name(const SchedState *s, int node);
int sched_node_drained(const SchedState *s, int node);
/* GPUs of the node held by someone else (sched_hold_gpus); 0 when none. */
int sched_node_held(const SchedState *s, int node);
/* Fills owners[0..n) with the job index holding each GPU of the node, or -1 when free
 * (and -1 past the node's own GPU count). */
int sched_node_gpus(const SchedState *s, int node, int *owners, int n);

size_t sched_event_count(const SchedState *s);
const SchedEvent *sched_event(const SchedState *s, size_t i);
/* One event as a JSON line (no newline), malloc'd: the `--events` stream format. */
char *sched_event_json(const SchedState *s, const SchedEvent *ev);

/* Overrides. gpus = 0 unpins. A pin larger than the usable cluster fails. */
int sched_pin(SchedState *s, size_t job, int gpus, Error *err);
int sched_pause(SchedState *s, size_t job, int paused, Error *err);
int sched_drain_node(SchedState *s, int node, int drained, Error *err);
/* Who drained a node: a node is drained while either holds it so, and each lifts only its
 * own drain, so a node the operator drained stays drained when the backend's reason (its
 * host down, Slurm's drain) ends, and the other way round. sched_drain_node is the
 * operator's. */
enum { SCHED_DRAIN_OPERATOR = 1, SCHED_DRAIN_BACKEND = 2 };
int sched_drain_node_by(SchedState *s, int node, int who, int drained, Error *err);
/* 1 when `who` (SCHED_DRAIN_*) holds the node drained. */
int sched_node_drained_by(const SchedState *s, int node, int who);
/* GPUs of the node someone else holds (another user's job on a shared cluster): the
 * scheduler counts them out of the node's capacity as it counts a drained node out of the
 * cluster's. A job of ours that no longer fits beside them moves at the next decision
 * (the most recently placed first); 0 gives them back. Fails outside 0..the node's GPUs. */
int sched_hold_gpus(SchedState *s, int node, int gpus, Error *err);
/* The job lost its GPUs outside the scheduler (live mode: Slurm preempted its job for
 * another): they are given back now, logged as a stop (SCHED_EV_STOP), and the job waits
 * queued, its progress kept, for a decision to place it again (a start, which a live driver
 * enacts as a restart from its checkpoint). Nothing happens to a job holding no GPU. Fails
 * for an unknown job, or out of memory (nothing changed). */
int sched_evict(SchedState *s, size_t job, Error *err);
/* The job failed outside the scheduler and will not run again (live mode: it died twice in a
 * row and is left stopped): its GPUs are given back now, logged as a stop (SCHED_EV_STOP)
 * when it held any, and no decision places it again, whatever the policy, a pin or
 * sched_pause say. It keeps its progress and shows as SCHED_JOB_FAILED. Fails for an unknown
 * or finished job, or out of memory (nothing changed). */
int sched_abandon(SchedState *s, size_t job, Error *err);
/* The job finished outside the scheduler (live mode: its run exited 0 unasked, the script's
 * training is done): it is done now, as a job that reached its epoch count is. Its GPUs are
 * given back at once, logged as a finish (SCHED_EV_FINISH) at the present time, its finish
 * time is now (sched_summary counts its JCT), and no decision places it again. Its progress
 * is kept as the model had it, but sched_job_info reads it complete (progress 1, its last
 * epoch): the script finished its training. Fails for an unknown job, one done or failed
 * (sched_abandon), one still to arrive, or out of memory (nothing changed). */
int sched_complete(SchedState *s, size_t job, Error *err);
/* The job's run is suspended outside the scheduler (live mode: Slurm suspended its job for a
 * higher-priority one, PreemptMode=SUSPEND, or an operator's scontrol suspend): it keeps its
 * GPUs (Slurm keeps a suspended job's GRES), so they stay its in the model, but it makes no
 * progress while suspended: its time counts as GPU-seconds held, not as work done. Decisions
 * keep it at its size (as a pin would): a resize is a checkpoint its stopped processes cannot
 * write. 0 when it is resumed. Fails for an unknown job. */
int sched_suspend(SchedState *s, size_t job, int suspended, Error *err);
/* The job may be given at most `gpus` GPUs from now on (live mode: Slurm refused its job at
 * gpus + 1 or more, a limit of the cluster's that the model does not know: a partition's
 * MaxNodes, a QOS's MaxTRESPerJob). Every later decision, whatever the policy, keeps it
 * there, as it keeps a job within its batch limits; a pin above it is refused. A ceiling
 * only comes down: one at or above the job's present ceiling changes nothing. When the job
 * holds more GPUs now (or lies over more nodes than its node ceiling), it keeps `keep` of
 * them (1..gpus, none when 0; under a node ceiling at most what its largest slots on that
 * many nodes hold: sched_job_info says what it kept), its largest slots first, and gives the
 * rest back: logged as a resize to `keep` (a stop for 0) that carries
 * ceiling_gpus, which a live driver enacts as a start at that size (from its checkpoint);
 * with none kept the job waits queued for a decision to place it within the ceiling.
 * `gpus` must be >= 1 (a job that cannot run at 1 GPU is the caller's to fail: sched_abandon).
 * Fails for an unknown or finished job, a keep out of range, a keep the job's batch cannot
 * be split over, or out of memory (nothing changed by this call: a node ceiling set before
 * it stays). */
int sched_set_ceiling(SchedState *s, size_t job, int gpus, int keep, Error *err);
/* The job may be placed over at most `nodes` nodes from now on (live mode: Slurm refused it
 * over nodes + 1, a partition's MaxNodes). Placement keeps it there: in the fastest class
 * that holds it on that many nodes, else anywhere on as few, else at what the largest free
 * blocks of that many nodes hold (a decision's size lowered, not one more refusal); no
 * decision gives it more than those nodes hold beyond others' holds (sched_hold_gpus), nor
 * moves it to a faster class. Set it before the ceiling in GPUs (sched_set_ceiling), whose
 * fall back then keeps at most that many of the job's slots. A node ceiling only comes down.
 * Fails for an unknown or finished job, or nodes < 1 (nothing changed). */
int sched_set_node_ceiling(SchedState *s, size_t job, int nodes, Error *err);
/* The job's ceiling is lifted (live mode: its back-off has passed, and the cluster's limit
 * may have been raised meanwhile), its node ceiling with it: later decisions may give it more
 * again, up to its batch limits. Nothing changes for a job without one. Fails for an unknown
 * job. */
int sched_lift_ceiling(SchedState *s, size_t job, Error *err);
/* The most GPUs a job placed over at most `nodes` nodes can hold: the GPUs of the `nodes`
 * largest nodes not drained, as placement takes whole nodes, the largest first, for a job
 * that does not fit in one (core/sched/placement.h). What a ceiling under a limit on a job's
 * node count is (a partition's MaxNodes). 0 for nodes < 1 (or out of memory). */
int sched_most_gpus_on_nodes(const SchedState *s, int nodes);
/* The ceiling under a placement of `nodes` nodes (slot_gpus GPUs on each) refused for its node
 * count: what one node fewer of that placement leaves (its GPUs less its smallest node's), or
 * what the nodes - 1 largest nodes hold where that is less. A placement the model spread over
 * more nodes than its size needs would otherwise get a ceiling that one node fewer holds
 * whole, and be placed over as many nodes again. The size less one for nodes < 2. */
int sched_node_ceiling(const SchedState *s, const int *slot_gpus, size_t nodes);
/* A node joins the running cluster (core/sched/sched_grow.c): named `name` (not one of the
 * scheduler's), with `gpus` GPUs (1..64) of `type` ("" unknown) at `speed` (1 = the measured
 * GPUs), usable from now on; the next decision may place jobs there. Returns its index (the
 * node count before), or -1 with err. */
int sched_add_node(SchedState *s, const char *name, int gpus, const char *type, double speed,
                   Error *err);
/* Keeps (on = 0, the default) or drops (1) each job's estimated speeds between decisions;
 * 1 also fits each job's own throughput model at every observation whatever the policy
 * (0 fits it only while an exploring policy reads it: core/sched/sched.c). The decisions
 * are the same either way, only slower with 1: it is the old way, there so that the unit
 * tests and bench/schedscale.c can compare the two (core/sched/sched_decide.c). */
void sched_speed_per_decision(SchedState *s, int on);
/* Switches the policy (a name of sched_policy_names()) from the next decision on. */
int sched_set_policy(SchedState *s, const char *name, Error *err);
const char *sched_policy_name(const SchedState *s);

/* Live mode: a real job's measured progress replaces the simulated one. epochs_done is
 * fractional (12.5 = half-way through the 13th epoch); a job reaching its epoch count is
 * finished now. step_s > 0 is its measured time of one micro-step (its per-GPU batch with
 * the synchronisation; without gradient accumulation, its step) on its current allocation,
 * which refines the job's own throughput model (used by `doubling-explore`). */
int sched_report_progress(SchedState *s, size_t job, double epochs_done, double step_s, Error *err);

typedef struct {
    size_t jobs, done;
    double avg_jct_s, p50_jct_s, p99_jct_s, makespan_s;
    /* GPU-seconds held / usable GPU-seconds until the makespan: a drained node's GPUs and
     * GPUs held by others (sched_hold_gpus) count only while they are usable, so 1 means
     * every GPU we could use was busy. */
    double gpu_utilization;
    /* usable GPUs integrated over [0, makespan], and the GPUs our jobs held while not
     * usable (drained or held by others, until the next decision moved them) */
    double gpu_s_usable;
    double resizes_per_job;
    /* GPU-seconds held while stalled (the --resize-cost after a placement, GPUs × seconds
     * of it run): after a resize, a move or a restart after a stop; and after each job's
     * first start, apart (its first placement is not a resize) */
    double gpu_s_lost_to_resizes, gpu_s_lost_to_starts;
    double gpu_s_held, gpu_s_idle; /* idle: every GPU's seconds not held, usable or not */
    double decision_ms_median, decision_ms_max;
    size_t decisions;
    size_t peak_live_jobs; /* most jobs arrived and not finished at one decision */
} SchedSummary;

void sched_summary(const SchedState *s, SchedSummary *out);
/* Usable GPUs (not drained, not held by others) integrated over [0, until_s]. */
double sched_usable_gpu_s(const SchedState *s, double until_s);

#endif
