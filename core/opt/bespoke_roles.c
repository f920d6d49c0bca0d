/* The bespoke optimizer's search on the model's mean (seed bo-sgd-scheduling §3): role sets
 * by local moves from several starts, loads by water-filling per role set, then load moves
 * between devices. It proposes candidates; opt_bespoke.c picks one by expected improvement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/bespoke.h"
#include "core/opt/waterfill.h"

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

/* Whether s gives a role to a machine left out (history_leave_out): the search does not go
 * there, as a trial would fail unreachable. */
static int uses_left_out(const Bespoke *b, const Schedule *s)
{
    for (size_t m = 0; b->hist.left_out && m < b->c->n_machines; m++)
        if (b->hist.left_out[m] && (s->worker[m] || s->ps[m]))
            return 1;
    return 0;
}

static double eval_roles(const Bespoke *b, Memo *memo, Schedule *s)
{
    if (!schedule_count_workers(s) || !schedule_count_ps(s) || uses_left_out(b, s))
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
    /* Out of memory the search goes on with the candidates it has (likewise below). */
    (void)cand_pool_offer(pool, n, POOL, s, mean_s);
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

static void group_move(const TrialHistory *h, Schedule *s, size_t type, int from, int to, int k)
{
    const Cluster *c = s->cluster;
    for (size_t m = 0; m < c->n_machines && k > 0; m++)
        if (c->machines[m].type == type && role_state(s, m) == from && !history_left_out(h, m)) {
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
    if (!t || !best_s || !count) {
        schedule_free(t), schedule_free(best_s), free(count);
        return;
    }
    for (int step = 0; step < MAX_CLIMB; step++) {
        memset(count, 0, c->n_types * 4 * sizeof *count);
        for (size_t m = 0; m < c->n_machines; m++)
            if (!history_left_out(&b->hist, m))
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
                        group_move(&b->hist, t, ty, from, to, ks[ki]);
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
    /* Each start off the machines left out: the climb goes on from what is left. */
    for (size_t m = 0; b->hist.left_out && m < c->n_machines; m++)
        if (b->hist.left_out[m])
            s->worker[m] = s->ps[m] = 0;
    Schedule *t = schedule_copy(s);
    if (!t)
        return;
    double cur = eval_roles(b, memo, s);
    pool_offer(pool, n_pool, s, cur);
    /* Every start is also an EI candidate: structurally different schedules the mean model
     * ranks low may be where it is least sure (a device measured once). */
    if (isfinite(cur) && memo->n_starts < MAX_STARTS &&
        (memo->starts[memo->n_starts].s = schedule_copy(s)))
        memo->starts[memo->n_starts++].mean_s = cur;
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
    if (!ms)
        return;
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
    if (!to_list || !fin) {
        free(to_list), free(fin);
        return;
    }
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
            if (!s)
                continue;
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

int bespoke_candidates(Bespoke *b, Cand **out, size_t *n_out, Error *err)
{
    const Cluster *c = b->c;
    Cand pool[POOL];
    size_t n_pool = 0;
    Memo *memo = calloc(1, sizeof *memo);
    if (memo) {
        memo->n_devices = c->n_devices;
        memo->inputs = malloc(MEMO_SLOTS * c->n_devices * sizeof *memo->inputs);
    }
    Schedule *s = schedule_new(c, &b->job);
    if (!memo || !memo->inputs || !s) {
        if (memo)
            free(memo->inputs);
        free(memo);
        schedule_free(s);
        return error_no_memory(err, "bespoke: search on %zu machines", c->n_machines);
    }
    /* Starts: the incumbent's roles, every machine in both roles, each type alone as workers
     * with every machine a PS or with the workers as PS, each machine alone, and a few
     * random role sets. */
    if (b->hist.best) {
        schedule_copy_into(s, b->hist.best);
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
        return error_set(err, "bespoke: no role set can take the batch of %d", b->job.batch);
    }
    /* Candidates: the pool, the climbs' starts, load moves and forced loading options. */
    size_t cap = 3 * (n_pool + memo->n_starts) + 8 * 4 * LOAD_TARGETS;
    Cand *cands = malloc(cap * sizeof *cands);
    if (!cands) {
        for (size_t i = 0; i < n_pool; i++)
            schedule_free(pool[i].s);
        for (size_t i = 0; i < memo->n_starts; i++)
            schedule_free(memo->starts[i].s);
        free(memo->inputs);
        free(memo);
        return error_no_memory(err, "bespoke: %zu candidates", cap);
    }
    memcpy(cands, pool, n_pool * sizeof *pool);
    size_t n = n_pool;
    qsort(cands, n_pool, sizeof *cands, cand_cmp_mean);
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
            if (!v)
                continue;
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
    *out = cands;
    *n_out = n;
    return 0;
}
