/* Water-filling: bisection on the common deadline of monotone capacity curves. */
#include "core/waterfill.h"

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
    double hi = 1e-6;
    int steps = 0;
    while (total_at(inv, ctx, n, hi, NULL) < total) {
        hi *= 2;
        if (++steps > 80)
            return INFINITY;
    }
    double lo = steps ? hi / 2 : 0;
    for (int i = 0; i < 60 && hi - lo > 1e-12 * hi; i++) {
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
} Ctx;

static double option_load(const Ctx *k, size_t mi, int which, double t, int write)
{
    const Machine *mc = &k->c->machines[mi];
    const MachineType *mt = &k->c->types[mc->type];
    /* which: 0..n-1 one device alone; n = all GPUs; n+1 = all devices */
    size_t n = mt->n_devices;
    int gpus = 0;
    for (size_t j = 0; j < n; j++)
        gpus += mt->devices[j].kind == DEVICE_GPU;
    double sum = 0;
    for (size_t j = 0; j < n; j++) {
        int in = (size_t)which < n   ? (size_t)which == j
                 : (size_t)which == n ? mt->devices[j].kind == DEVICE_GPU
                                       : 1;
        int count = (size_t)which < n ? 1 : (size_t)which == n ? gpus : (int)n;
        double v = 0;
        if (in) {
            int shared = count > 1;
            double budget = t - (shared ? sgd_model_agg_mean(k->m, mi) : 0);
            v = budget > 0 ? sgd_model_device_inverse(k->m, mc->first_device + j, shared, budget)
                           : 0;
        }
        if (write)
            k->dev_x[mc->first_device + j] = v;
        sum += v;
    }
    return sum;
}

static double machine_inverse(void *ctx, size_t slot, double t)
{
    Ctx *k = ctx;
    size_t mi = k->machine[slot], n = k->c->types[k->c->machines[mi].type].n_devices;
    int gpus = 0;
    for (size_t j = 0; j < n; j++)
        gpus += k->c->types[k->c->machines[mi].type].devices[j].kind == DEVICE_GPU;
    int best = 0;
    double best_v = -1;
    for (int w = 0; w < (int)n + 2; w++) {
        if (w == (int)n && gpus < 2)
            continue; /* "all GPUs" differs from a single device only with two or more */
        if (w == (int)n + 1 && n < 2)
            continue;
        double v = option_load(k, mi, w, t, 0);
        if (v > best_v) {
            best_v = v;
            best = w;
        }
    }
    return option_load(k, mi, best, t, 1);
}

double waterfill_schedule(const SgdModel *m, Schedule *s)
{
    const Cluster *c = s->cluster;
    Ctx k = {.m = m, .c = c};
    k.machine = malloc(c->n_machines * sizeof *k.machine);
    k.dev_x = calloc(c->n_devices, sizeof *k.dev_x);
    size_t n = 0;
    for (size_t mi = 0; mi < c->n_machines; mi++)
        if (s->worker[mi])
            k.machine[n++] = mi;
    memset(s->inputs, 0, c->n_devices * sizeof *s->inputs);
    double *x = malloc((n ? n : 1) * sizeof *x);
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
