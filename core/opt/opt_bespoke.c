/* The bespoke optimizer (seed bo-sgd-scheduling §3, DESIGN §2.1): Bayesian optimization on
 * the structured model. Expected improvement is estimated by forward sampling with common
 * random numbers; it is maximized by the decomposition: role sets searched by local moves,
 * loads set by water-filling per role set, then refined by moving inputs between devices. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/optimizer.h"
#include "core/opt/prune.h"
#include "core/opt/sgd_model.h"
#include "core/opt/waterfill.h"

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
    Schedule *best; /* best observed ok trial */
    double best_s;
    Schedule **seen; /* every schedule observed, to avoid repeats */
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

/* Role sets already evaluated in this search (open addressing; clusters up to 32 machines
 * are keyed exactly by their role bits, larger ones are not memoized). */
enum { MEMO_SLOTS = 1 << 14 };
typedef struct {
    uint64_t key[MEMO_SLOTS];
    double value[MEMO_SLOTS];
    int *inputs; /* MEMO_SLOTS x n_devices */
    size_t n_devices;
    unsigned char used[MEMO_SLOTS];
    Cand starts[MAX_STARTS];
    size_t n_starts;
} Memo;

static int memo_key(const Schedule *s, uint64_t *key)
{
    size_t n = s->cluster->n_machines;
    if (n > 32)
        return 0;
    uint64_t k = 0;
    for (size_t m = 0; m < n; m++)
        k |= (uint64_t)(s->worker[m] != 0) << m | (uint64_t)(s->ps[m] != 0) << (32 + m);
    *key = k;
    return 1;
}

static double eval_roles(const Bespoke *b, Memo *memo, Schedule *s)
{
    if (!schedule_count_workers(s) || !schedule_count_ps(s))
        return INFINITY;
    uint64_t key = 0;
    size_t slot = 0;
    int keyed = memo && memo_key(s, &key);
    if (keyed) {
        slot = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 50) & (MEMO_SLOTS - 1);
        for (size_t probe = 0; probe < 64 && memo->used[slot]; probe++) {
            if (memo->key[slot] == key) {
                memcpy(s->inputs, &memo->inputs[slot * memo->n_devices],
                       memo->n_devices * sizeof *s->inputs);
                return memo->value[slot];
            }
            slot = (slot + 1) & (MEMO_SLOTS - 1);
        }
        keyed = !memo->used[slot];
    }
    double v = isfinite(waterfill_schedule(b->model, s)) ? sgd_model_mean(b->model, s, NULL, NULL)
                                                         : INFINITY;
    if (keyed) {
        memo->used[slot] = 1;
        memo->key[slot] = key;
        memo->value[slot] = v;
        memcpy(&memo->inputs[slot * memo->n_devices], s->inputs,
               memo->n_devices * sizeof *s->inputs);
    }
    return v;
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

/* Role moves on machine mv / 3: toggle its worker role, its PS role, or the machine as a
 * whole (off, or on as worker and PS: the seed's "workers also parameter servers"). */
static void apply_move(Schedule *s, size_t mv)
{
    size_t mi = mv / 3;
    switch (mv % 3) {
    case 0:
        s->worker[mi] = !s->worker[mi];
        break;
    case 1:
        s->ps[mi] = !s->ps[mi];
        break;
    default: {
        unsigned char on = !(s->worker[mi] || s->ps[mi]);
        s->worker[mi] = s->ps[mi] = on;
    }
    }
}

/* Large clusters: machines of one type are interchangeable to the model, so moves act on
 * groups — k machines of a type go from one role state (off, worker, PS, both) to another,
 * k = 1, half the group or all of it — and steps stay few however many machines there are. */
static int role_state(const Schedule *s, size_t m)
{
    return (s->worker[m] ? 1 : 0) | (s->ps[m] ? 2 : 0);
}

static void group_move(Schedule *s, size_t type, int from, int to, int k)
{
    const Cluster *c = s->cluster;
    for (size_t m = 0; m < c->n_machines && k > 0; m++)
        if (c->machines[m].type == type && role_state(s, m) == from) {
            s->worker[m] = (unsigned char)(to & 1);
            s->ps[m] = (unsigned char)((to >> 1) & 1);
            k--;
        }
}

static void climb_groups(const Bespoke *b, Schedule *s, double cur, Cand *pool, size_t *n_pool)
{
    const Cluster *c = b->c;
    Schedule *t = schedule_copy(s), *best_s = schedule_copy(s);
    int *count = calloc(c->n_types * 4, sizeof *count);
    for (int step = 0; step < MAX_CLIMB; step++) {
        memset(count, 0, c->n_types * 4 * sizeof *count);
        for (size_t m = 0; m < c->n_machines; m++)
            count[c->machines[m].type * 4 + role_state(s, m)]++;
        double best = cur;
        int moved = 0;
        for (size_t ty = 0; ty < c->n_types; ty++)
            for (int from = 0; from < 4; from++) {
                int n = count[ty * 4 + from];
                int ks[3] = {1, (n + 1) / 2, n};
                for (int to = 0; to < 4 && n > 0; to++)
                    for (int ki = 0; ki < 3 && to != from; ki++) {
                        if (ki > 0 && ks[ki] == ks[ki - 1])
                            continue;
                        schedule_copy_into(t, s);
                        group_move(t, ty, from, to, ks[ki]);
                        double v = eval_roles(b, NULL, t);
                        pool_offer(pool, n_pool, t, v);
                        if (v < best - 1e-12 * fabs(best)) {
                            best = v;
                            schedule_copy_into(best_s, t);
                            moved = 1;
                        }
                    }
            }
        if (!moved)
            break;
        schedule_copy_into(s, best_s);
        cur = best;
    }
    free(count);
    schedule_free(t);
    schedule_free(best_s);
}

