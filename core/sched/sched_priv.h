/* Internal: the scheduler state's job and state records, shared by core/sched/sched.c (state,
 * simulation), sched_decide.c, sched_place.c and sched_keep.c (decisions), sched_input.c,
 * sched_grow.c, sched_ceiling.c and sched_report.c. Not a public API. */
#ifndef TUNEDECK_SCHED_JOB_H
#define TUNEDECK_SCHED_JOB_H

#include "core/sched/catalogue.h"
#include "core/sched/jobmodel.h"
#include "core/sched/placement.h"
#include "core/sched/policy.h"
#include "core/sched/sched.h"

typedef struct {
    char *name;
    const AppModel *app;
    double submit_s;
    int req_gpus, req_batch;
    double start_s, finish_s;
    int done;
    double progress; /* in the app's units (init-batch steps) */
    int epoch;
    int gpus, most_gpus; /* held now; the most ever held */
    size_t n_allocs;     /* starts and resizes (allocations that hold GPUs) */
    size_t n_slots, cap_slots;
    SchedSlot *slots; /* grown when a placement needs more; freed when the job finishes */
    JobConfig conf;
    double stall_left_s;
    /* the stall left is its first start's (no checkpoint to restart from yet), not a
     * resize's: the summary counts the two apart (gpu_s_lost_to_starts, ..._to_resizes) */
    int stall_is_start;
    double gpu_s, lost_gpu_s;
    int pinned, paused;
    int suspended;  /* its run is stopped outside the scheduler, keeping its GPUs (sched_suspend) */
    int abandoned;  /* failed outside the scheduler: never placed again (sched_abandon) */
    int ceiling;    /* > 0: the most GPUs it may be given (sched_set_ceiling); 0 none */
    int ceiling_nodes; /* > 0: the most nodes it may be placed over (sched_set_node_ceiling) */
    int placed_gen; /* the decision that last placed it */
    SchedResize *resizes;
    size_t n_resizes, cap_resizes;
    /* exploration (POLICY_KNOWS_EXPLORE): stage 0..3 runs at 1, 2, 4, 8 GPUs */
    int explore_stage;
    double explore_run_s;
    TputPoint *obs;
    size_t n_obs, cap_obs;
    TputModel own;
    int own_ok;
    unsigned own_fits; /* tputmodel fits tried on obs: a change of `own` for the speed cache */
    size_t own_fitted; /* obs the fits have covered; the rest wait for an exploring policy */
    /* speed cache, indexed by log2 GPUs: from arrival until the job finishes. An entry holds
     * while what a speed depends on stays (sched_decide.c, speed_cb): the key below. */
    double *spd;
    JobConfig *spd_conf;
    int *spd_valid; /* 0: not known, 1: spd and spd_conf hold, -1: w GPUs cannot run it */
    int spd_epoch, spd_stage, spd_node_gpus, spd_gen;
    unsigned spd_fits;
    const Policy *spd_pol;
} SJob;

typedef struct {
    double at_s;
    int usable;
} SchedUsableStep;

struct SchedState {
    SchedConfig cfg;
    const Catalogue *cat;
    const Policy *pol;
    char **node_names;
    int *drained; /* SCHED_DRAIN_* bits: who holds each node drained */
    int *held;          /* GPUs of each node someone else holds (sched_hold_gpus) */
    int *node_gpus;     /* GPUs of each node */
    size_t *node_off;   /* first GPU of each node in owner[] */
    int *node_free;     /* GPUs of each node no job holds (drained nodes included) */
    double *node_speed; /* relative GPU speed of each node (1 = the measured GPUs) */
    int *node_group;    /* node group of each node */
    int *node_class;    /* rank of the node's speed among the distinct speeds, 0 = fastest */
    int n_classes;
    double *class_speed; /* speed of each class */
    char **group_types;  /* GPU type name of each group */
    size_t n_groups;
    int max_node_gpus, total_gpus;
    int start_gpus;  /* total_gpus at the start, before any node joined (sched_add_node) */
    int usable_gpus; /* total less drained nodes and GPUs held by others, kept up to date */
    int *owner;      /* every GPU, node by node: job index or -1 */
    /* Every change of usable_gpus (a drain, a hold, their end, a node joining) as the time
     * and the count after it; before the first, every GPU of the start (start_gpus) is
     * usable. The utilization divides by its integral (sched_usable_gpu_s). */
    SchedUsableStep *usable_log;
    size_t n_usable_log, cap_usable_log;
    SJob *jobs;
    size_t n_jobs, cap_jobs;
    /* Only live jobs (arrived, not finished) are visited by a decision or a step, so their
     * cost does not grow with the finished ones; a finished job keeps its record (name,
     * times, resize history) for the queries and the summary, nothing more. */
    size_t *live; /* job indices, in submission order */
    size_t n_live, cap_live;
    size_t next_arrival; /* first job not yet admitted into live */
    size_t peak_live;
    size_t n_done;
    double now_s, next_decision_s;
    double last_progress_s; /* when a job last progressed, finished or arrived */
    SchedEvent *events;
    size_t n_events, cap_events;
    double *decision_ms;
    size_t n_dec, cap_dec;
    double held_gpu_s, idle_gpu_s, lost_gpu_s, start_lost_gpu_s;
    /* GPU-seconds our jobs held on GPUs not usable (drained, or held by others) until the
     * next decision moved them: usable for the utilization while they are ours */
    double over_gpu_s;
    uint64_t rng;
    int gen;
    int speed_per_decision; /* 1: speeds recomputed every decision, the old way (tests, bench) */
};

