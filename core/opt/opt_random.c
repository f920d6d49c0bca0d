/* Random search: random worker and PS sets and a random split of the batch over the workers'
 * devices. The floor any optimizer must beat. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "core/base/rng.h"
#include "core/opt/optimizer.h"
#include "core/opt/schedule_random.h"

typedef struct {
    const Cluster *cluster;
    JobSpec job;
    gsl_rng *rng;
} RandomSearch;

static void *create(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    RandomSearch *r = calloc(1, sizeof *r);
    gsl_rng *rng = rng_new((unsigned long)seed + 1);
    if (!r || !rng) {
        free(r);
        gsl_rng_free(rng);
        error_no_memory(err, "random: cluster '%s'", c->name);
        return NULL;
    }
    r->cluster = c;
    job_copy(&r->job, job);
    r->rng = rng;
    return r;
}

static int suggest(void *self, Suggestion *out, Error *err)
{
    RandomSearch *r = self;
    out->schedule = schedule_random(r->cluster, &r->job, r->rng, err);
    return out->schedule ? 0 : -1;
}

static void observe(void *self, const Observation *o)
{
    (void)self;
    (void)o;
}

static void destroy(void *self)
{
    RandomSearch *r = self;
    if (!r)
        return;
    gsl_rng_free(r->rng);
    job_clear(&r->job);
    free(r);
}

const OptimizerKind OPTIMIZER_RANDOM = {
    "random", "random roles and a random split of the batch", create, suggest, observe, NULL,
    destroy,
    NULL, /* no search to narrow: the tuner moves its schedule off a machine left out */
};
