/* The job-model catalogue: the six models measured for Pollux (OSDI 2021) — step and sync
 * times per placement and per-epoch gradient statistics per batch size — and ResNet-110 from
 * the seed's Table 1. It answers the simulator's ground truth (measured step time at a
 * placement, statistical efficiency at a batch) and carries each model's fitted throughput
 * model, which is what a `precompute` policy knows at a job's arrival. */
#ifndef TUNEDECK_CATALOGUE_H
#define TUNEDECK_CATALOGUE_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/sched/tputmodel.h"

typedef struct {
    int nodes, replicas;
    size_t n;
    double *bsz, *step_s, *sync_s; /* sorted by local batch */
} TraceCurve;

typedef struct {
    char name[32];
    int epochs;                  /* the job is done after this many epochs */
    int init_batch, max_batch;   /* smallest and largest validated global batch */
    int min_local, max_local;    /* per-GPU batch range measured */
    int fixed_local;             /* > 0: the batch per GPU never changes (the seed's 128) */
    size_t n_val;                /* validation batch sizes */
    int *val_bsz;                /* sorted */
    double *epoch_progress;      /* epochs + 1 values: progress (init-batch steps) at each
                                    epoch end, from the init batch's validation curve */
    double *grad_sqr, *grad_var; /* n_val × epochs */
    double *seed_epochs;         /* seed model: epochs to converge per val_bsz */
    size_t n_place;
    char (*place_id)[24];
    TraceCurve *place;
    size_t n_cfg;
    TraceCurve *cfg;  /* by (nodes, replicas): placement means + scalability */
    TputModel fitted; /* NNLS fit over every measured point */
} AppModel;

typedef struct Catalogue {
    size_t n;
    AppModel *apps;
} Catalogue;

/* Where the catalogue lies under tunedeck's data home (cmd/paths.h decides the home). */
#define CATALOGUE_SUBDIR "data/pollux-osdi21"

/* dir: the pollux-osdi21 folder (required: core decides no paths). ResNet-110 is always
 * added. */
Catalogue *catalogue_load(const char *dir, Error *err);
void catalogue_free(Catalogue *c);
const AppModel *catalogue_find(const Catalogue *c, const char *name);
/* "bert, cifar10, ..." for messages. */
void catalogue_names(const Catalogue *c, char *buf, size_t cap);

/* Ground truth, as the Pollux artifact's simulator computes it: the measured step/sync time
 * of a placement (GPUs per node, zeros allowed), interpolated in the local batch; placements
 * never measured are interpolated over (nodes, replicas) from the means and the
 * scalability runs. */
void app_step_time(const AppModel *a, const int *per_node, size_t n_nodes, double local_batch,
                   double *step_s, double *sync_s);
/* Statistical-efficiency gain at a global batch during epoch `epoch` (0-based): progress
 * per step in init-batch steps, (var + sqr) / (var/scale + sqr) with scale = batch/init. */
double app_gain(const AppModel *a, double batch, int epoch);
double app_total_progress(const AppModel *a);
/* Epoch (0-based) in which progress p lies. */
int app_epoch_at(const AppModel *a, double progress);

#endif
