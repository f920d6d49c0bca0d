/* The generic Bayesian-optimization baseline `gp` (DESIGN §2.1): GP-EI over the flattened
 * parameter vector, as Spearmint does (Snoek et al. 2012) — Matérn 5/2 ARD kernel with
 * hyperparameters by marginal likelihood, expected improvement maximized over random
 * candidates plus a coordinate local search from the best few. It sees only the objective
 * of each trial, never the part measurements: it is the peer the structured `bespoke`
 * optimizer is measured against.
 *
 * Search space (the box [0,1]^dim, dim = 2 * machines + devices):
 *   x[2m]     worker bit of machine m (on when >= 0.5)
 *   x[2m + 1] PS bit of machine m     (on when >= 0.5)
 *   x[2M + d] share weight of device d
 * The two bits are the one-hot role {none, worker, ps, worker+ps} factored into two binary
 * factors. A point is decoded by core/opt/flatsched.h (roles, then the batch split over the
 * workers' devices by largest remainder, repaired into a valid schedule). The GP's input is
 * the point's canonical form: the bits of the decoded schedule's roles and its device shares
 * inputs/batch (the transformation of Garrido-Merchán & Hernández-Lobato 2020 for discrete
 * variables), so all the points that decode to one schedule are one point to the model.
 * The output is log(time_s); failed or timed-out trials count as twice the worst ok time. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rng.h"
#include "core/opt/flatsched.h"
#include "core/opt/gp.h"
#include "core/opt/optimizer.h"

enum {
    N_INIT = 5,      /* design points before the model: the box centre + a Latin hypercube */
    N_RANDOM = 1500, /* uniform random EI candidates */
    N_LOCAL = 500,   /* perturbations of the best observed points */
    N_CLIMB = 5,     /* EI candidates the coordinate search starts from */
    CLIMB_PASSES = 4
};

static const double FAIL_FACTOR = 2.0;

typedef struct {
    const Cluster *c;
    JobSpec job;
    uint64_t seed;
    size_t M, D, dim;
    Gp *gp;
    size_t fitted_at; /* observations the GP was fitted on; (size_t)-1 never */
    int have_model;   /* at least one ok trial in the fitted data */
    int fitted_once;
    double best_y; /* min log time over ok trials */
    /* Every usable observation: canonical point and time (< 0 failed). */
    double *X, *t;
    size_t n, cap;
    /* Every suggestion, canonical, not to be proposed again. */
    double *S;
    size_t n_s, cap_s;
    double *design; /* N_INIT x dim raw points */
    int suggested;
    gsl_rng *rng;
    Schedule *scratch;
    int *roles;
    /* M flags, nonzero: the machine is left out (optimizer_leave_out); NULL: none is */
    unsigned char *left_out;
} GpOpt;

static void destroy(void *self);

static void *create(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    if (!c->n_machines || !c->n_devices) {
        error_set(err, "gp: the cluster '%s' has no %s", c->name,
                  c->n_machines ? "device" : "machine");
        return NULL;
    }
    size_t dim = 2 * c->n_machines + c->n_devices;
    if (dim > GP_MAX_DIM) {
        error_set(err,
                  "gp: the cluster '%s' flattens to %zu parameters (2 per machine, 1 per "
                  "device); the GP takes at most %d",
                  c->name, dim, GP_MAX_DIM);
        return NULL;
    }
    if (job->batch < 1) {
        error_set(err, "gp: the job's batch is %d, expected at least 1", job->batch);
        return NULL;
    }
    Gp *gp = gp_new(GP_KERNEL_MATERN52, dim, err);
    if (!gp)
        return NULL;
    GpOpt *g = calloc(1, sizeof *g);
    if (!g) {
        gp_free(gp);
        error_no_memory(err, "gp: cluster '%s'", c->name);
        return NULL;
    }
    g->c = c;
    job_copy(&g->job, job);
    g->seed = seed;
    g->M = c->n_machines;
    g->D = c->n_devices;
    g->dim = dim;
    g->gp = gp;
    g->fitted_at = (size_t)-1;
    g->rng = rng_new((unsigned long)(seed * 0x9e3779b97f4a7c15ull + 3));
    g->scratch = schedule_new(c, &g->job);
    g->roles = calloc(g->M, sizeof *g->roles);
    g->design = malloc(N_INIT * dim * sizeof *g->design);
    if (!g->rng || !g->scratch || !g->roles || !g->design) {
        destroy(g);
        error_no_memory(err, "gp: cluster '%s'", c->name);
        return NULL;
    }
    /* Design: the centre of the box (where a Sobol grid starts: every machine in both roles,
     * equal shares), then a Latin hypercube over the rest. */
    for (size_t i = 0; i < dim; i++)
        g->design[i] = 0.5;
    size_t strata = N_INIT - 1, perm[N_INIT];
    for (size_t i = 0; i < dim; i++) {
        for (size_t k = 0; k < strata; k++)
            perm[k] = k;
        gsl_ran_shuffle(g->rng, perm, strata, sizeof *perm);
        for (size_t k = 0; k < strata; k++)
            g->design[(k + 1) * dim + i] = (perm[k] + gsl_rng_uniform(g->rng)) / strata;
    }
    return g;
}