/* Best-improvement hill climbing over role moves. */
static void climb(const Bespoke *b, Memo *memo, Schedule *s, Cand *pool, size_t *n_pool)
{
    const Cluster *c = b->c;
    Schedule *t = schedule_copy(s);
    double cur = eval_roles(b, memo, s);
    pool_offer(pool, n_pool, s, cur);
    /* Every start is also an EI candidate: structurally different schedules the mean model
     * ranks low may be where it is least sure (a device measured once). */
    if (isfinite(cur) && memo->n_starts < MAX_STARTS) {
        memo->starts[memo->n_starts].s = schedule_copy(s);
        memo->starts[memo->n_starts++].mean_s = cur;
    }
    if (c->n_machines > SMALL_CLUSTER) {
        climb_groups(b, s, cur, pool, n_pool);
        schedule_free(t);
        return;
    }
    for (int step = 0; step < MAX_CLIMB; step++) {
        double best = cur;
        size_t best_move = (size_t)-1;
        for (size_t mv = 0; mv < 3 * c->n_machines; mv++) {
            schedule_copy_into(t, s);
            apply_move(t, mv);
            double v = eval_roles(b, memo, t);
            pool_offer(pool, n_pool, t, v);
            if (v < best - 1e-12 * fabs(best)) {
                best = v;
                best_move = mv;
            }
        }
        if (best_move == (size_t)-1)
            break;
        apply_move(s, best_move);
        cur = eval_roles(b, memo, s);
    }
    schedule_free(t);
}

/* Load moves around a candidate: shift a few percent of the batch from each loaded device
 * of the slowest machine to every other loaded device (water-filling balances means only;
 * EI may prefer a hedge). */
