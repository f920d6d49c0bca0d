/* The bespoke optimizer (seed bo-sgd-scheduling §3, DESIGN §2.1): Bayesian optimization on
 * the structured model. Expected improvement is estimated by forward sampling with common
 * random numbers; it is maximized by the decomposition: role sets searched by local moves,
 * loads set by water-filling per role set, then refined by moving inputs between devices. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/optimizer.h"
#include "core/sgd_model.h"
#include "core/waterfill.h"

enum {
    EI_SAMPLES = 64,      /* forward samples per candidate for expected improvement */
    PREDICT_SAMPLES = 256, /* forward samples for a reported prediction */
    POOL = 24,            /* best role sets (by mean) kept as EI candidates */
    RANDOM_STARTS = 4,    /* fresh role-set starts besides the incumbent and the full set */
    MAX_CLIMB = 40
};

typedef struct {
    const Cluster *c;
    JobSpec job;
    uint64_t seed;
    SgdModel *model;
    size_t fitted_at; /* trials the model was last fitted on; (size_t)-1 never */
    int suggested;
    Schedule *best;   /* best observed ok trial */
    double best_s;
    Schedule **seen;  /* every schedule observed, to avoid repeats */
    size_t n_seen;
    gsl_rng *rng;
} Bespoke;

typedef struct {
    Schedule *s;
    double mean_s;
} Cand;

static void *create(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    SgdModel *model = sgd_model_new(c, job, err);
    if (!model)
        return NULL;
    Bespoke *b = calloc(1, sizeof *b);
    b->c = c;
    job_copy(&b->job, job);
    b->seed = seed;
    b->model = model;
    b->fitted_at = 0;
    b->best_s = INFINITY;
    b->rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(b->rng, (unsigned long)seed * 2654435761u + 17);
    return b;
}

static void destroy(void *self)
{
    Bespoke *b = self;
    if (!b)
        return;
    sgd_model_free(b->model);
    schedule_free(b->best);
    for (size_t i = 0; i < b->n_seen; i++)
        schedule_free(b->seen[i]);
    free(b->seen);
    gsl_rng_free(b->rng);
    job_clear(&b->job);
    free(b);
}