static void destroy(void *self)
{
    GpOpt *g = self;
    if (!g)
        return;
    gp_free(g->gp);
    free(g->X);
    free(g->t);
    free(g->S);
    free(g->design);
    free(g->roles);
    free(g->left_out);
    schedule_free(g->scratch);
    gsl_rng_free(g->rng);
    job_clear(&g->job);
    free(g);
}

/* ---- encoding ---- */

static void canonical_of(const GpOpt *g, const Schedule *s, double *z)
{
    for (size_t m = 0; m < g->M; m++) {
        z[2 * m] = s->worker[m] ? 1 : 0;
        z[2 * m + 1] = s->ps[m] ? 1 : 0;
    }
    for (size_t d = 0; d < g->D; d++)
        z[2 * g->M + d] = (double)s->inputs[d] / s->job.batch;
}

/* Decodes a raw point into g->scratch; -1 when the workers cannot hold the batch. */
static int decode(GpOpt *g, const double *x, Error *err)
{
    for (size_t m = 0; m < g->M; m++)
        g->roles[m] = (x[2 * m] >= 0.5 ? FLAT_WORKER : 0) | (x[2 * m + 1] >= 0.5 ? FLAT_PS : 0);
    return flatsched_decode(g->roles, &x[2 * g->M], g->scratch, err);
}

static int same_point(const double *a, const double *b, size_t dim)
{
    for (size_t i = 0; i < dim; i++)
        if (fabs(a[i] - b[i]) > 1e-12)
            return 0;
    return 1;
}

static int already_tried(const GpOpt *g, const double *z)
{
    for (size_t i = 0; i < g->n_s; i++)
        if (same_point(&g->S[i * g->dim], z, g->dim))
            return 1;
    for (size_t i = 0; i < g->n; i++)
        if (same_point(&g->X[i * g->dim], z, g->dim))
            return 1;
    return 0;
}

/* ---- observations and the model ---- */

static void observe(void *self, const Observation *o)
{
    GpOpt *g = self;
    if (o->schedule->cluster != g->c)
        return;
    double t;
    if (observation_measured(o) && isfinite(o->time_s) && o->time_s > 0)
        t = o->time_s;
    else if (o->status == TRIAL_FAILED || o->status == TRIAL_TIMEOUT ||
             (o->status == TRIAL_OK && !(o->time_s > 0)))
        t = -1; /* the schedule's fault: penalized */
    else
        return; /* unreachable, cancelled, interrupted: says nothing about the schedule */
    if (g->n == g->cap) {
        /* Out of memory, the trial is not kept: the model goes on with what it has. */
        size_t cap = g->cap ? 2 * g->cap : 32;
        double *X = realloc(g->X, cap * g->dim * sizeof *X);
        if (X)
            g->X = X;
        double *tt = realloc(g->t, cap * sizeof *tt);
        if (tt)
            g->t = tt;
        if (!X || !tt)
            return;
        g->cap = cap;
    }
    canonical_of(g, o->schedule, &g->X[g->n * g->dim]);
    g->t[g->n++] = t;
}

/* ---- hyperparameters: maximum a posteriori ----
 * Plain marginal likelihood in 30+ dimensions from a handful of points drives every
 * lengthscale to a bound (the data interpolated by unrelated bumps, EI flat everywhere away
 * from them). Priors, in the GP's normalized units: log lengthscale ~ N(sqrt 2 + log(dim)/2,
 * sqrt 3) (the dimension-scaled prior of Hvarfner, Hellsten & Nardi 2024, "Vanilla Bayesian
 * optimization performs great in high dimensions"), log signal variance ~ N(0, 1) (outputs
 * are standardized), log noise variance ~ N(-6, 3). */