static void load_moves(const Bespoke *b, const Cand *cand, Cand *out, size_t *n_out, size_t cap)
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
    /* Receivers: the loaded devices, or on large clusters the few that finish earliest. */
    size_t *to_list = malloc(c->n_devices * sizeof *to_list), n_to = 0;
    double *fin = malloc(c->n_devices * sizeof *fin);
    for (size_t d = 0; d < c->n_devices; d++) {
        size_t m;
        cluster_device(c, d, &m);
        int shared = 0;
        for (size_t j = 0; j < c->types[c->machines[m].type].n_devices; j++)
            shared += cand->s->inputs[c->machines[m].first_device + j] > 0;
        fin[d] = sgd_model_device_mean(b->model, d, cand->s->inputs[d], shared > 1);
        if (cand->s->inputs[d] > 0)
            to_list[n_to++] = d;
    }
    for (size_t i = 0; i < n_to && i < LOAD_TARGETS && n_to > LOAD_TARGETS; i++)
        for (size_t j = i + 1; j < n_to; j++)
            if (fin[to_list[j]] < fin[to_list[i]]) {
                size_t tmp = to_list[i];
                to_list[i] = to_list[j];
                to_list[j] = tmp;
            }
    if (n_to > LOAD_TARGETS)
        n_to = LOAD_TARGETS;
    free(fin);
    for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
        size_t from = mc->first_device + j;
        if (cand->s->inputs[from] < step)
            continue;
        for (size_t ti = 0; ti < n_to && *n_out < cap; ti++) {
            size_t to = to_list[ti];
            if (to == from || cand->s->inputs[to] + step > sgd_model_device_cap(b->model, to))
                continue;
            Schedule *s = schedule_copy(cand->s);
            s->inputs[from] -= step;
            s->inputs[to] += step;
            out[*n_out].s = s;
            out[*n_out].mean_s = sgd_model_mean(b->model, s, NULL, NULL);
            (*n_out)++;
        }
    }
    free(to_list);
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
    const Cluster *c = b->c;
    Cand pool[POOL];
    size_t n_pool = 0;
    Memo *memo = calloc(1, sizeof *memo);
    memo->n_devices = c->n_devices;
    memo->inputs = malloc(MEMO_SLOTS * c->n_devices * sizeof *memo->inputs);
    Schedule *s = schedule_new(c, &b->job);
    /* Starts: the incumbent's roles, every machine in both roles, each type alone as workers
     * with every machine a PS or with the workers as PS, each machine alone, and a few
     * random role sets. */
    if (b->best) {
        schedule_copy_into(s, b->best);
        climb(b, memo, s, pool, &n_pool);
    }
    memset(s->worker, 1, c->n_machines);
    memset(s->ps, 1, c->n_machines);
    climb(b, memo, s, pool, &n_pool);
    for (size_t t = 0; t < c->n_types && c->n_types > 1; t++) {
        for (size_t m = 0; m < c->n_machines; m++) {
            s->worker[m] = c->machines[m].type == t;
            s->ps[m] = 1;
        }
        if (c->n_machines <= SMALL_CLUSTER)
            climb(b, memo, s, pool, &n_pool);
        memcpy(s->ps, s->worker, c->n_machines);
        climb(b, memo, s, pool, &n_pool);
    }
    /* One machine alone, its own PS: no traffic at all (wins when the model is large). */
    for (size_t m = 0; m < c->n_machines && c->n_machines <= SOLO_STARTS_MAX; m++) {
        memset(s->worker, 0, c->n_machines);
        memset(s->ps, 0, c->n_machines);
        s->worker[m] = s->ps[m] = 1;
        climb(b, memo, s, pool, &n_pool);
    }
    for (int r = 0; r < (c->n_machines <= SMALL_CLUSTER ? RANDOM_STARTS : 2); r++) {
        random_roles(b, s);
        climb(b, memo, s, pool, &n_pool);
    }
    schedule_free(s);
    if (!n_pool) {
        for (size_t i = 0; i < memo->n_starts; i++)
            schedule_free(memo->starts[i].s);
        free(memo->inputs);
        free(memo);
        error_set(err, "bespoke: no role set can take the batch of %d", b->job.batch);
        return NULL;
    }
    /* Candidates: the pool, the climbs' starts, load moves and forced loading options. */
    size_t cap = 3 * (n_pool + memo->n_starts) + 8 * 4 * LOAD_TARGETS;
    Cand *cands = malloc(cap * sizeof *cands);
    memcpy(cands, pool, n_pool * sizeof *pool);
    size_t n = n_pool;
    qsort(cands, n_pool, sizeof *cands, cmp_cand);
    for (size_t i = 0; i < memo->n_starts; i++)
        cands[n++] = memo->starts[i];
    free(memo->inputs);
    free(memo);
    /* Forced loading options on the best few role sets and on every start. */
    size_t n_base = n;
    for (size_t i = 0; i < n_base && n + 2 <= cap; i++) {
        if (i >= 6 && i < n_pool)
            continue;
        for (int mode = WATERFILL_ALONE; mode <= WATERFILL_SHARED; mode++) {
            Schedule *v = schedule_copy(cands[i].s);
            if (!isfinite(waterfill_schedule_mode(b->model, v, (WaterfillMode)mode))) {
                schedule_free(v);
                continue;
            }
            cands[n].s = v;
            cands[n++].mean_s = sgd_model_mean(b->model, v, NULL, NULL);
        }
    }
    for (size_t i = 0; i < n_pool && i < 8; i++)
        load_moves(b, &cands[i], cands, &n, cap);
    /* Expected improvement by forward sampling with common random numbers, per unit of the
     * trial's expected cost (EI per unit cost, Snoek et al. 2012 §3.2): of two candidates that
     * promise the same gain, the cheaper one to measure runs first. */
    SgdNormals *z = sgd_normals_new(b->model, EI_SAMPLES, b->seed + 31 * (uint64_t)b->suggested);
    double t[EI_SAMPLES];
    size_t pick = (size_t)-1, pick_mean = (size_t)-1;
    double best_score = 0, best_ei = 0;
    for (size_t i = 0; i < n; i++) {
        if (was_seen(b, cands[i].s) || schedule_validate(cands[i].s, NULL) < 0)
            continue;
        if (pick_mean == (size_t)-1 || cands[i].mean_s < cands[pick_mean].mean_s)
            pick_mean = i;
        if (!isfinite(b->best_s) ||
            sgd_model_sample(b->model, cands[i].s, z, t, NULL, NULL, NULL, NULL) < 0)
            continue;
        double ei = expected_improvement(t, EI_SAMPLES, b->best_s);
        double score = ei / expected_cost(t, EI_SAMPLES, b->best_s);
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
    Schedule *s = b->n_seen == 0 ? first_design(b, err) : NULL;
    if (s && schedule_validate(s, NULL) < 0) {
        schedule_free(s); /* declared memory limits: let the prior model place the batch */
        s = NULL;
    }
    double ei = 0;
    if (!s)
        s = search(b, &ei, err);
    if (!s)
        return -1;
    b->suggested++;
    out->schedule = s;
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    /* Before any trial has a time there is nothing to improve on: no EI to judge by. */
    out->has_ei = isfinite(b->best_s);
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
    out->schedule = schedule_copy(s);
    if (fill_prediction(b, s, out, err) < 0) {
        suggestion_clear(out);
        return -1;
    }
    return 0;
}

const OptimizerKind OPTIMIZER_BESPOKE = {
    "bespoke", "Bayesian optimization on the structured model of distributed SGD (seed §3)",
    create,    suggest,
    observe,   predict,
    destroy,
};