static void observe(void *self, const Observation *o)
{
    Bespoke *b = self;
    sgd_model_observe(b->model, o);
    b->seen = realloc(b->seen, (b->n_seen + 1) * sizeof *b->seen);
    b->seen[b->n_seen++] = schedule_copy(o->schedule);
    if (o->status == TRIAL_OK && o->time_s < b->best_s) {
        b->best_s = o->time_s;
        schedule_free(b->best);
        b->best = schedule_copy(o->schedule);
    }
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

static int was_seen(const Bespoke *b, const Schedule *s)
{
    for (size_t i = 0; i < b->n_seen; i++)
        if (schedule_equal(b->seen[i], s))
            return 1;
    return 0;
}

/* The seed's "uniform devices" schedule: every device measured once, every machine a worker
 * and a parameter server — the most informative first trial when nothing is known. */
static Schedule *first_design(const Bespoke *b, Error *err)
{
    const Cluster *c = b->c;
    Schedule *s = schedule_new(c, &b->job);
    double *w = malloc(c->n_devices * sizeof *w);
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

/* ---- role-set search on the mean model ---- */

static double eval_roles(const Bespoke *b, Schedule *s)
{
    if (!schedule_count_workers(s) || !schedule_count_ps(s))
        return INFINITY;
    if (!isfinite(waterfill_schedule(b->model, s)))
        return INFINITY;
    return sgd_model_mean(b->model, s, NULL, NULL);
}

static void pool_offer(Cand *pool, size_t *n, const Schedule *s, double mean_s)
{
    if (!isfinite(mean_s))
        return;
    for (size_t i = 0; i < *n; i++)
        if (schedule_equal(pool[i].s, s))
            return;
    size_t at = *n;
    if (*n == POOL) {
        at = 0;
        for (size_t i = 1; i < *n; i++)
            if (pool[i].mean_s > pool[at].mean_s)
                at = i;
        if (pool[at].mean_s <= mean_s)
            return;
        schedule_free(pool[at].s);
    } else {
        (*n)++;
    }
    pool[at].s = schedule_copy(s);
    pool[at].mean_s = mean_s;
}

/* Best-improvement hill climbing over single role toggles (worker or PS of one machine). */
static void climb(const Bespoke *b, Schedule *s, Cand *pool, size_t *n_pool)
{
    const Cluster *c = b->c;
    Schedule *t = schedule_copy(s);
    double cur = eval_roles(b, s);
    pool_offer(pool, n_pool, s, cur);
    for (int step = 0; step < MAX_CLIMB; step++) {
        double best = cur;
        size_t best_move = (size_t)-1;
        for (size_t mv = 0; mv < 2 * c->n_machines; mv++) {
            schedule_copy_into(t, s);
            size_t mi = mv / 2;
            if (mv % 2)
                t->ps[mi] = !t->ps[mi];
            else
                t->worker[mi] = !t->worker[mi];
            double v = eval_roles(b, t);
            pool_offer(pool, n_pool, t, v);
            if (v < best - 1e-12 * fabs(best)) {
                best = v;
                best_move = mv;
            }
        }
        if (best_move == (size_t)-1)
            break;
        size_t mi = best_move / 2;
        if (best_move % 2)
            s->ps[mi] = !s->ps[mi];
        else
            s->worker[mi] = !s->worker[mi];
        cur = eval_roles(b, s);
    }
    schedule_free(t);
}

/* Load moves around a candidate: shift a few percent of the batch from each loaded device
 * of the slowest machine to every other loaded device (water-filling balances means only;
 * EI may prefer a hedge). */
static void load_moves(const Bespoke *b, const Cand *cand, Cand *out, size_t *n_out,
                       size_t cap)
{
    const Cluster *c = b->c;
    double *ms = malloc(c->n_machines * sizeof *ms);
    sgd_model_mean(b->model, cand->s, ms, NULL);
    size_t slow = 0;
    for (size_t m = 1; m < c->n_machines; m++)
        if (ms[m] > ms[slow])
            slow = m;
    free(ms);
    const Machine *mc = &c->machines[slow];
    int step = b->job.batch / 50 > 0 ? b->job.batch / 50 : 1;
    for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
        size_t from = mc->first_device + j;
        if (cand->s->inputs[from] < step)
            continue;
        for (size_t to = 0; to < c->n_devices && *n_out < cap; to++) {
            if (to == from || cand->s->inputs[to] <= 0 ||
                cand->s->inputs[to] + step > sgd_model_device_cap(b->model, to))
                continue;
            Schedule *s = schedule_copy(cand->s);
            s->inputs[from] -= step;
            s->inputs[to] += step;
            out[*n_out].s = s;
            out[*n_out].mean_s = sgd_model_mean(b->model, s, NULL, NULL);
            (*n_out)++;
        }
    }
}

static void random_roles(const Bespoke *b, Schedule *s)
{
    const Cluster *c = b->c;
    double pw = 0.3 + 0.6 * gsl_rng_uniform(b->rng), pp = 0.2 + 0.6 * gsl_rng_uniform(b->rng);
    for (size_t m = 0; m < c->n_machines; m++) {
        s->worker[m] = gsl_rng_uniform(b->rng) < pw;
        s->ps[m] = gsl_rng_uniform(b->rng) < pp;
    }
    s->worker[gsl_rng_uniform_int(b->rng, c->n_machines)] = 1;
    s->ps[gsl_rng_uniform_int(b->rng, c->n_machines)] = 1;
}

static double expected_improvement(const double *t, size_t n, double best)
{
    double ei = 0;
    for (size_t i = 0; i < n; i++)
        ei += t[i] < best ? best - t[i] : 0;
    return ei / n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_cand(const void *a, const void *b)
{
    return cmp_double(&((const Cand *)a)->mean_s, &((const Cand *)b)->mean_s);
}

/* Fills the prediction fields of a suggestion by forward sampling. */
static int fill_prediction(Bespoke *b, const Schedule *s, Suggestion *out, Error *err)
{
    const Cluster *c = b->c;
    size_t ns = PREDICT_SAMPLES, M = c->n_machines, D = c->n_devices;
    SgdNormals *z = sgd_normals_new(b->model, ns, b->seed ^ 0x5eedu);
    double *it = malloc(ns * sizeof *it), *ms = malloc(ns * M * sizeof *ms);
    double *ds = malloc(ns * D * sizeof *ds), *cs = malloc(ns * sizeof *cs);
    int rc = sgd_model_sample(b->model, s, z, it, ms, ds, cs, err);
    if (rc == 0) {
        out->has_prediction = 1;
        out->mean_s = out->comm_mean_s = 0;
        for (size_t i = 0; i < ns; i++) {
            out->mean_s += it[i] / ns;
            out->comm_mean_s += cs[i] / ns;
        }
        qsort(it, ns, sizeof *it, cmp_double);
        out->p10_s = it[ns / 10];
        out->p90_s = it[ns * 9 / 10];
        out->machine_mean_s = calloc(M, sizeof(double));
        out->machine_p10_s = calloc(M, sizeof(double));
        out->machine_p90_s = calloc(M, sizeof(double));
        out->device_mean_s = calloc(D, sizeof(double));
        double *col = malloc(ns * sizeof *col);
        for (size_t m = 0; m < M; m++) {
            for (size_t i = 0; i < ns; i++) {
                col[i] = ms[i * M + m];
                out->machine_mean_s[m] += col[i] / ns;
            }
            qsort(col, ns, sizeof *col, cmp_double);
            out->machine_p10_s[m] = col[ns / 10];
            out->machine_p90_s[m] = col[ns * 9 / 10];
        }
        free(col);
        for (size_t d = 0; d < D; d++)
            for (size_t i = 0; i < ns; i++)
                out->device_mean_s[d] += ds[i * D + d] / ns;
    }
    sgd_normals_free(z);
    free(it);
    free(ms);
    free(ds);
    free(cs);
    return rc;
}

static Schedule *search(Bespoke *b, Error *err)
{
    const Cluster *c = b->c;
    Cand pool[POOL];
    size_t n_pool = 0;
    Schedule *s = schedule_new(c, &b->job);
    /* Starts: the incumbent's roles, every machine in both roles, each type alone as workers
     * with every machine a PS, and a few random role sets. */
    if (b->best) {
        schedule_copy_into(s, b->best);
        climb(b, s, pool, &n_pool);
    }
    memset(s->worker, 1, c->n_machines);
    memset(s->ps, 1, c->n_machines);
    climb(b, s, pool, &n_pool);
    for (size_t t = 0; t < c->n_types && c->n_types > 1; t++) {
        for (size_t m = 0; m < c->n_machines; m++) {
            s->worker[m] = c->machines[m].type == t;
            s->ps[m] = 1;
        }
        climb(b, s, pool, &n_pool);
    }
    for (int r = 0; r < RANDOM_STARTS; r++) {
        random_roles(b, s);
        climb(b, s, pool, &n_pool);
    }
    schedule_free(s);
    if (!n_pool) {
        error_set(err, "bespoke: no role set can take the batch of %d", b->job.batch);
        return NULL;
    }
    /* Candidates: the pool plus load moves around its best few. */
    size_t cap = n_pool + 8 * 64;
    Cand *cands = malloc(cap * sizeof *cands);
    memcpy(cands, pool, n_pool * sizeof *pool);
    size_t n = n_pool;
    qsort(cands, n_pool, sizeof *cands, cmp_cand);
    for (size_t i = 0; i < n_pool && i < 8; i++)
        load_moves(b, &cands[i], cands, &n, cap);
    /* Expected improvement by forward sampling with common random numbers. */
    SgdNormals *z = sgd_normals_new(b->model, EI_SAMPLES, b->seed + 31 * (uint64_t)b->suggested);
    double t[EI_SAMPLES];
    size_t pick = (size_t)-1, pick_mean = (size_t)-1;
    double best_ei = 0;
    for (size_t i = 0; i < n; i++) {
        if (was_seen(b, cands[i].s) || schedule_validate(cands[i].s, NULL) < 0)
            continue;
        if (pick_mean == (size_t)-1 || cands[i].mean_s < cands[pick_mean].mean_s)
            pick_mean = i;
        if (!isfinite(b->best_s) || sgd_model_sample(b->model, cands[i].s, z, t, NULL, NULL,
                                                     NULL, NULL) < 0)
            continue;
        double ei = expected_improvement(t, EI_SAMPLES, b->best_s);
        if (ei > best_ei) {
            best_ei = ei;
            pick = i;
        }
    }
    sgd_normals_free(z);
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
    Schedule *s = b->n_seen == 0 ? first_design(b, err) : search(b, err);
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
    Bespoke *b = self;
    if (s->cluster != b->c)
        return error_set(err, "bespoke: the schedule is for another cluster");
    if (schedule_validate(s, err) < 0)
        return -1;
    if (refit(b, err) < 0)
        return -1;
    out->schedule = schedule_copy(s);
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    return 0;
}

const OptimizerKind OPTIMIZER_BESPOKE = {
    "bespoke",
    "Bayesian optimization on the structured model of distributed SGD (seed §3)",
    create,
    suggest,
    observe,
    predict,
    destroy,
};
