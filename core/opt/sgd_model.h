/* The structured probabilistic model of one distributed-SGD iteration (seed bo-sgd-scheduling
 * §3, DESIGN §2.1): per device class a time curve against inputs, per multi-device machine type
 * an aggregation time, a semi-parametric communication model, and iteration time = max over
 * workers of machine time + communication. Each part is a Bayesian linear model plus a GP on
 * its residual, fitted on the part measurements of every trial. */
#ifndef TUNEDECK_SGD_MODEL_H
#define TUNEDECK_SGD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/model/observation.h"

typedef struct SgdModel SgdModel;

/* Keeps pointers to c (must outlive the model); copies the job. */
SgdModel *sgd_model_new(const Cluster *c, const JobSpec *job, Error *err);
void sgd_model_free(SgdModel *m);

/* Stores a copy of the trial (failed ones too: an out-of-memory failure caps the device).
 * -1, the model unchanged, when out of memory. */
int sgd_model_observe(SgdModel *m, const Observation *o);
size_t sgd_model_trials(const SgdModel *m);
/* The i-th stored trial, in the order observed. */
const Observation *sgd_model_trial(const SgdModel *m, size_t i);
/* Refits every part on every stored trial; hyperparameter restarts drawn from `seed`. */
int sgd_model_fit(SgdModel *m, uint64_t seed, Error *err);

/* Inputs a device may take: its declared memory limit, a limit learned from an
 * out-of-memory trial, or the batch. */
int sgd_model_device_cap(const SgdModel *m, size_t flat_device);
/* Posterior-mean time curve of a device with x inputs; `shared` when another device of the
 * same machine is loaded too. Non-decreasing in x; 0 for x <= 0. */
double sgd_model_device_mean(const SgdModel *m, size_t flat_device, double x, int shared);
/* The most inputs the device finishes within t_s by the mean curve (0 when none). */
double sgd_model_device_inverse(const SgdModel *m, size_t flat_device, int shared, double t_s);
/* Mean aggregation time of a machine that loads several devices (0 for single-device). */
double sgd_model_agg_mean(const SgdModel *m, size_t machine);
/* Mean communication time of a role assignment. */
double sgd_model_comm_mean(const SgdModel *m, const unsigned char *worker, const unsigned char *ps);
/* Mean iteration time of a schedule by the mean curves; machine_s (n_machines) optional. */
double sgd_model_mean(const SgdModel *m, const Schedule *s, double *machine_s, double *comm_s);

/* Standard normals for forward sampling, fixed per suggestion (common random numbers). */
typedef struct SgdNormals SgdNormals;
SgdNormals *sgd_normals_new(const SgdModel *m, size_t ns, uint64_t seed); /* NULL: no memory */
void sgd_normals_free(SgdNormals *z);
size_t sgd_normals_count(const SgdNormals *z);

/* Joint forward samples of the schedule's iteration time: iter_s[ns]; optional outputs
 * machine_s[ns * n_machines], device_s[ns * n_devices], comm_s[ns]. */
int sgd_model_sample(const SgdModel *m, const Schedule *s, const SgdNormals *z, double *iter_s,
                     double *machine_s, double *device_s, double *comm_s, Error *err);

/* Megabytes machine `i` moves per iteration under a role assignment (DESIGN §2.1): gradients
 * out and parameters in for every shard it does not hold, and its shard to every other
 * worker when it is a parameter server. */
double sgd_model_traffic_mb(const Cluster *c, double model_mb, const unsigned char *worker,
                            const unsigned char *ps, size_t i);

#endif