/* BFGS from the previous estimate and from the prior's centre (core/opt/gp.c's fitter with
 * the priors above); the better is kept. */
static int fit_map(GpOpt *g, Error *err)
{
    double d = (double)g->dim;
    const GpPrior prior = {.log_ls = {sqrt(2.0) + 0.5 * log(d), sqrt(3.0)},
                           .log_sf2 = {0, 1},
                           .log_sn2 = {-6, 3}};
    /* The restart from the prior's centre guards against a stale local optimum; past 20
     * trials it runs every 4th fit only, to bound the cost. */
    GpFitOptions how = {.prior = &prior,
                        .from_current = g->fitted_once,
                        .from_prior_mean = !g->fitted_once || g->n <= 20 || g->n % 4 == 0};
    g->fitted_once = 1;
    return gp_fit_with(g->gp, &how, err);
}

/* Refits the GP on every observation when there are new ones. */
static int refit(GpOpt *g, Error *err)
{
    if (g->fitted_at == g->n)
        return 0;
    double worst = 0;
    size_t n_ok = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->t[i] > 0) {
            worst = fmax(worst, g->t[i]);
            n_ok++;
        }
    g->have_model = n_ok > 0;
    g->fitted_at = g->n;
    if (!n_ok)
        return 0;
    double *y = malloc(g->n * sizeof *y);
    if (!y) {
        g->have_model = 0;
        return error_no_memory(err, "gp: %zu observations", g->n);
    }
    g->best_y = INFINITY;
    for (size_t i = 0; i < g->n; i++) {
        y[i] = log(g->t[i] > 0 ? g->t[i] : FAIL_FACTOR * worst);
        if (g->t[i] > 0)
            g->best_y = fmin(g->best_y, y[i]);
    }
    int rc = gp_set_data(g->gp, g->X, y, g->n, err);
    free(y);
    if (rc == 0)
        rc = fit_map(g, err);
    if (rc < 0)
        g->have_model = 0;
    return rc;
}

static double expected_improvement(const GpOpt *g, const double *z)
{
    double mu, var;
    gp_predict(g->gp, z, &mu, &var);
    double sd = sqrt(var), imp = g->best_y - mu;
    if (sd < 1e-12)
        return imp > 0 ? imp : 0;
    double u = imp / sd;
    return imp * gsl_cdf_ugaussian_P(u) + sd * gsl_ran_ugaussian_pdf(u);
}

/* Whether the decoded schedule gives a role to a machine left out: a trial there would fail
 * unreachable, so the search does not propose it. */
static int uses_left_out(const GpOpt *g)
{
    for (size_t m = 0; g->left_out && m < g->M; m++)
        if (g->left_out[m] && (g->scratch->worker[m] || g->scratch->ps[m]))
            return 1;
    return 0;
}

/* Decodes into a schedule not tried yet, on no machine left out. */
static int fresh(GpOpt *g, const double *x, double *z)
{
    if (decode(g, x, NULL) < 0 || uses_left_out(g))
        return 0;
    canonical_of(g, g->scratch, z);
    return !already_tried(g, z);
}

/* EI of a raw point through its canonical form; -1 when it does not decode or was tried. */
static double score(GpOpt *g, const double *x, double *z)
{
    return fresh(g, x, z) ? expected_improvement(g, z) : -1;
}

/* ---- EI maximization ---- */

typedef struct {
    double ei;
    double *x;
} Cand;

static int cmp_cand_desc(const void *a, const void *b)
{
    double x = ((const Cand *)a)->ei, y = ((const Cand *)b)->ei;
    return x > y ? -1 : x < y;
}

static void random_point(GpOpt *g, double *x)
{
    for (size_t i = 0; i < g->dim; i++)
        x[i] = gsl_rng_uniform(g->rng);
}

