/* The allreduce optimizer's search for a suggestion (core/opt/opt_allreduce.c): hill climbing
 * over how many ranks each machine runs, from several starts, on the mean model (memoized per
 * count vector); for each count vector the batch split that equalizes predicted finishing
 * times (water-filling, then integer rounding within the devices' caps); load moves off the
 * slowest machine; then the candidate of best expected improvement from forward samples. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/allreduce_model.h"
#include "core/opt/candpool.h"
#include "core/opt/history.h"
#include "core/opt/opt_allreduce_priv.h"
#include "core/opt/waterfill.h"

enum {
    EI_SAMPLES = 64,
    POOL = 24, /* best count vectors (by mean) kept as EI candidates */
    RANDOM_STARTS = 4,
    SOLO_STARTS_MAX = 16,
    MAX_CLIMB = 40,
    LOAD_TARGETS = 8,
    MEMO_SLOTS = 1 << 12
};

typedef struct {
    uint64_t key[MEMO_SLOTS];
    double value[MEMO_SLOTS];
    unsigned char used[MEMO_SLOTS];
    int keyed; /* counts fit 4 bits each in 64 bits */
    int out_of_memory; /* an allocation failed: the search reports it, not its result */
} Memo;

typedef struct {
    const ArOpt *b;
    size_t *slot_device, *slot_machine;
    const int *counts;
    double *agg;
} FillCtx;

static double slot_inverse(void *ctx, size_t slot, double t_s)
{
    FillCtx *k = ctx;
    size_t m = k->slot_machine[slot];
    int shared = k->counts[m] > 1;
    double budget = t_s - (shared ? k->agg[m] : 0);
    if (budget <= 0)
        return 0;
    return sgd_model_device_inverse(ar_model_compute(k->b->model), k->slot_device[slot], shared,
                                    budget);
}

/* Sets s to the counts' ranks with the batch split so that predicted finishing times are
 * equal; returns the mean predicted iteration time, INFINITY when they cannot hold it (or
 * when out of memory, which it marks in the memo). */
static double fill(const ArOpt *b, Memo *memo, const int *counts, Schedule *s)
{
    const Cluster *c = b->c;
    const SgdModel *sm = ar_model_compute(b->model);
    size_t n = 0;
    size_t n_dev = c->n_devices ? c->n_devices : 1;
    FillCtx k = {b, malloc(n_dev * sizeof(size_t)), malloc(n_dev * sizeof(size_t)), counts,
                 calloc(c->n_machines ? c->n_machines : 1, sizeof(double))};
    double *x = malloc(n_dev * sizeof *x), *want = calloc(n_dev, sizeof *want);
    double v = INFINITY;
    if (!k.slot_device || !k.slot_machine || !k.agg || !x || !want) {
        memo->out_of_memory = 1;
        goto done;
    }
    for (size_t m = 0; m < c->n_machines; m++) {
        k.agg[m] = counts[m] > 1 ? sgd_model_agg_mean(sm, m) : 0;
        for (int j = 0; j < counts[m]; j++) {
            k.slot_device[n] = b->order[c->machines[m].first_device + (size_t)j];
            k.slot_machine[n++] = m;
        }
    }
    double t = n ? waterfill(slot_inverse, &k, n, b->job.batch, x) : INFINITY;
    if (isfinite(t)) {
        for (size_t i = 0; i < n; i++)
            want[k.slot_device[i]] = x[i];
        memset(s->ps, 0, c->n_machines);
        if (schedule_split_integer(want, c->n_devices, b->job.batch, s->inputs) == 0) {
            /* Rounding may push a device one input past its cap: hand the excess on. */
            for (size_t d = 0; d < c->n_devices; d++)
                while (s->inputs[d] > sgd_model_device_cap(sm, d)) {
                    size_t to = c->n_devices;
                    for (size_t e = 0; e < c->n_devices; e++)
                        if (want[e] > 0 && s->inputs[e] < sgd_model_device_cap(sm, e))
                            to = e;
                    if (to == c->n_devices)
                        break;
                    s->inputs[d]--;
                    s->inputs[to]++;
                }
            for (size_t m = 0; m < c->n_machines; m++)
                s->worker[m] = schedule_machine_inputs(s, m) > 0;
            v = ar_model_mean(b->model, s, NULL, NULL);
            if (isnan(v)) {
                memo->out_of_memory = 1;
                v = INFINITY;
            }
        }
    }
done:
    free(x);
    free(want);
    free(k.slot_device);
    free(k.slot_machine);
    free(k.agg);
    return v;
}

