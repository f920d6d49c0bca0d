/* How a job runs on w GPUs: its batch configuration (the owner's fixed batch split with
 * gradient accumulation, as the Pollux artifact does, or a batch chosen for the GPUs) and
 * the progress per second that follows from a step-time source — the measured traces
 * (truth, oracle), the catalogue's fitted model (precompute) or a job's own fit (explore). */
#ifndef TUNEDECK_JOBMODEL_H
#define TUNEDECK_JOBMODEL_H

#include "core/sched/catalogue.h"
#include "core/sched/tputmodel.h"

#define JOBMODEL_MAX_ACCUM 16

typedef struct {
    int batch;  /* global batch */
    int atomic; /* per-GPU batch of one micro-step */
    int accum;  /* extra accumulation micro-steps per step */
} JobConfig;

/* A step-time source: either measured traces (model == NULL) or a throughput model. */
typedef struct {
    const AppModel *app;
    const TputModel *model;
    int gpus_per_node;
} StepSource;

/* Owner's batch on w GPUs: per-GPU batch ceil(batch/w) split into micro-steps of at most
 * max_local (the artifact's update_local_bsz). -1 when w GPUs cannot share the batch
 * (fewer than min_local samples each). */
int jobmodel_fixed(const AppModel *a, int batch, int w, JobConfig *out);
/* Progress per second on a placement (GPUs per node). A step is accum + 1 micro-steps and
 * one synchronisation; micro_step_s (if not NULL) gets the time of one micro-step of
 * c->atomic samples per GPU with its synchronisation: what a throughput model (tputmodel.h)
 * predicts, so what a job's own fit must be fitted on. The whole step with accumulation is
 * the wrong quantity: paired with the micro-step's batch it makes the step time fall with
 * the GPUs at a fixed per-GPU batch, which no model with non-negative terms can fit. */
double jobmodel_rate(const StepSource *src, const JobConfig *c, const int *per_node, int n_nodes,
                     int epoch, double *micro_step_s);
/* The same on a packed placement of w GPUs (what an estimate assumes). */
double jobmodel_rate_packed(const StepSource *src, const JobConfig *c, int w, int epoch);
/* The batch that maximizes estimated progress per second on w GPUs, between the model's
 * initial and largest validated batch; -1 when none fits. fixed_local models keep it. */
int jobmodel_best(const StepSource *src, int w, int epoch, JobConfig *out, double *rate);
/* Most GPUs a job can use: adaptive (any batch up to max_batch) or its fixed batch. */
int jobmodel_max_gpus(const AppModel *a, int fixed_batch);

#endif
