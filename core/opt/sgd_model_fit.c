/* Fitting the structured SGD model: learned memory caps, then every part (device classes,
 * aggregation per machine type, communication) on the part measurements of every trial. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/sgd_model.h"
#include "core/opt/sgd_model_parts.h"

typedef struct {
    double *phi, *X, *y;
    size_t n, cap, p, dim;
    int out_of_memory; /* a point was dropped: fit_part refuses the data */
} Data;

static void data_push(Data *d, const double *phi, const double *x, double y)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        double *grown_phi = realloc(d->phi, cap * d->p * sizeof *grown_phi);
        if (grown_phi)
            d->phi = grown_phi;
        double *grown_X = realloc(d->X, cap * (d->dim ? d->dim : 1) * sizeof *grown_X);
        if (grown_X)
            d->X = grown_X;
        double *grown_y = realloc(d->y, cap * sizeof *grown_y);
        if (grown_y)
            d->y = grown_y;
        if (!grown_phi || !grown_X || !grown_y) {
            d->out_of_memory = 1;
            return;
        }
        d->cap = cap;
    }
    memcpy(&d->phi[d->n * d->p], phi, d->p * sizeof *phi);
    if (d->dim)
        memcpy(&d->X[d->n * d->dim], x, d->dim * sizeof *x);
    d->y[d->n++] = y;
}

static void data_free(Data *d)
{
    free(d->phi);
    free(d->X);
    free(d->y);
}

/* BLR with a noise floor, then a GP on the residuals of the most recent points. */
static int fit_part(Blr *blr, Gp *gp, int *use_gp, size_t *fit_n, const Data *d, const double *m0,
                    const double *sd0, double noise_floor, uint64_t seed, Error *err)
{
    if (d->out_of_memory)
        return error_no_memory(err, "%zu points", d->n);
    if (blr_fit(blr, d->phi, d->y, d->n, d->p, m0, sd0, noise_floor, err) < 0)
        return -1;
    double ss = 0;
    for (size_t i = 0; i < d->n; i++) {
        double r = d->y[i] - blr_predict_mean(blr, &d->phi[i * d->p]);
        ss += r * r;
    }
    double rms = d->n > d->p ? sqrt(ss / (double)(d->n - d->p)) : 0;
    if (rms > noise_floor && blr_fit(blr, d->phi, d->y, d->n, d->p, m0, sd0, rms, err) < 0)
        return -1;
    *use_gp = 0;
    if (!gp || d->n < (size_t)GP_MIN_POINTS)
        return 0;
    size_t from = d->n > GP_MAX_POINTS ? d->n - GP_MAX_POINTS : 0, n = d->n - from;
    double *r = malloc(n * sizeof *r);
    if (!r)
        return error_no_memory(err, "%zu residuals", n);
    for (size_t i = 0; i < n; i++)
        r[i] = d->y[from + i] - blr_predict_mean(blr, &d->phi[(from + i) * d->p]);
    int rc = gp_set_data(gp, &d->X[from * d->dim], r, n, err);
    /* Hyperparameters are refitted when the data grew by a quarter since the last fit;
     * otherwise the new points only refactor the kernel matrix. */
    if (rc == 0 && (*fit_n < (size_t)GP_MIN_POINTS || d->n * 4 >= *fit_n * 5)) {
        rc = gp_fit(gp, 1, seed, err);
        *fit_n = d->n;
    }
    free(r);
    if (rc < 0)
        return -1;
    *use_gp = 1;
    return 0;
}

static void learn_caps(SgdModel *m)
{
    const Cluster *c = m->c;
    for (size_t k = 0; k < m->n_classes; k++)
        m->cls[k].ok_max = 0;
    for (size_t i = 0; i < m->n_obs; i++)
        if (observation_measured(m->obs[i]))
            for (size_t d = 0; d < c->n_devices; d++) {
                DevClass *k = &m->cls[m->class_of[d]];
                if (m->obs[i]->schedule->inputs[d] > k->ok_max)
                    k->ok_max = m->obs[i]->schedule->inputs[d];
            }
    for (size_t i = 0; i < m->n_obs; i++) {
        const Observation *o = m->obs[i];
        if (o->status != TRIAL_FAILED || !strstr(o->reason, "memory"))
            continue;
        /* The failure does not say which device: every GPU class loaded past what has run
         * is capped halfway between what ran and what failed. */
        for (size_t d = 0; d < c->n_devices; d++) {
            const DeviceSpec *ds = cluster_device(c, d, NULL);
            DevClass *k = &m->cls[m->class_of[d]];
            int x = o->schedule->inputs[d];
            if (ds->kind != DEVICE_GPU || x <= k->ok_max)
                continue;
            int cap = k->ok_max + (x - k->ok_max) / 2;
            if (cap < 1)
                cap = 1;
            if (!k->cap || cap < k->cap)
                k->cap = cap;
        }
    }
}

