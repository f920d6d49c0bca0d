/* Internal: the allreduce optimizer's state, shared by core/opt/opt_allreduce.c (the
 * optimizer table entry: create, observe, refit, first design, prediction) and
 * opt_allreduce_search.c (the search behind a suggestion). Not a public API. */
#ifndef TUNEDECK_OPT_ALLREDUCE_PRIV_H
#define TUNEDECK_OPT_ALLREDUCE_PRIV_H

#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/model/cluster.h"
#include "core/model/job.h"
#include "core/model/schedule.h"
#include "core/opt/allreduce_model.h"
#include "core/opt/history.h"

typedef struct {
    const Cluster *c;
    JobSpec job;
    uint64_t seed;
    ArModel *model;
    size_t fitted_at;
    int suggested;
    TrialHistory hist; /* every schedule observed, to avoid repeats; the best ok trial */
    gsl_rng *rng;
    size_t *order; /* per machine, its devices fastest first by the mean model (flat ids) */
} ArOpt;

/* How many devices machine m has: the most ranks it can run. */
static inline size_t opt_allreduce_devices(const ArOpt *b, size_t m)
{
    return b->c->types[b->c->machines[m].type].n_devices;
}

/* A suggestion other than the first design (an equal split, no model needed): the count
 * search, the split for each count vector, load moves, and the candidate of best expected
 * improvement not already tried (b->hist). Draws the random starts from b->rng. A new
 * schedule (caller frees), or NULL with err filled (out of memory; no set of devices can take
 * the batch). */
Schedule *opt_allreduce_search(ArOpt *b, Error *err);

#endif
