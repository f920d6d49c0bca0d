/* The bespoke optimizer for allreduce jobs: Bayesian optimization on the allreduce model
 * (core/opt/allreduce_model.h). A schedule is decided by how many devices each machine runs
 * as ranks (0 = not taking part) and by the split of the batch over those ranks. The counts
 * are searched by hill climbing on the mean model; for each, the split equalizes predicted
 * finishing times (water-filling); the candidates are then judged by expected improvement
 * from forward samples with common random numbers, as the PS optimizer does. This file holds
 * the optimizer table entry; the search behind every suggestion but the first design is
 * opt_allreduce_search.c. */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "core/base/rng.h"
#include "core/opt/allreduce_model.h"
#include "core/opt/history.h"
#include "core/opt/opt_allreduce_priv.h"
#include "core/opt/optimizer.h"
#include "core/opt/prediction.h"

enum { PREDICT_SAMPLES = 256 };

static void destroy(void *self);

static void *create(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    ArModel *model = ar_model_new(c, job, err);
    if (!model)
        return NULL;
    ArOpt *b = calloc(1, sizeof *b);
    if (!b) {
        ar_model_free(model);
        error_no_memory(err, "bespoke (allreduce): cluster '%s'", c->name);
        return NULL;
    }
    b->c = c;
    job_copy(&b->job, job);
    b->seed = seed;
    b->model = model;
    history_init(&b->hist);
    b->rng = rng_new((unsigned long)seed * 2654435761u + 29);
    b->order = malloc((c->n_devices ? c->n_devices : 1) * sizeof *b->order);
    if (!b->rng || !b->order) {
        destroy(b);
        error_no_memory(err, "bespoke (allreduce): cluster '%s'", c->name);
        return NULL;
    }
    return b;
}

static void destroy(void *self)
{
    ArOpt *b = self;
    if (!b)
        return;
    ar_model_free(b->model);
    history_clear(&b->hist);
    gsl_rng_free(b->rng);
    free(b->order);
    job_clear(&b->job);
    free(b);
}

static void observe(void *self, const Observation *o)
{
    ArOpt *b = self;
    /* Out of memory, the trial is not kept: the model goes on with what it has. */
    if (ar_model_observe(b->model, o) < 0)
        return;
    (void)history_add(&b->hist, o);
}

/* Within a machine, a machine running g ranks uses its g fastest devices by the model. */
static void order_devices(ArOpt *b)
{
    const Cluster *c = b->c;
    const SgdModel *sm = ar_model_compute(b->model);
    double ref = (double)b->job.batch / c->n_devices + 1;
    for (size_t m = 0; m < c->n_machines; m++) {
        size_t first = c->machines[m].first_device, n = opt_allreduce_devices(b, m);
        for (size_t j = 0; j < n; j++)
            b->order[first + j] = first + j;
        for (size_t j = 1; j < n; j++) /* insertion sort: a handful of devices */
            for (size_t k = j;
                 k > 0 && sgd_model_device_mean(sm, b->order[first + k], ref, 1) <
                              sgd_model_device_mean(sm, b->order[first + k - 1], ref, 1);
                 k--) {
                size_t t = b->order[first + k];
                b->order[first + k] = b->order[first + k - 1];
                b->order[first + k - 1] = t;
            }
    }
}

static int refit(ArOpt *b, Error *err)
{
    size_t n = ar_model_trials(b->model);
    if (n == b->fitted_at && b->suggested)
        return 0;
    if (ar_model_fit(b->model, b->seed + n * 7919, err) < 0)
        return -1;
    b->fitted_at = n;
    order_devices(b);
    return 0;
}

/* Every device a rank with an equal share (DDP's default): one measurement of every device
 * class, every node's own allreduce and the widest inter-node ring. */
static int first_design(const ArOpt *b, Schedule **out, Error *err)
{
    const Cluster *c = b->c;
    Schedule *s = schedule_new(c, &b->job);
    double *w = malloc((c->n_devices ? c->n_devices : 1) * sizeof *w);
    *out = NULL;
    if (!s || !w) {
        schedule_free(s);
        free(w);
        return error_no_memory(err, "bespoke (allreduce): first design");
    }
    for (size_t d = 0; d < c->n_devices; d++)
        w[d] = 1;
    schedule_split_integer(w, c->n_devices, b->job.batch, s->inputs);
    free(w);
    for (size_t m = 0; m < c->n_machines; m++)
        s->worker[m] = schedule_machine_inputs(s, m) > 0;
    if (schedule_validate(s, NULL) < 0) { /* declared memory limits: let the model place it */
        schedule_free(s);
        return 0;
    }
    *out = s;
    return 0;
}

static int fill_prediction(ArOpt *b, const Schedule *s, Suggestion *out, Error *err)
{
    const Cluster *c = b->c;
    size_t ns = PREDICT_SAMPLES, M = c->n_machines, D = c->n_devices;
    ArNormals *z = ar_normals_new(b->model, ns, b->seed ^ 0x5eedu);
    double *it = malloc(ns * sizeof *it), *ms = malloc(ns * M * sizeof *ms);
    double *ds = malloc(ns * D * sizeof *ds), *cs = malloc(ns * sizeof *cs);
    int rc = z && it && ms && ds && cs ? 0
                                       : error_no_memory(err, "bespoke (allreduce): prediction");
    if (rc == 0)
        rc = ar_model_sample(b->model, s, z, it, ms, ds, cs, err);
    if (rc == 0)
        rc = prediction_from_samples(out, s, ns, it, ms, ds, cs, "bespoke (allreduce)", err);
    ar_normals_free(z);
    free(it);
    free(ms);
    free(ds);
    free(cs);
    return rc;
}

static int suggest(void *self, Suggestion *out, Error *err)
{
    ArOpt *b = self;
    if (refit(b, err) < 0)
        return -1;
    Schedule *s = NULL;
    if (b->hist.n_seen == 0 && first_design(b, &s, err) < 0)
        return -1;
    if (!s)
        s = opt_allreduce_search(b, err);
    if (!s && b->hist.left_out) {
        /* No set of devices on the machines left (every one left out, or too few for the
         * batch): the search as if none were; the tuner moves its schedule or before_launch
         * stops. */
        unsigned char *kept = history_leave_out_suspend(&b->hist);
        s = opt_allreduce_search(b, err);
        history_leave_out_restore(&b->hist, kept);
    }
    if (!s)
        return -1;
    b->suggested++;
    out->schedule = s;
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    return 0;
}

static int predict(void *self, const Schedule *s, Suggestion *out, Error *err)
{
    ArOpt *b = self;
    if (s->cluster != b->c)
        return error_set(err, "bespoke (allreduce): the schedule is for another cluster");
    if (schedule_validate(s, err) < 0)
        return -1;
    if (refit(b, err) < 0)
        return -1;
    if (!(out->schedule = schedule_copy(s)))
        return error_no_memory(err, "bespoke (allreduce): prediction");
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    return 0;
}

/* Reached through the name "bespoke" when the job is an allreduce job (core/opt/optimizer.c). */
static void leave_out(void *self, const unsigned char *out)
{
    ArOpt *b = self;
    history_leave_out(&b->hist, out, b->c->n_machines);
}

const OptimizerKind OPTIMIZER_BESPOKE_ALLREDUCE = {
    "bespoke",
    "Bayesian optimization on the structured allreduce model (bespoke for allreduce jobs)",
    create,
    suggest,
    observe,
    predict,
    destroy,
    leave_out,
};