static int fit_devices(SgdModel *m, uint64_t seed, Error *err)
{
    const Cluster *c = m->c;
    double slope_sum = 0;
    int slope_n = 0;
    Data *data = calloc(m->n_classes, sizeof *data);
    if (!data)
        return error_no_memory(err, "%zu device classes", m->n_classes);
    for (size_t k = 0; k < m->n_classes; k++) {
        data[k].p = DEV_P;
        data[k].dim = 2;
    }
    for (size_t i = 0; i < m->n_obs; i++) {
        const Observation *o = m->obs[i];
        if (!observation_measured(o))
            continue;
        for (size_t mi = 0; mi < c->n_machines; mi++) {
            const Machine *mc = &c->machines[mi];
            int shared = sgd_model_machine_loaded(c, o->schedule, mi) > 1;
            for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
                size_t d = mc->first_device + j;
                int x = o->schedule->inputs[d];
                double t = o->device_time_s[d];
                if (x <= 0 || !(t >= 0) || !isfinite(t))
                    continue;
                double phi[DEV_P], X[2] = {x, shared};
                sgd_model_device_phi(x, shared, phi);
                data_push(&data[m->class_of[d]], phi, X, t);
                slope_sum += t / x;
                slope_n++;
            }
        }
    }
    /* A class never measured borrows the average rate of the others, with a wide prior. */
    m->fallback_slope = slope_n ? slope_sum / slope_n : 1e-2;
    int rc = 0;
    for (size_t k = 0; k < m->n_classes && rc == 0; k++) {
        DevClass *cl = &m->cls[k];
        Data *d = &data[k];
        double ys = 0, xs = 0;
        for (size_t i = 0; i < d->n; i++) {
            ys += d->y[i];
            xs += d->phi[i * DEV_P + 1];
        }
        double slope = d->n ? ys / xs : m->fallback_slope;
        ys = d->n ? ys / d->n : slope * m->job.batch / 4.0;
        xs = d->n ? xs / d->n : m->job.batch / 4.0;
        double spread = d->n ? 1.0 : 3.0;
        double m0[DEV_P] = {0, slope, 0};
        double sd0[DEV_P] = {0.3 * ys * spread, 3 * slope * spread, 0.3 * slope * spread};
        rc = fit_part(&cl->blr, cl->gp, &cl->use_gp, &cl->gp_fit_n, d, m0, sd0, 0.02 * ys + 1e-9,
                      seed + k, err);
        cl->xmax = cl->cap ? cl->cap : m->job.batch;
        for (int sh = 0; sh < 2 && rc == 0; sh++) {
            double prev = 0;
            for (int g = 0; g < CURVE_POINTS; g++) {
                double x = cl->xmax * g / (CURVE_POINTS - 1), phi[DEV_P], X[2] = {x, sh};
                sgd_model_device_phi(x, sh, phi);
                double t = sgd_model_part_mean(&cl->blr, cl->gp, cl->use_gp, phi, X);
                t = t > prev ? t : prev; /* more inputs never finish sooner */
                cl->curve[sh][g] = prev = t;
            }
        }
    }
    for (size_t k = 0; k < m->n_classes; k++)
        data_free(&data[k]);
    free(data);
    return rc;
}