static double eval_counts(const ArOpt *b, Memo *memo, const int *counts, Schedule *s)
{
    uint64_t key = 0;
    size_t slot = 0;
    int keyed = memo->keyed;
    for (size_t m = 0; keyed && m < b->c->n_machines; m++)
        key |= (uint64_t)counts[m] << (4 * m);
    if (keyed) {
        slot = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 52) & (MEMO_SLOTS - 1);
        while (memo->used[slot] && memo->key[slot] != key)
            slot = (slot + 1) & (MEMO_SLOTS - 1);
        if (memo->used[slot])
            return memo->value[slot];
    }
    int any = 0;
    for (size_t m = 0; m < b->c->n_machines; m++)
        any |= counts[m] > 0;
    double v = any ? fill(b, memo, counts, s) : INFINITY;
    if (keyed) {
        memo->used[slot] = 1;
        memo->key[slot] = key;
        memo->value[slot] = v;
    }
    return v;
}

/* Best-improvement hill climbing over the counts: a machine gains or loses one rank, leaves,
 * or takes part with all its devices. */
static void climb(const ArOpt *b, Memo *memo, int *counts, Schedule *s, Cand *pool, size_t *np)
{
    const Cluster *c = b->c;
    size_t M = c->n_machines;
    int *trial = malloc((M ? M : 1) * sizeof *trial);
    if (!trial) {
        memo->out_of_memory = 1;
        return;
    }
    /* Each start off the machines left out (history_leave_out): the climb goes on from what
     * is left and never puts a rank there, where the trial would fail unreachable. */
    for (size_t m = 0; m < M; m++)
        if (history_left_out(&b->hist, m))
            counts[m] = 0;
    double cur = eval_counts(b, memo, counts, s);
    if (isfinite(cur)) {
        fill(b, memo, counts, s);
        if (cand_pool_offer(pool, np, POOL, s, cur) < 0)
            memo->out_of_memory = 1;
    }
    for (int step = 0; step < MAX_CLIMB && !memo->out_of_memory; step++) {
        double best = cur;
        size_t best_m = M;
        int best_g = 0;
        for (size_t m = 0; m < M; m++) {
            if (history_left_out(&b->hist, m))
                continue;
            int max = (int)opt_allreduce_devices(b, m);
            int moves[4] = {counts[m] + 1, counts[m] - 1, 0, max};
            for (int k = 0; k < 4; k++) {
                int g = moves[k];
                if (g < 0 || g > max || g == counts[m] ||
                    (k >= 2 && (g == counts[m] + 1 || g == counts[m] - 1)))
                    continue;
                memcpy(trial, counts, M * sizeof *trial);
                trial[m] = g;
                double v = eval_counts(b, memo, trial, s);
                if (v < best) {
                    best = v;
                    best_m = m;
                    best_g = g;
                }
            }
        }
        if (best_m == M)
            break;
        counts[best_m] = best_g;
        cur = best;
        fill(b, memo, counts, s);
        if (cand_pool_offer(pool, np, POOL, s, cur) < 0)
            memo->out_of_memory = 1;
    }
    free(trial);
}

/* Moves a fiftieth of the batch from the slowest machine's ranks to the earliest finishers:
 * candidates the mean balance would not make, for EI to weigh where the curves are unsure.
 * -1 when out of memory (the candidates added so far stay in out). */
