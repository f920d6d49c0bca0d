/* Ask/tell optimizers chosen by name from a table (DESIGN §2.1): suggest() proposes the next
 * schedule with its prediction; observe() takes a measured trial. */
#ifndef TUNEDECK_OPTIMIZER_H
#define TUNEDECK_OPTIMIZER_H

#include <stdint.h>

#include "core/model/observation.h"

typedef struct {
    Schedule *schedule;       /* owned by the Suggestion */
    int has_prediction;
    double mean_s, p10_s, p90_s;   /* predicted iteration time */
    double comm_mean_s;
    double *machine_mean_s;   /* n_machines, predicted compute time (workers), else NULL */
    double *machine_p10_s, *machine_p90_s;
    double *device_mean_s;    /* n_devices, predicted device time, else NULL */
    int has_ei;               /* suggest() says how much it expected to gain */
    double ei_s;              /* expected improvement over the best measured time */
} Suggestion;

typedef struct Optimizer Optimizer;

typedef struct {
    const char *name;
    const char *summary;
    void *(*create)(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err);
    int (*suggest)(void *self, Suggestion *out, Error *err);
    void (*observe)(void *self, const Observation *o);
    /* Predicts an arbitrary schedule (the console's override editor); may be NULL. */
    int (*predict)(void *self, const Schedule *s, Suggestion *out, Error *err);
    void (*destroy)(void *self);
    /* The machines left out from now on (optimizer_leave_out); may be NULL. */
    void (*leave_out)(void *self, const unsigned char *out);
} OptimizerKind;

struct Optimizer {
    const OptimizerKind *kind;
    void *self;
};

const OptimizerKind *optimizer_find(const char *name);
/* Comma-separated list of names, for help and error messages. */
const char *optimizer_names(void);

Optimizer *optimizer_new(const char *name, const Cluster *c, const JobSpec *job, uint64_t seed,
                         Error *err);
int optimizer_suggest(Optimizer *o, Suggestion *out, Error *err);
void optimizer_observe(Optimizer *o, const Observation *obs);
/* The machines the next suggestions must not use (the tuner's: hosts refused for good), one
 * flag per cluster machine, nonzero: left out; NULL or all zero: none (the suggestions are
 * then those made without a call). The search skips candidates that use one, as it skips
 * those already observed; the model is unchanged. Kept until the next call. An optimizer
 * without a search to narrow (random, uniform) ignores it: the tuner moves its schedule off
 * them (schedule_leave_out), as it does when no candidate is left. */
void optimizer_leave_out(Optimizer *o, const unsigned char *out);
int optimizer_predict(Optimizer *o, const Schedule *s, Suggestion *out, Error *err);
void optimizer_free(Optimizer *o);

void suggestion_clear(Suggestion *s);

#endif