/* A few coordinates of a good observed point changed: bits flipped, shares scaled or zeroed. */
static void perturb(GpOpt *g, const double *from, double *x)
{
    memcpy(x, from, g->dim * sizeof *x);
    int k = 1 + (int)gsl_rng_uniform_int(g->rng, 3);
    for (int j = 0; j < k; j++) {
        size_t i = gsl_rng_uniform_int(g->rng, g->dim);
        if (i < 2 * g->M) {
            x[i] = x[i] >= 0.5 ? 0 : 1;
        } else {
            double u = gsl_rng_uniform(g->rng);
            x[i] = u < 0.15  ? 0
                   : u < 0.3 ? gsl_rng_uniform(g->rng)
                             : fmin(1.0, x[i] * exp(0.5 * gsl_ran_ugaussian(g->rng)));
        }
    }
}

/* First-improvement coordinate search on EI from x (raw; updated in place). */
static double climb(GpOpt *g, double *x, double ei, double *z)
{
    double *t = malloc(g->dim * sizeof *t);
    if (!t)
        return ei; /* no memory for the search: the candidate as it is */
    for (int pass = 0; pass < CLIMB_PASSES; pass++) {
        int moved = 0;
        double mean_w = 0;
        size_t n_pos = 0;
        for (size_t d = 0; d < g->D; d++)
            if (x[2 * g->M + d] > 0) {
                mean_w += x[2 * g->M + d];
                n_pos++;
            }
        mean_w = n_pos ? mean_w / n_pos : 0.5;
        for (size_t i = 0; i < g->dim; i++) {
            double vals[6];
            size_t nv = 0;
            if (i < 2 * g->M) {
                vals[nv++] = x[i] >= 0.5 ? 0 : 1;
            } else {
                double w = x[i];
                if (w > 0) {
                    vals[nv++] = 0;
                    vals[nv++] = 0.5 * w;
                    vals[nv++] = 0.8 * w;
                    vals[nv++] = fmin(1.0, 1.25 * w);
                    vals[nv++] = fmin(1.0, 2 * w);
                } else {
                    vals[nv++] = mean_w;
                    vals[nv++] = 0.5 * mean_w;
                }
            }
            for (size_t v = 0; v < nv; v++) {
                memcpy(t, x, g->dim * sizeof *t);
                t[i] = vals[v];
                double e = score(g, t, z);
                if (e > ei * (1 + 1e-9) + 1e-300) {
                    ei = e;
                    x[i] = vals[v];
                    moved = 1;
                }
            }
        }
        if (!moved)
            break;
    }
    free(t);
    return ei;
}

/* The raw point with the largest EI found, into x; -1 when no untried schedule decodes. */
static int maximize_ei(GpOpt *g, double *x, Error *err)
{
    size_t dim = g->dim, nc = N_RANDOM + N_LOCAL;
    double *xs = malloc(nc * dim * sizeof *xs), *z = malloc(dim * sizeof *z);
    Cand *cands = malloc(nc * sizeof *cands);
    if (!xs || !z || !cands) {
        free(xs), free(z), free(cands);
        return error_no_memory(err, "gp: %zu candidates", nc);
    }
    /* The best observed points (ok trials) seed the local candidates. */
    size_t order[3] = {0}, n_best = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (!(g->t[i] > 0))
            continue;
        size_t at = n_best < 3 ? n_best++ : 3;
        while (at > 0 && g->t[order[at - 1]] > g->t[i]) {
            if (at < 3)
                order[at] = order[at - 1];
            at--;
        }
        if (at < 3)
            order[at] = i;
    }
    for (size_t k = 0; k < nc; k++) {
        double *p = &xs[k * dim];
        if (k >= N_RANDOM && n_best)
            perturb(g, &g->X[order[(k - N_RANDOM) % n_best] * dim], p);
        else
            random_point(g, p);
        cands[k].x = p;
        cands[k].ei = score(g, p, z);
    }
    qsort(cands, nc, sizeof *cands, cmp_cand_desc);
    int rc = 0;
    if (cands[0].ei < 0) {
        /* Every schedule drawn was tried (a tiny cluster): run the best one again. */
        if (n_best)
            memcpy(x, &g->X[order[0] * dim], dim * sizeof *x);
        else
            rc = error_set(err, "gp: no untried schedule among %zu candidates", nc);
    } else {
        size_t best = 0;
        for (size_t k = 0; k < N_CLIMB && k < nc && cands[k].ei >= 0; k++) {
            cands[k].ei = climb(g, cands[k].x, cands[k].ei, z);
            if (cands[k].ei > cands[best].ei)
                best = k;
        }
        memcpy(x, cands[best].x, dim * sizeof *x);
    }
    free(cands);
    free(xs);
    free(z);
    return rc;
}