static int load_moves(const ArOpt *b, const Cand *cand, Cand *out, size_t *n, size_t cap)
{
    const Cluster *c = b->c;
    const SgdModel *sm = ar_model_compute(b->model);
    size_t n_mach = c->n_machines ? c->n_machines : 1, n_dev = c->n_devices ? c->n_devices : 1;
    double *ms = malloc(n_mach * sizeof *ms), *fin = malloc(n_dev * sizeof *fin);
    int *ranks = malloc(n_mach * sizeof *ranks);
    size_t *to = malloc(n_dev * sizeof *to), n_to = 0;
    int rc = ms && fin && ranks && to ? 0 : -1;
    if (rc == 0 && isnan(ar_model_mean(b->model, cand->s, ms, NULL)))
        rc = -1;
    if (rc < 0)
        goto done;
    size_t slow = 0;
    for (size_t m = 1; m < c->n_machines; m++)
        if (ms[m] > ms[slow])
            slow = m;
    ar_schedule_ranks(cand->s, ranks);
    for (size_t d = 0; d < c->n_devices; d++) {
        size_t m;
        cluster_device(c, d, &m);
        fin[d] = sgd_model_device_mean(sm, d, cand->s->inputs[d], ranks[m] > 1);
        if (cand->s->inputs[d] > 0)
            to[n_to++] = d;
    }
    for (size_t i = 0; i < n_to && i < LOAD_TARGETS; i++) /* earliest finishers first */
        for (size_t j = i + 1; j < n_to; j++)
            if (fin[to[j]] < fin[to[i]]) {
                size_t t = to[i];
                to[i] = to[j];
                to[j] = t;
            }
    n_to = n_to > LOAD_TARGETS ? LOAD_TARGETS : n_to;
    int step = b->job.batch / 50 > 0 ? b->job.batch / 50 : 1;
    const Machine *mc = &c->machines[slow];
    for (size_t j = 0; j < opt_allreduce_devices(b, slow); j++) {
        size_t from = mc->first_device + j;
        if (cand->s->inputs[from] <= step) /* a rank keeps at least one input */
            continue;
        for (size_t i = 0; i < n_to && *n < cap; i++) {
            if (to[i] == from || cand->s->inputs[to[i]] + step > sgd_model_device_cap(sm, to[i]))
                continue;
            Schedule *s = schedule_copy(cand->s);
            if (!s) {
                rc = -1;
                goto done;
            }
            s->inputs[from] -= step;
            s->inputs[to[i]] += step;
            double mean_s = ar_model_mean(b->model, s, NULL, NULL);
            if (isnan(mean_s)) {
                schedule_free(s);
                rc = -1;
                goto done;
            }
            out[*n].s = s;
            out[(*n)++].mean_s = mean_s;
        }
    }
done:
    free(ms);
    free(fin);
    free(ranks);
    free(to);
    return rc;
}

