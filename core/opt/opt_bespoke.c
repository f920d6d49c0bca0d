/* The bespoke optimizer (seed bo-sgd-scheduling §3, DESIGN §2.1): Bayesian optimization on
 * the structured model. Expected improvement is estimated by forward sampling with common
 * random numbers over the candidates the decomposition proposes (core/opt/bespoke_roles.c:
 * role sets by local moves, loads by water-filling, then load moves between devices). */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rng.h"
#include "core/opt/bespoke.h"
#include "core/opt/prediction.h"
#include "core/opt/prune.h"

static void destroy(void *self);

static void *create(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    SgdModel *model = sgd_model_new(c, job, err);
    if (!model)
        return NULL;
    Bespoke *b = calloc(1, sizeof *b);
    if (!b) {
        sgd_model_free(model);
        error_no_memory(err, "bespoke: cluster '%s'", c->name);
        return NULL;
    }
    b->c = c;
    job_copy(&b->job, job);
    b->seed = seed;
    b->model = model;
    b->fitted_at = 0;
    history_init(&b->hist);
    b->rng = rng_new((unsigned long)seed * 2654435761u + 17);
    if (!b->rng) {
        destroy(b);
        error_no_memory(err, "bespoke: cluster '%s'", c->name);
        return NULL;
    }
    return b;
}

static void destroy(void *self)
{
    Bespoke *b = self;
    if (!b)
        return;
    sgd_model_free(b->model);
    history_clear(&b->hist);
    gsl_rng_free(b->rng);
    job_clear(&b->job);
    free(b);
}

static void observe(void *self, const Observation *o)
{
    Bespoke *b = self;
    /* Out of memory, the trial is not kept: the model goes on with what it has. */
    if (sgd_model_observe(b->model, o) < 0)
        return;
    (void)history_add(&b->hist, o);
}

static int refit(Bespoke *b, Error *err)
{
    size_t n = sgd_model_trials(b->model);
    if (n == b->fitted_at)
        return 0;
    if (sgd_model_fit(b->model, b->seed + n * 7919, err) < 0)
        return -1;
    b->fitted_at = n;
    return 0;
}

/* The seed's "uniform devices" schedule: every device measured once, every machine a worker
 * and a parameter server — the most informative first trial when nothing is known. */
static Schedule *first_design(const Bespoke *b, Error *err)
{
    const Cluster *c = b->c;
    Schedule *s = schedule_new(c, &b->job);
    double *w = malloc(c->n_devices * sizeof *w);
    if (!s || !w) {
        schedule_free(s);
        free(w);
        error_no_memory(err, "bespoke: first design");
        return NULL;
    }
    for (size_t d = 0; d < c->n_devices; d++)
        w[d] = 1;
    int rc = schedule_split_integer(w, c->n_devices, b->job.batch, s->inputs);
    free(w);
    if (rc < 0) {
        schedule_free(s);
        error_set(err, "bespoke: no device to place inputs on");
        return NULL;
    }
    for (size_t m = 0; m < c->n_machines; m++)
        s->worker[m] = s->ps[m] = schedule_machine_inputs(s, m) > 0;
    return s;
}

static double expected_improvement(const double *t, size_t n, double best)
{
    double ei = 0;
    for (size_t i = 0; i < n; i++)
        ei += t[i] < best ? best - t[i] : 0;
    return ei / n;
}

/* Fills the prediction fields of a suggestion by forward sampling. */
static int fill_prediction(Bespoke *b, const Schedule *s, Suggestion *out, Error *err)
{
    const Cluster *c = b->c;
    size_t ns = PREDICT_SAMPLES, M = c->n_machines, D = c->n_devices;
    SgdNormals *z = sgd_normals_new(b->model, ns, b->seed ^ 0x5eedu);
    double *it = malloc(ns * sizeof *it), *ms = malloc(ns * M * sizeof *ms);
    double *ds = malloc(ns * D * sizeof *ds), *cs = malloc(ns * sizeof *cs);
    int rc = z && it && ms && ds && cs ? 0 : error_no_memory(err, "bespoke: prediction");
    if (rc == 0)
        rc = sgd_model_sample(b->model, s, z, it, ms, ds, cs, err);
    if (rc == 0)
        rc = prediction_from_samples(out, s, ns, it, ms, ds, cs, "bespoke", err);
    sgd_normals_free(z);
    free(it);
    free(ms);
    free(ds);
    free(cs);
    return rc;
}

