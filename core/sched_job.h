/* Internal: the scheduler state's job and state records, shared by core/sched.c (decisions,
 * simulation) and core/sched_report.c (queries, events, summary). Not a public API. */
#ifndef TUNEDECK_SCHED_JOB_H
#define TUNEDECK_SCHED_JOB_H

#include "core/catalogue.h"
#include "core/jobmodel.h"
#include "core/policy.h"
#include "core/sched.h"

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

#endif
