/* Internal: the scheduler state's job and state records, shared by core/sched/sched.c (decisions,
 * simulation) and core/sched/sched_report.c (queries, events, summary). Not a public API. */
#ifndef TUNEDECK_SCHED_JOB_H
#define TUNEDECK_SCHED_JOB_H

#include "core/sched/catalogue.h"
#include "core/sched/jobmodel.h"
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
    int gpus;
    size_t n_slots;
    SchedSlot *slots; /* capacity: nodes */
    JobConfig conf;
    double stall_left_s;
    double gpu_s, lost_gpu_s;
    int pinned, paused;
    SchedResize *resizes;
    size_t n_resizes, cap_resizes;
    /* exploration (POLICY_KNOWS_EXPLORE): stage 0..3 runs at 1, 2, 4, 8 GPUs */
    int explore_stage;
    double explore_run_s;
    TputPoint *obs;
    size_t n_obs, cap_obs;
    TputModel own;
    int own_ok;
    /* per-decision speed cache, indexed by GPUs */
    double *spd;
    int spd_cap, spd_gen;
    int *spd_valid;
} SJob;

struct SchedState {
    SchedConfig cfg;
    const Catalogue *cat;
    const Policy *pol;
    char **node_names;
    int *drained;
    int *owner; /* nodes × gpus_per_node: job index or -1 */
    SJob *jobs;
    size_t n_jobs, cap_jobs;
    double now_s, next_decision_s;
    SchedEvent *events;
    size_t n_events, cap_events;
    double *decision_ms;
    size_t n_dec, cap_dec;
    double held_gpu_s, idle_gpu_s, lost_gpu_s;
    uint64_t rng;
    int gen;
};

/* Shared by core/sched/sched.c and core/sched/sched_input.c. */
#define SCHED_SPEED_CACHE 32 /* per-job speed cache: powers of two up to 2^31 GPUs */
int sched_usable_gpus(const SchedState *s);
int sched_job_max_gpus(const SchedState *s, const SJob *j);
/* Records a measured step time on the job's current allocation; refits its own model. */
void sched_job_observe(SJob *j, int nodes, double step_s);
/* Frees a job marked done (finish_s set) and logs its finish event. */
int sched_job_finish(SchedState *s, size_t job);

#endif