/* What running a candidate costs per iteration: its time, except that a trial slower than the
 * prune threshold stops early, so a sample above it costs about the threshold. */
static double expected_cost(const double *t, size_t n, double best)
{
    double cap = PRUNE_DEFAULT_K * best, sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += t[i] < cap ? t[i] : cap;
    return sum / n;
}

/* *ei_out: the expected improvement of the schedule chosen (0 when nothing improves). */
static Schedule *search(Bespoke *b, double *ei_out, Error *err)
{
    Cand *cands;
    size_t n;
    if (bespoke_candidates(b, &cands, &n, err) < 0)
        return NULL;
    /* Expected improvement by forward sampling with common random numbers, per unit of the
     * trial's expected cost (EI per unit cost, Snoek et al. 2012 §3.2): of two candidates that
     * promise the same gain, the cheaper one to measure runs first. */
    SgdNormals *z = sgd_normals_new(b->model, EI_SAMPLES, b->seed + 31 * (uint64_t)b->suggested);
    if (!z) {
        for (size_t i = 0; i < n; i++)
            schedule_free(cands[i].s);
        free(cands);
        error_no_memory(err, "bespoke: expected improvement");
        return NULL;
    }
    double t[EI_SAMPLES];
    size_t pick = (size_t)-1, pick_mean = (size_t)-1;
    double best_score = 0, best_ei = 0;
    for (size_t i = 0; i < n; i++) {
        /* not one already run, nor one on a machine left out (it would fail unreachable) */
        if (history_skips(&b->hist, cands[i].s) || schedule_validate(cands[i].s, NULL) < 0)
            continue;
        if (pick_mean == (size_t)-1 || cands[i].mean_s < cands[pick_mean].mean_s)
            pick_mean = i;
        if (!isfinite(b->hist.best_s) ||
            sgd_model_sample(b->model, cands[i].s, z, t, NULL, NULL, NULL, NULL) < 0)
            continue;
        double ei = expected_improvement(t, EI_SAMPLES, b->hist.best_s);
        double score = ei / expected_cost(t, EI_SAMPLES, b->hist.best_s);
        if (ei > 0 && score > best_score) {
            best_score = score;
            best_ei = ei;
            pick = i;
        }
    }
    sgd_normals_free(z);
    *ei_out = best_ei;
    /* No improvement expected anywhere: exploit the best predicted mean not yet run. */
    if (pick == (size_t)-1)
        pick = pick_mean;
    Schedule *chosen = pick == (size_t)-1 ? schedule_copy(cands[0].s) : cands[pick].s;
    for (size_t i = 0; i < n; i++)
        if (cands[i].s != chosen)
            schedule_free(cands[i].s);
    free(cands);
    return chosen;
}
static int suggest(void *self, Suggestion *out, Error *err)
{
    Bespoke *b = self;
    if (refit(b, err) < 0)
        return -1;
    Schedule *s = b->hist.n_seen == 0 ? first_design(b, err) : NULL;
    if (s && schedule_validate(s, NULL) < 0) {
        schedule_free(s); /* declared memory limits: let the prior model place the batch */
        s = NULL;
    }
    double ei = 0;
    if (!s)
        s = search(b, &ei, err);
    if (!s && b->hist.left_out) {
        /* No role set on the machines left (every one left out, or too few for the batch):
         * the search as if none were; the tuner moves its schedule or before_launch stops. */
        unsigned char *kept = history_leave_out_suspend(&b->hist);
        s = search(b, &ei, err);
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
    /* Before any trial has a time there is nothing to improve on: no EI to judge by. */
    out->has_ei = isfinite(b->hist.best_s);
    out->ei_s = out->has_ei ? ei : 0;
    return 0;
}

static int predict(void *self, const Schedule *s, Suggestion *out, Error *err)
{
    Bespoke *b = self;
    if (s->cluster != b->c)
        return error_set(err, "bespoke: the schedule is for another cluster");
    if (schedule_validate(s, err) < 0)
        return -1;
    if (refit(b, err) < 0)
        return -1;
    if (!(out->schedule = schedule_copy(s)))
        return error_no_memory(err, "bespoke: prediction");
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    return 0;
}

static void leave_out(void *self, const unsigned char *out)
{
    Bespoke *b = self;
    history_leave_out(&b->hist, out, b->c->n_machines);
}

const OptimizerKind OPTIMIZER_BESPOKE = {
    "bespoke", "Bayesian optimization on the structured model of distributed SGD (seed §3)",
    create,    suggest,
    observe,   predict,
    destroy,   leave_out,
};