static int fit_agg(SgdModel *m, uint64_t seed, Error *err)
{
    const Cluster *c = m->c;
    double typical = 0;
    int typical_n = 0;
    for (size_t i = 0; i < m->n_obs; i++)
        if (observation_measured(m->obs[i])) {
            typical += m->obs[i]->time_s;
            typical_n++;
        }
    typical = typical_n ? typical / typical_n : 1.0;
    for (size_t t = 0; t < c->n_types; t++) {
        AggPart *a = &m->agg[t];
        if (a->n_dev < 2)
            continue;
        Data d = {.p = 1, .dim = a->gp ? a->n_dev : 0};
        double X[GP_MAX_DIM] = {0}, one = 1, ysum = 0;
        for (size_t i = 0; i < m->n_obs; i++) {
            const Observation *o = m->obs[i];
            if (!observation_measured(o))
                continue;
            for (size_t mi = 0; mi < c->n_machines; mi++) {
                const Machine *mc = &c->machines[mi];
                if (mc->type != t || !o->schedule->worker[mi] ||
                    sgd_model_machine_loaded(c, o->schedule, mi) < 2 || !(o->machine_time_s[mi] >= 0))
                    continue;
                double worst = 0;
                int known = 1;
                for (size_t j = 0; j < a->n_dev; j++) {
                    size_t fd = mc->first_device + j;
                    if (j < GP_MAX_DIM)
                        X[j] = o->schedule->inputs[fd];
                    if (o->schedule->inputs[fd] <= 0)
                        continue;
                    known &= o->device_time_s[fd] >= 0;
                    worst = fmax(worst, o->device_time_s[fd]);
                }
                if (!known)
                    continue;
                double y = o->machine_time_s[mi] - worst;
                data_push(&d, &one, X, y);
                ysum += y;
            }
        }
        double m0 = 0, sd0 = 0.1 * typical;
        double floor = 0.05 * fabs(d.n ? ysum / d.n : 0) + 1e-4 * typical;
        int rc = fit_part(&a->blr, a->gp, &a->use_gp, &a->gp_fit_n, &d, &m0, &sd0, floor,
                          seed + 100 + t, err);
        data_free(&d);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int fit_comm(SgdModel *m, uint64_t seed, Error *err)
{
    const Cluster *c = m->c;
    size_t p = m->comm_p;
    double m0[BLR_MAX_P], sd0[BLR_MAX_P], bw_mean = 0;
    for (size_t t = 0; t < c->n_types; t++) {
        double bw = c->types[t].bandwidth_gbps > 0 ? c->types[t].bandwidth_gbps : 1.0;
        m0[t] = 1.0 / (125.0 * bw); /* Gbps -> seconds per MB */
        sd0[t] = 0.5 * m0[t];
        bw_mean += bw / c->n_types;
    }
    double ref = m->job.model_mb / (125.0 * bw_mean) + 1e-3;
    m0[c->n_types] = 0;
    sd0[c->n_types] = 0.3 * ref;
    m0[c->n_types + 1] = 0;
    sd0[c->n_types + 1] = 0.03 * ref;
    Data d = {.p = p, .dim = 2};
    double theta[BLR_MAX_P];
    memcpy(theta, m0, c->n_types * sizeof *theta);
    double phi[BLR_MAX_P], X[2];
    int rc = 0;
    /* The max picks the bottleneck machine: alternate assignment and fit (a few rounds). */
    for (int round = 0; round < 4 && rc == 0; round++) {
        d.n = 0;
        double ysum = 0;
        for (size_t i = 0; i < m->n_obs; i++) {
            const Observation *o = m->obs[i];
            if (!observation_measured(o))
                continue;
            double y = o->comm_s;
            if (!(y >= 0)) {
                double worst = 0;
                for (size_t mi = 0; mi < c->n_machines; mi++)
                    if (o->schedule->worker[mi])
                        worst = fmax(worst, o->machine_time_s[mi]);
                y = o->time_s - worst;
                if (!(y >= 0))
                    continue;
            }
            sgd_model_comm_phi(m, o->schedule->worker, o->schedule->ps, theta, phi, X);
            data_push(&d, phi, X, y);
            ysum += y;
        }
        double floor = 0.03 * (d.n ? ysum / d.n : ref) + 1e-6;
        rc = fit_part(&m->comm, round == 3 ? m->comm_gp : NULL, &m->comm_use_gp, &m->comm_gp_fit_n,
                      &d, m0, sd0, floor, seed + 200, err);
        for (size_t t = 0; t < c->n_types; t++)
            theta[t] = fmax(m->comm.mean[t], 1e-3 * m0[t]);
    }
    data_free(&d);
    return rc;
}

int sgd_model_fit(SgdModel *m, uint64_t seed, Error *err)
{
    learn_caps(m);
    if (fit_devices(m, seed, err) < 0 || fit_agg(m, seed, err) < 0 || fit_comm(m, seed, err) < 0)
        return error_prefix(err, "model fit");
    return 0;
}
