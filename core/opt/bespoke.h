/* The bespoke optimizer's insides, shared by its two files: opt_bespoke.c (the optimizer:
 * model refits, expected improvement, suggestions) and bespoke_roles.c (the search for role
 * sets and loads on the model's mean that proposes the candidates). */
#ifndef TUNEDECK_BESPOKE_H
#define TUNEDECK_BESPOKE_H

#include <gsl/gsl_rng.h>

#include "core/opt/candpool.h"
#include "core/opt/history.h"
#include "core/opt/optimizer.h"
#include "core/opt/sgd_model.h"

enum {
    EI_SAMPLES = 64,       /* forward samples per candidate for expected improvement */
    PREDICT_SAMPLES = 256, /* forward samples for a reported prediction */
    POOL = 24,             /* best role sets (by mean) kept as EI candidates */
    RANDOM_STARTS = 4,     /* fresh role-set starts besides the incumbent and the full set */
    MAX_CLIMB = 40,
    SOLO_STARTS_MAX = 16, /* clusters up to this size also start from each machine alone */
    MAX_STARTS = 64,
    LOAD_TARGETS = 16,
    SMALL_CLUSTER = 32 /* up to this many machines, moves act on single machines */
};

typedef struct {
    const Cluster *c;
    JobSpec job;
    uint64_t seed;
    SgdModel *model;
    size_t fitted_at; /* trials the model was last fitted on */
    int suggested;
    TrialHistory hist; /* every schedule observed, to avoid repeats; the best ok trial */
    gsl_rng *rng;
} Bespoke;

/* The candidates for the next suggestion, by the model's mean: the best role sets found by
 * local search from several starts, the starts themselves, forced loading options and load
 * moves. *out (owned by the caller, with each schedule) holds *n of them, the pool's best
 * first. -1 when no role set can take the batch. */
int bespoke_candidates(Bespoke *b, Cand **out, size_t *n, Error *err);

#endif