/* Shared by core/sched/sched.c, sched_decide.c, sched_place.c and sched_input.c. */
#define SCHED_SPEED_CACHE 32   /* per-job speed cache: powers of two up to 2^31 GPUs */
#define SCHED_EXPLORE_STAGES 4 /* exploration runs at 1, 2, 4, 8 GPUs */
int sched_usable_gpus(const SchedState *s);
/* Sets the usable GPUs from now on and logs the change for the utilization; -1 when out of
 * memory, with nothing changed (core/sched/sched_input.c). */
int sched_set_usable(SchedState *s, int usable, Error *err);
/* GPUs of the node a placement may take now: none on a drained node, else those no job
 * holds less those held by someone else. */
int sched_node_available(const SchedState *s, int node);
/* One decision (core/sched/sched_decide.c). */
int sched_decide(SchedState *s, Error *err);
/* Appends to the decision log and the job's resize history; -1 when out of memory, having
 * appended to neither. */
int sched_log_event(SchedState *s, SchedEventKind kind, size_t job, int from, int to);
/* Gives the job's GPUs back to their nodes. */
void sched_release(SchedState *s, size_t job);
/* Relative speed of a placement: its slowest node's. */
double sched_slots_speed(const SchedState *s, const SchedSlot *slots, size_t n);
/* Frees what only a live job needs (after its GPUs are released). */
void sched_job_retire(SJob *j);
int sched_job_max_gpus(const SchedState *s, const SJob *j);
/* core/sched/sched_ceiling.c: the GPUs the job's ceiling_nodes largest nodes hold that no one
 * else does (not drained, less others' holds): the most a decision may give it there. */
int sched_job_node_ceiling_gpus(const SchedState *s, const SJob *j);
/* Places a job under a node ceiling: `*want` GPUs within the fastest class that holds them on
 * at most ceiling_nodes nodes, else anywhere on as few; where no placement of `*want` fits on
 * that many nodes (others' holds, our other jobs), the most its batch can run on what the
 * ceiling_nodes largest free blocks hold, *want lowered to it. Slots into nodes/gp (capacity
 * s->cfg.nodes); returns their count, or -1 with the pool as it was (nothing fits). */
int sched_take_node_capped(const SchedState *s, PlacementPool *pool, SJob *j, int *want,
                           int *nodes, int *gp);
/* The job's configuration (batch) and estimated rate on w GPUs, as the policy's knowledge
 * allows (core/sched/sched_decide.c); -1 when w GPUs cannot run it. */
int sched_job_config(const SchedState *s, SJob *j, int w, JobConfig *c, double *rate);
/* Records a measured micro-step time on the job's current allocation; refits its own model
 * while the policy reads it (core/sched/sched.c). */
void sched_job_observe(const SchedState *s, SJob *j, int nodes, double step_s);
/* Frees a job marked done (finish_s set) and logs its finish event. */
int sched_job_finish(SchedState *s, size_t job);
/* A done job's GPUs back to their nodes, what only a live job needs freed, counted done:
 * sched_job_finish after its event, sched_complete (core/sched/sched_input.c) after its own. */
void sched_job_done(SchedState *s, size_t job);
/* The simulation cannot end (core/sched/sched_report.c): fills err with the jobs that wait,
 * why, and the usable GPUs; returns -1. */
int sched_stuck_error(const SchedState *s, Error *err);

#endif
