/* The insides of the structured SGD model, shared by its files only: sgd_model.c (the model
 * and its features), sgd_model_fit.c, sgd_model_predict.c (mean curves) and
 * sgd_model_sample.c (forward sampling). Everyone else includes core/opt/sgd_model.h. */
#ifndef TUNEDECK_SGD_MODEL_PARTS_H
#define TUNEDECK_SGD_MODEL_PARTS_H

#include "core/model/observation.h"
#include "core/opt/blr.h"
#include "core/opt/gp.h"

typedef struct SgdModel SgdModel; /* as in core/opt/sgd_model.h, which includes no part of this */

enum {
    CURVE_POINTS = 97, /* grid of the mean time curves used by water-filling */
    DEV_P = 3,         /* device features: 1, x, shared * x */
    GP_MAX_POINTS = 60, /* the most recent points a residual GP keeps (bounds its cost) */
    GP_MIN_POINTS = 6   /* the fewest points a residual GP is fitted on */
};

typedef struct {
    char key[96];
    int cap;    /* declared or learned memory limit; 0 = none */
    int ok_max; /* most inputs that ran */
    Blr blr;
    Gp *gp;
    int use_gp;
    size_t gp_fit_n; /* points at the last hyperparameter fit */
    double xmax;
    double curve[2][CURVE_POINTS]; /* mean time at x = xmax * i / (CURVE_POINTS - 1) */
} DevClass;

typedef struct {
    size_t n_dev; /* devices of this machine type */
    Blr blr;      /* p = 1: the mean aggregation time */
    Gp *gp;       /* on the inputs of each device */
    int use_gp;
    size_t gp_fit_n;
} AggPart;

struct SgdModel {
    const Cluster *c;
    JobSpec job;
    Observation **obs;
    size_t n_obs, cap_obs;
    size_t n_classes;
    DevClass *cls;
    size_t *class_of; /* flat device -> class */
    AggPart *agg;     /* per machine type */
    size_t comm_p;    /* n_types + 2: seconds per MB per type, intercept, per-peer latency */
    Blr comm;
    Gp *comm_gp;
    int comm_use_gp;
    size_t comm_gp_fit_n;
    double fallback_slope; /* s per input for a class never measured */
};

struct SgdNormals {
    size_t ns;
    double *device, *device_beta, *agg, *agg_beta, *comm_beta, *comm;
};

/* Devices of machine m that the schedule loads. */
int sgd_model_machine_loaded(const Cluster *c, const Schedule *s, size_t m);
/* sgd_model_traffic_mb of every machine at once: O(machines), not O(machines^2). */
void sgd_model_traffic_all(const Cluster *c, double model_mb, const unsigned char *worker,
                           const unsigned char *ps, double *out);

/* A part's mean: its linear model at phi plus its residual GP at x when it has one. */
double sgd_model_part_mean(const Blr *blr, const Gp *gp, int use_gp, const double *phi,
                           const double *x);
/* Device features: 1, x, shared * x. */
void sgd_model_device_phi(double x, int shared, double *phi);
/* Communication features of a role assignment under per-type seconds per MB `theta`: the
 * traffic of the machine that is slowest under theta, in its type's slot; 1; W + P. X gets
 * the GP's inputs (W, P). */
void sgd_model_comm_phi(const SgdModel *m, const unsigned char *worker, const unsigned char *ps,
                       const double *theta, double *phi, double *X);

#endif