Schedule *opt_allreduce_search(ArOpt *b, Error *err)
{
    const Cluster *c = b->c;
    size_t M = c->n_machines;
    Cand pool[POOL];
    size_t n_pool = 0;
    Memo *memo = calloc(1, sizeof *memo);
    Schedule *s = schedule_new(c, &b->job);
    int *counts = malloc((M ? M : 1) * sizeof *counts);
    if (!memo || !s || !counts) {
        free(memo);
        schedule_free(s);
        free(counts);
        error_no_memory(err, "bespoke (allreduce): search on %zu machines", M);
        return NULL;
    }
    memo->keyed = M <= 16;
    for (size_t m = 0; m < M; m++)
        memo->keyed &= opt_allreduce_devices(b, m) <= 15;
    /* Starts: the incumbent, everything, each machine type alone, each machine alone, and a
     * few random count vectors. */
    if (b->hist.best) {
        ar_schedule_ranks(b->hist.best, counts);
        climb(b, memo, counts, s, pool, &n_pool);
    }
    for (size_t m = 0; m < M; m++)
        counts[m] = (int)opt_allreduce_devices(b, m);
    climb(b, memo, counts, s, pool, &n_pool);
    for (size_t t = 0; t < c->n_types && c->n_types > 1; t++) {
        for (size_t m = 0; m < M; m++)
            counts[m] = c->machines[m].type == t ? (int)opt_allreduce_devices(b, m) : 0;
        climb(b, memo, counts, s, pool, &n_pool);
    }
    for (size_t one = 0; one < M && M <= SOLO_STARTS_MAX; one++) {
        for (size_t m = 0; m < M; m++)
            counts[m] = m == one ? (int)opt_allreduce_devices(b, m) : 0;
        climb(b, memo, counts, s, pool, &n_pool);
    }
    for (int r = 0; r < RANDOM_STARTS; r++) {
        for (size_t m = 0; m < M; m++)
            counts[m] = (int)gsl_rng_uniform_int(b->rng, opt_allreduce_devices(b, m) + 1);
        climb(b, memo, counts, s, pool, &n_pool);
    }
    int out_of_memory = memo->out_of_memory;
    free(counts);
    free(memo);
    schedule_free(s);
    if (out_of_memory) {
        for (size_t i = 0; i < n_pool; i++)
            schedule_free(pool[i].s);
        error_no_memory(err, "bespoke (allreduce): search on %zu machines", M);
        return NULL;
    }
    if (!n_pool) {
        error_set(err, "bespoke (allreduce): no set of devices can take the batch of %d",
                  b->job.batch);
        return NULL;
    }
    qsort(pool, n_pool, sizeof *pool, cand_cmp_mean);
    size_t cap = n_pool + 8 * LOAD_TARGETS * 16;
    Cand *cands = malloc(cap * sizeof *cands);
    if (!cands) {
        for (size_t i = 0; i < n_pool; i++)
            schedule_free(pool[i].s);
        error_no_memory(err, "bespoke (allreduce): %zu candidates", cap);
        return NULL;
    }
    memcpy(cands, pool, n_pool * sizeof *pool);
    size_t n = n_pool;
    int rc = 0;
    for (size_t i = 0; i < n_pool && i < 8 && rc == 0; i++)
        rc = load_moves(b, &cands[i], cands, &n, cap);
    ArNormals *z = rc == 0 ? ar_normals_new(b->model, EI_SAMPLES,
                                            b->seed + 31 * (uint64_t)b->suggested)
                           : NULL;
    if (!z) {
        for (size_t i = 0; i < n; i++)
            schedule_free(cands[i].s);
        free(cands);
        error_no_memory(err, "bespoke (allreduce): expected improvement");
        return NULL;
    }
    double t[EI_SAMPLES];
    size_t pick = (size_t)-1, pick_mean = (size_t)-1;
    double best_ei = 0;
    for (size_t i = 0; i < n; i++) {
        /* not one already run, nor one on a machine left out (it would fail unreachable) */
        if (history_skips(&b->hist, cands[i].s) || schedule_validate(cands[i].s, NULL) < 0)
            continue;
        if (pick_mean == (size_t)-1 || cands[i].mean_s < cands[pick_mean].mean_s)
            pick_mean = i;
        if (!isfinite(b->hist.best_s) ||
            ar_model_sample(b->model, cands[i].s, z, t, NULL, NULL, NULL, NULL) < 0)
            continue;
        double ei = 0;
        for (size_t k = 0; k < EI_SAMPLES; k++)
            ei += t[k] < b->hist.best_s ? (b->hist.best_s - t[k]) / EI_SAMPLES : 0;
        if (ei > best_ei) {
            best_ei = ei;
            pick = i;
        }
    }
    ar_normals_free(z);
    if (pick == (size_t)-1)
        pick = pick_mean;
    Schedule *chosen = pick == (size_t)-1 ? schedule_copy(cands[0].s) : cands[pick].s;
    if (!chosen)
        error_no_memory(err, "bespoke (allreduce): suggestion");
    for (size_t i = 0; i < n; i++)
        if (cands[i].s != chosen)
            schedule_free(cands[i].s);
    free(cands);
    return chosen;
}
