/* Water-filling: bisection on the common deadline of monotone capacity curves. */
#include "core/opt/waterfill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double total_at(WaterfillInverse inv, void *ctx, size_t n, double t, double *x)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double v = inv(ctx, i, t);
        if (x)
            x[i] = v;
        sum += v;
    }
    return sum;
}

double waterfill(WaterfillInverse inv, void *ctx, size_t n, double total, double *x)
{
    /* Bracket by factors of 8 from 1 ms, then bisect to a relative 1e-4: a hundredth of an
     * input on a batch of a hundred, far below the rounding to whole inputs that follows. */
    double hi = 1e-3, lo = 0;
    int steps = 0;
    while (total_at(inv, ctx, n, hi, NULL) < total) {
        lo = hi;
        hi *= 8;
        if (++steps > 40)
            return INFINITY;
    }
    if (!steps) {
        while (hi > 1e-12 && total_at(inv, ctx, n, hi / 8, NULL) >= total)
            hi /= 8;
        lo = hi / 8;
    }
    for (int i = 0; i < 60 && hi - lo > 1e-4 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (total_at(inv, ctx, n, mid, NULL) >= total)
            hi = mid;
        else
            lo = mid;
    }
    total_at(inv, ctx, n, hi, x);
    return hi;
}

/* One slot per worker machine; its capacity is the best loading option of that machine. */
typedef struct {
    const SgdModel *m;
    const Cluster *c;
    size_t *machine; /* slot -> machine */
    double *agg;     /* slot -> mean aggregation when several devices are loaded */
    double *dev_x;   /* flat devices: loads of the best option at the last deadline asked */
    WaterfillMode mode;
} Ctx;

/* Capacity of one worker machine at deadline t: the best of one device alone, all its GPUs
 * together, or all its devices together (these pay the aggregation and interference). Each
 * device curve is inverted once per budget; the chosen loads go to dev_x. */
static double machine_inverse(void *ctx, size_t slot, double t)
{
    Ctx *k = ctx;
    size_t mi = k->machine[slot];
    const Machine *mc = &k->c->machines[mi];
    const MachineType *mt = &k->c->types[mc->type];
    size_t n = mt->n_devices, first = mc->first_device;
    double alone[64] = {0}, shared[64] = {0};
    if (n > 64)
        n = 64;
    int gpus = 0;
    size_t best_one = 0;
    for (size_t j = 0; j < n; j++) {
        gpus += mt->devices[j].kind == DEVICE_GPU;
        alone[j] = k->mode == WATERFILL_SHARED && n > 1
                       ? 0
                       : sgd_model_device_inverse(k->m, first + j, 0, t);
        if (alone[j] > alone[best_one])
            best_one = j;
    }
    double best = k->mode == WATERFILL_SHARED && n > 1 ? -1 : alone[best_one];
    int choice = 0; /* 0 one device, 1 all GPUs, 2 all devices */
    if (n > 1 && k->mode != WATERFILL_ALONE) {
        double budget = t - sgd_model_agg_mean(k->m, mi), all = 0, gsum = 0;
        for (size_t j = 0; j < n; j++) {
            shared[j] = budget > 0 ? sgd_model_device_inverse(k->m, first + j, 1, budget) : 0;
            all += shared[j];
            if (mt->devices[j].kind == DEVICE_GPU)
                gsum += shared[j];
        }
        if (gpus >= 2 && gsum > best && k->mode != WATERFILL_SHARED) {
            best = gsum;
            choice = 1;
        }
        if (all > best) {
            best = all;
            choice = 2;
        }
    }
    for (size_t j = 0; j < n; j++)
        k->dev_x[first + j] = choice == 0   ? (j == best_one ? alone[j] : 0)
                              : choice == 1 ? (mt->devices[j].kind == DEVICE_GPU ? shared[j] : 0)
                                            : shared[j];
    return best > 0 ? best : 0;
}

double waterfill_schedule(const SgdModel *m, Schedule *s)
{
    return waterfill_schedule_mode(m, s, WATERFILL_BEST);
}

double waterfill_schedule_mode(const SgdModel *m, Schedule *s, WaterfillMode mode)
{
    const Cluster *c = s->cluster;
    Ctx k = {.m = m, .c = c, .mode = mode};
    k.machine = malloc(c->n_machines * sizeof *k.machine);
    k.dev_x = calloc(c->n_devices, sizeof *k.dev_x);
    double *x = malloc((c->n_machines ? c->n_machines : 1) * sizeof *x);
    if (!k.machine || !k.dev_x || !x) { /* out of memory: no loading found */
        free(k.machine), free(k.dev_x), free(x);
        return INFINITY;
    }
    size_t n = 0;
    for (size_t mi = 0; mi < c->n_machines; mi++)
        if (s->worker[mi])
            k.machine[n++] = mi;
    memset(s->inputs, 0, c->n_devices * sizeof *s->inputs);
    double t = n ? waterfill(machine_inverse, &k, n, s->job.batch, x) : INFINITY;
    if (isfinite(t)) {
        /* Loads of the last deadline evaluated are in dev_x; waterfill's final call was at t. */
        if (schedule_split_integer(k.dev_x, c->n_devices, s->job.batch, s->inputs) < 0)
            t = INFINITY;
        /* Rounding may push a device one input past its cap: hand the excess on. */
        for (size_t d = 0; d < c->n_devices && isfinite(t); d++) {
            int cap = sgd_model_device_cap(m, d);
            while (s->inputs[d] > cap) {
                size_t to = c->n_devices;
                for (size_t e = 0; e < c->n_devices; e++)
                    if (e != d && k.dev_x[e] > 0 && s->inputs[e] < sgd_model_device_cap(m, e))
                        to = e;
                if (to == c->n_devices)
                    break;
                s->inputs[d]--;
                s->inputs[to]++;
            }
        }
    }
    free(x);
    free(k.machine);
    free(k.dev_x);
    return t;
}
