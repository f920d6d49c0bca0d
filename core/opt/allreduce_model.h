/* The structured model of one allreduce (DDP-style) iteration: the structured model's
 * per-device-class compute curves and aggregation term (core/opt/sgd_model.h), with the
 * parameter-server bandwidth model replaced by a hierarchical allreduce term — within each
 * node over its GPU link, then across the participating nodes over the slowest network link,
 * in the cost forms of core/model/allreduce.h — intra-node and inter-node links fitted
 * separately, plus a GP on its residual (semi-parametric, as for PS). */
#ifndef TUNEDECK_ALLREDUCE_MODEL_H
#define TUNEDECK_ALLREDUCE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/opt/sgd_model.h"

typedef struct ArModel ArModel;

/* Keeps a pointer to c (must outlive the model); copies the job, which must be an allreduce
 * job. */
ArModel *ar_model_new(const Cluster *c, const JobSpec *job, Error *err);
void ar_model_free(ArModel *m);

/* Stores a copy of the trial; -1, the model unchanged, when out of memory. */
int ar_model_observe(ArModel *m, const Observation *o);
size_t ar_model_trials(const ArModel *m);
int ar_model_fit(ArModel *m, uint64_t seed, Error *err);

/* The compute half: device curves, caps and aggregation (borrowed, owned by the model). */
const SgdModel *ar_model_compute(const ArModel *m);

/* The linear part's coefficients: per machine type the intra-node seconds per MB (θ_intra),
 * then α_intra (s per step), the inter-node multiplier on the inventory's slowest link
 * (θ_inter, 1 = the nominal rate), α_inter, a constant, and seconds per rank. */
enum {
    AR_COEF_ALPHA_INTRA,
    AR_COEF_THETA_INTER,
    AR_COEF_ALPHA_INTER,
    AR_COEF_CONST,
    AR_COEF_PER_RANK,
    AR_N_SHARED
};
/* Posterior mean of coefficient `i` (0..n_types-1: θ_intra per type; n_types + AR_COEF_*). */
double ar_model_coef(const ArModel *m, size_t i);

/* Mean allreduce time when machine i runs ranks[i] ranks (loaded devices; 0 = not taking
 * part). */
double ar_model_comm_mean(const ArModel *m, const int *ranks);
/* Mean iteration time: max over taking-part machines of (slowest device + aggregation when
 * shared) + allreduce. machine_s (n_machines) and comm_s optional. NaN when out of memory
 * (only past 256 machines, where it needs scratch space). */
double ar_model_mean(const ArModel *m, const Schedule *s, double *machine_s, double *comm_s);

/* Standard normals for forward sampling, fixed per suggestion (common random numbers). */
typedef struct ArNormals ArNormals;
ArNormals *ar_normals_new(const ArModel *m, size_t ns, uint64_t seed); /* NULL: no memory */
void ar_normals_free(ArNormals *z);
size_t ar_normals_count(const ArNormals *z);

/* Joint forward samples: iter_s[ns]; optional machine_s[ns * n_machines],
 * device_s[ns * n_devices], comm_s[ns]. */
int ar_model_sample(const ArModel *m, const Schedule *s, const ArNormals *z, double *iter_s,
                    double *machine_s, double *device_s, double *comm_s, Error *err);

/* Loaded devices per machine of a schedule (ranks[n_machines]); returns the total. */
int ar_schedule_ranks(const Schedule *s, int *ranks);

#endif