/* ---- suggestions ---- */

static void fill_prediction(const GpOpt *g, const double *z, Suggestion *out)
{
    if (!g->have_model)
        return;
    double mu, var;
    gp_predict(g->gp, z, &mu, &var);
    double sd = sqrt(var), q = 1.2815515655446004; /* the normal's 90% quantile */
    out->has_prediction = 1;
    out->mean_s = exp(mu + 0.5 * var); /* the log-normal's mean */
    out->p10_s = exp(mu - q * sd);
    out->p90_s = exp(mu + q * sd);
    out->comm_mean_s = -1; /* unknown (as the journal reads it back): no structure */
}

static int suggest(void *self, Suggestion *out, Error *err)
{
    GpOpt *g = self;
    if (refit(g, err) < 0)
        return -1;
    size_t dim = g->dim;
    double *x = malloc(dim * sizeof *x), *z = malloc(dim * sizeof *z);
    if (!x || !z) {
        free(x), free(z);
        return error_no_memory(err, "gp: suggestion");
    }
    int rc = -1;
    /* The design first, and random points until an ok trial gives the model a scale; a
     * point whose schedule was already tried is replaced by a random one. */
    if (g->suggested < N_INIT || !g->have_model) {
        for (int tries = 0; tries < 256 && rc < 0; tries++) {
            if (g->suggested < N_INIT && tries == 0)
                memcpy(x, &g->design[g->suggested * dim], dim * sizeof *x);
            else
                random_point(g, x);
            rc = fresh(g, x, z) ? 0 : -1;
        }
    }
    if (rc < 0 && g->have_model)
        rc = maximize_ei(g, x, err);
    if (rc < 0 && !g->have_model) {
        /* Everything drawn was tried already: repeat a random schedule rather than stop. */
        for (int tries = 0; tries < 256 && rc < 0; tries++) {
            random_point(g, x);
            rc = decode(g, x, NULL);
        }
        if (rc < 0)
            rc = error_set(err, "gp: no point decodes into a schedule for the batch of %d",
                           g->job.batch);
    }
    if (rc == 0)
        rc = decode(g, x, err);
    if (rc == 0) {
        if (g->n_s == g->cap_s) {
            size_t cap = g->cap_s ? 2 * g->cap_s : 32;
            double *S = realloc(g->S, cap * dim * sizeof *S);
            if (S) {
                g->S = S;
                g->cap_s = cap;
            }
        }
        out->schedule = g->n_s < g->cap_s ? schedule_copy(g->scratch) : NULL;
        if (!out->schedule) {
            rc = error_no_memory(err, "gp: suggestion");
        } else {
            canonical_of(g, out->schedule, z);
            fill_prediction(g, z, out);
            memcpy(&g->S[g->n_s++ * dim], z, dim * sizeof *z);
            g->suggested++;
        }
    }
    free(x);
    free(z);
    return rc;
}

static int predict(void *self, const Schedule *s, Suggestion *out, Error *err)
{
    GpOpt *g = self;
    if (s->cluster != g->c)
        return error_set(err, "gp: the schedule is for another cluster");
    if (schedule_validate(s, err) < 0)
        return -1;
    if (refit(g, err) < 0)
        return -1;
    double *z = malloc(g->dim * sizeof *z);
    out->schedule = z ? schedule_copy(s) : NULL;
    if (!out->schedule) {
        free(z);
        return error_no_memory(err, "gp: prediction");
    }
    canonical_of(g, s, z);
    fill_prediction(g, z, out);
    free(z);
    return 0;
}

/* Out of memory none is left out: the tuner moves the schedule off them as before. */
static void leave_out(void *self, const unsigned char *out)
{
    GpOpt *g = self;
    free(g->left_out);
    g->left_out = NULL;
    size_t any = 0;
    for (size_t m = 0; out && m < g->M; m++)
        any += out[m] != 0;
    if (any && (g->left_out = calloc(g->M, 1)))
        for (size_t m = 0; m < g->M; m++)
            g->left_out[m] = out[m] != 0;
}

const OptimizerKind OPTIMIZER_GP = {
    "gp",
    "generic GP-EI on the flattened roles and shares, Matérn 5/2 ARD (Spearmint-like peer)",
    create,
    suggest,
    observe,
    predict,
    destroy,
    leave_out,
};
