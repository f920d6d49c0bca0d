/* The structured model of distributed SGD: device, aggregation and communication parts,
 * each a Bayesian linear model with a GP on its residual (BOAT's semi-parametric parts),
 * fitted on every part measurement of every trial; forward sampling combines them. */
#include "core/opt/sgd_model.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/blr.h"
#include "core/opt/gp.h"

enum {
    CURVE_POINTS = 97, /* grid of the mean time curves used by water-filling */
    DEV_P = 3,         /* device features: 1, x, shared * x */
    GP_MAX_POINTS = 60 /* the most recent points a residual GP keeps (bounds its cost) */
};
static const int GP_MIN_POINTS = 6;

typedef struct {
    char key[96];
    int cap;    /* declared or learned memory limit; 0 = none */
    int ok_max; /* most inputs that ran */
    Blr blr;
    Gp *gp;
    int use_gp;
    size_t gp_fit_n; /* points at the last hyperparameter fit */
    double xmax;
    double curve[2][CURVE_POINTS]; /* mean time at x = xmax * i / (CURVE_POINTS - 1) */
} DevClass;

typedef struct {
    size_t n_dev; /* devices of this machine type */
    Blr blr;      /* p = 1: the mean aggregation time */
    Gp *gp;       /* on the inputs of each device */
    int use_gp;
    size_t gp_fit_n;
} AggPart;

struct SgdModel {
    const Cluster *c;
    JobSpec job;
    Observation **obs;
    size_t n_obs, cap_obs;
    size_t n_classes;
    DevClass *cls;
    size_t *class_of; /* flat device -> class */
    AggPart *agg;     /* per machine type */
    size_t comm_p;    /* n_types + 2: seconds per MB per type, intercept, per-peer latency */
    Blr comm;
    Gp *comm_gp;
    int comm_use_gp;
    size_t comm_gp_fit_n;
    double fallback_slope; /* s per input for a class never measured */
};

struct SgdNormals {
    size_t ns;
    double *device, *device_beta, *agg, *agg_beta, *comm_beta, *comm;
};

static int machine_loaded(const Cluster *c, const Schedule *s, size_t m)
{
    const Machine *mc = &c->machines[m];
    int n = 0;
    for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
        n += s->inputs[mc->first_device + d] > 0;
    return n;
}

double sgd_model_traffic_mb(const Cluster *c, double model_mb, const unsigned char *worker,
                            const unsigned char *ps, size_t i)
{
    int W = 0, P = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        W += worker[m] != 0;
        P += ps[m] != 0;
    }
    double d = 0;
    if (worker[i] && P)
        d += 2 * model_mb * (1.0 - (ps[i] ? 1.0 / P : 0.0));
    if (ps[i] && P)
        d += 2 * (model_mb / P) * (W - (worker[i] ? 1 : 0));
    return d;
}

/* Traffic of every machine at once: O(machines), not O(machines^2). */
static void traffic_all(const Cluster *c, double model_mb, const unsigned char *worker,
                        const unsigned char *ps, double *out)
{
    int W = 0, P = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        W += worker[m] != 0;
        P += ps[m] != 0;
    }
    for (size_t i = 0; i < c->n_machines; i++) {
        double d = 0;
        if (worker[i] && P)
            d += 2 * model_mb * (1.0 - (ps[i] ? 1.0 / P : 0.0));
        if (ps[i] && P)
            d += 2 * (model_mb / P) * (W - (worker[i] ? 1 : 0));
        out[i] = d;
    }
}

SgdModel *sgd_model_new(const Cluster *c, const JobSpec *job, Error *err)
{
    if (!c->n_machines || !c->n_devices) {
        error_set(err, "model: the cluster '%s' has no machine or no device", c->name);
        return NULL;
    }
    if (c->n_types + 2 > BLR_MAX_P) {
        error_set(err, "model: %zu machine types, at most %d supported", c->n_types, BLR_MAX_P - 2);
        return NULL;
    }
    SgdModel *m = calloc(1, sizeof *m);
    m->c = c;
    job_copy(&m->job, job);
    m->class_of = calloc(c->n_devices, sizeof *m->class_of);
    m->cls = calloc(c->n_devices, sizeof *m->cls);
    for (size_t d = 0; d < c->n_devices; d++) {
        char key[96];
        cluster_device_class(c, d, key, sizeof key);
        size_t k = 0;
        while (k < m->n_classes && strcmp(m->cls[k].key, key) != 0)
            k++;
        if (k == m->n_classes) {
            snprintf(m->cls[k].key, sizeof m->cls[k].key, "%s", key);
            m->cls[k].gp = gp_new(GP_KERNEL_MATERN52, 2, NULL);
            m->n_classes++;
        }
        m->class_of[d] = k;
        const DeviceSpec *ds = cluster_device(c, d, NULL);
        if (ds->max_inputs && (!m->cls[k].cap || ds->max_inputs < m->cls[k].cap))
            m->cls[k].cap = ds->max_inputs;
    }
    m->agg = calloc(c->n_types, sizeof *m->agg);
    for (size_t t = 0; t < c->n_types; t++) {
        m->agg[t].n_dev = c->types[t].n_devices;
        if (m->agg[t].n_dev > 1 && m->agg[t].n_dev <= GP_MAX_DIM)
            m->agg[t].gp = gp_new(GP_KERNEL_MATERN52, m->agg[t].n_dev, NULL);
    }
    m->comm_p = c->n_types + 2;
    m->comm_gp = gp_new(GP_KERNEL_MATERN52, 2, NULL);
    if (sgd_model_fit(m, 0, err) < 0) {
        sgd_model_free(m);
        return NULL;
    }
    return m;
}

void sgd_model_free(SgdModel *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_obs; i++)
        observation_free(m->obs[i]);
    free(m->obs);
    for (size_t k = 0; k < m->n_classes; k++)
        gp_free(m->cls[k].gp);
    for (size_t t = 0; t < m->c->n_types; t++)
        gp_free(m->agg[t].gp);
    free(m->agg);
    free(m->cls);
    free(m->class_of);
    gp_free(m->comm_gp);
    job_clear(&m->job);
    free(m);
}

size_t sgd_model_trials(const SgdModel *m)
{
    return m->n_obs;
}

void sgd_model_observe(SgdModel *m, const Observation *o)
{
    if (m->n_obs == m->cap_obs) {
        m->cap_obs = m->cap_obs ? 2 * m->cap_obs : 16;
        m->obs = realloc(m->obs, m->cap_obs * sizeof *m->obs);
    }
    m->obs[m->n_obs++] = observation_copy(o);
}

/* ---- fitting ---- */

typedef struct {
    double *phi, *X, *y;
    size_t n, cap, p, dim;
} Data;

static void data_push(Data *d, const double *phi, const double *x, double y)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 64;
        d->phi = realloc(d->phi, d->cap * d->p * sizeof *d->phi);
        d->X = realloc(d->X, d->cap * (d->dim ? d->dim : 1) * sizeof *d->X);
        d->y = realloc(d->y, d->cap * sizeof *d->y);
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

static double part_mean(const Blr *blr, const Gp *gp, int use_gp, const double *phi,
                        const double *x)
{
    double v = blr_predict_mean(blr, phi);
    if (use_gp) {
        double gm, gv;
        gp_predict(gp, x, &gm, &gv);
        v += gm;
    }
    return v;
}

static void device_phi(double x, int shared, double *phi)
{
    phi[0] = 1;
    phi[1] = x;
    phi[2] = shared ? x : 0;
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
            int shared = machine_loaded(c, o->schedule, mi) > 1;
            for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
                size_t d = mc->first_device + j;
                int x = o->schedule->inputs[d];
                double t = o->device_time_s[d];
                if (x <= 0 || !(t >= 0) || !isfinite(t))
                    continue;
                double phi[DEV_P], X[2] = {x, shared};
                device_phi(x, shared, phi);
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
                device_phi(x, sh, phi);
                double t = part_mean(&cl->blr, cl->gp, cl->use_gp, phi, X);
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
                    machine_loaded(c, o->schedule, mi) < 2 || !(o->machine_time_s[mi] >= 0))
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

/* Communication features of a role assignment under per-type seconds per MB `theta`: the
 * traffic of the machine that is slowest under theta, in its type's slot; 1; W + P. */
static void comm_phi(const SgdModel *m, const unsigned char *worker, const unsigned char *ps,
                     const double *theta, double *phi, double *X)
{
    const Cluster *c = m->c;
    memset(phi, 0, m->comm_p * sizeof *phi);
    double worst = -1, stack[1024];
    double *tr = c->n_machines <= 1024 ? stack : malloc(c->n_machines * sizeof *tr);
    traffic_all(c, m->job.model_mb, worker, ps, tr);
    size_t at = 0;
    int W = 0, P = 0;
    for (size_t i = 0; i < c->n_machines; i++) {
        W += worker[i] != 0;
        P += ps[i] != 0;
        double t = tr[i] * theta[c->machines[i].type];
        if (t > worst) {
            worst = t;
            at = i;
        }
    }
    phi[c->machines[at].type] = tr[at];
    if (tr != stack)
        free(tr);
    phi[c->n_types] = 1;
    phi[c->n_types + 1] = W + P;
    X[0] = W;
    X[1] = P;
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
            comm_phi(m, o->schedule->worker, o->schedule->ps, theta, phi, X);
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

/* ---- mean predictions ---- */

int sgd_model_device_cap(const SgdModel *m, size_t d)
{
    const DevClass *k = &m->cls[m->class_of[d]];
    return k->cap ? k->cap : m->job.batch;
}

double sgd_model_device_mean(const SgdModel *m, size_t d, double x, int shared)
{
    if (x <= 0)
        return 0;
    const DevClass *k = &m->cls[m->class_of[d]];
    const double *cv = k->curve[shared ? 1 : 0];
    double pos = x / k->xmax * (CURVE_POINTS - 1);
    if (pos >= CURVE_POINTS - 1) { /* past the grid: extend the last segment */
        double slope = (cv[CURVE_POINTS - 1] - cv[CURVE_POINTS - 2]) * (CURVE_POINTS - 1) / k->xmax;
        return cv[CURVE_POINTS - 1] + slope * (x - k->xmax);
    }
    int i = (int)pos;
    double f = pos - i;
    return cv[i] * (1 - f) + cv[i + 1] * f;
}

double sgd_model_device_inverse(const SgdModel *m, size_t d, int shared, double t_s)
{
    const DevClass *k = &m->cls[m->class_of[d]];
    const double *cv = k->curve[shared ? 1 : 0];
    double cap = k->cap ? k->cap : m->job.batch;
    if (t_s < cv[0] + 1e-15 * fabs(cv[0]))
        return 0;
    if (t_s >= cv[CURVE_POINTS - 1])
        return cap;
    int lo = 0, hi = CURVE_POINTS - 1; /* cv[lo] <= t < cv[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (cv[mid] <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    double span = cv[hi] - cv[lo];
    double f = span > 0 ? (t_s - cv[lo]) / span : 0;
    double x = k->xmax * (lo + f) / (CURVE_POINTS - 1);
    return x < cap ? x : cap;
}

static double agg_mean_at(const SgdModel *m, size_t machine, const int *inputs)
{
    const Machine *mc = &m->c->machines[machine];
    const AggPart *a = &m->agg[mc->type];
    if (a->n_dev < 2)
        return 0;
    double one = 1, X[GP_MAX_DIM] = {0};
    for (size_t j = 0; j < a->n_dev && j < GP_MAX_DIM; j++)
        X[j] = inputs ? inputs[mc->first_device + j] : 0;
    double v =
        inputs ? part_mean(&a->blr, a->gp, a->use_gp, &one, X) : blr_predict_mean(&a->blr, &one);
    return v > 0 ? v : 0;
}

double sgd_model_agg_mean(const SgdModel *m, size_t machine)
{
    return agg_mean_at(m, machine, NULL);
}

double sgd_model_comm_mean(const SgdModel *m, const unsigned char *worker, const unsigned char *ps)
{
    double phi[BLR_MAX_P], X[2], theta[BLR_MAX_P];
    for (size_t t = 0; t < m->c->n_types; t++)
        theta[t] = m->comm.mean[t];
    comm_phi(m, worker, ps, theta, phi, X);
    double v = part_mean(&m->comm, m->comm_gp, m->comm_use_gp, phi, X);
    return v > 0 ? v : 0;
}

double sgd_model_mean(const SgdModel *m, const Schedule *s, double *machine_s, double *comm_s)
{
    const Cluster *c = m->c;
    double worst = 0;
    for (size_t mi = 0; mi < c->n_machines; mi++) {
        const Machine *mc = &c->machines[mi];
        int shared = machine_loaded(c, s, mi) > 1;
        double t = 0;
        if (s->worker[mi]) {
            for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
                size_t d = mc->first_device + j;
                t = fmax(t, sgd_model_device_mean(m, d, s->inputs[d], shared));
            }
            if (shared)
                t += agg_mean_at(m, mi, s->inputs);
        }
        if (machine_s)
            machine_s[mi] = t;
        worst = fmax(worst, t);
    }
    double comm = sgd_model_comm_mean(m, s->worker, s->ps);
    if (comm_s)
        *comm_s = comm;
    return worst + comm;
}

/* ---- forward sampling ---- */

SgdNormals *sgd_normals_new(const SgdModel *m, size_t ns, uint64_t seed)
{
    const Cluster *c = m->c;
    SgdNormals *z = calloc(1, sizeof *z);
    z->ns = ns;
    size_t sizes[6] = {ns * c->n_devices,  ns * m->n_classes * DEV_P,
                       ns * c->n_machines, ns * c->n_types,
                       ns * m->comm_p,     ns};
    double **arrays[6] = {&z->device,   &z->device_beta, &z->agg,
                          &z->agg_beta, &z->comm_beta,   &z->comm};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)(seed * 6364136223846793005ull + 1442695040888963407ull));
    for (int a = 0; a < 6; a++) {
        *arrays[a] = malloc((sizes[a] ? sizes[a] : 1) * sizeof(double));
        for (size_t i = 0; i < sizes[a]; i++)
            (*arrays[a])[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    }
    gsl_rng_free(rng);
    return z;
}

void sgd_normals_free(SgdNormals *z)
{
    if (!z)
        return;
    free(z->device);
    free(z->device_beta);
    free(z->agg);
    free(z->agg_beta);
    free(z->comm_beta);
    free(z->comm);
    free(z);
}

size_t sgd_normals_count(const SgdNormals *z)
{
    return z->ns;
}

/* Device times of every loaded device, ns x n_devices (0 where unloaded). */
static int sample_devices(const SgdModel *m, const Schedule *s, const SgdNormals *z, double *out,
                          Error *err)
{
    const Cluster *c = m->c;
    size_t ns = z->ns, D = c->n_devices;
    memset(out, 0, ns * D * sizeof *out);
    size_t *idx = malloc(D * sizeof *idx);
    double *X = malloc(D * 2 * sizeof *X), *zz = malloc(ns * D * sizeof *zz);
    double *gs = malloc(ns * D * sizeof *gs);
    int rc = 0;
    for (size_t k = 0; k < m->n_classes && rc == 0; k++) {
        const DevClass *cl = &m->cls[k];
        size_t n = 0;
        for (size_t mi = 0; mi < c->n_machines; mi++) {
            const Machine *mc = &c->machines[mi];
            if (!s->worker[mi])
                continue;
            int shared = machine_loaded(c, s, mi) > 1;
            for (size_t j = 0; j < c->types[mc->type].n_devices; j++) {
                size_t d = mc->first_device + j;
                if (m->class_of[d] != k || s->inputs[d] <= 0)
                    continue;
                idx[n] = d;
                X[2 * n] = s->inputs[d];
                X[2 * n + 1] = shared;
                n++;
            }
        }
        if (!n)
            continue;
        if (cl->use_gp) {
            for (size_t si = 0; si < ns; si++)
                for (size_t i = 0; i < n; i++)
                    zz[si * n + i] = z->device[si * D + idx[i]];
            rc = gp_sample(cl->gp, X, n, zz, ns, gs, err);
        } else {
            memset(gs, 0, ns * n * sizeof *gs);
        }
        for (size_t si = 0; si < ns && rc == 0; si++) {
            double beta[DEV_P], phi[DEV_P];
            blr_sample(&cl->blr, &z->device_beta[(si * m->n_classes + k) * DEV_P], beta);
            for (size_t i = 0; i < n; i++) {
                device_phi(X[2 * i], (int)X[2 * i + 1], phi);
                double t = phi[0] * beta[0] + phi[1] * beta[1] + phi[2] * beta[2] + gs[si * n + i];
                out[si * D + idx[i]] = t > 0 ? t : 0;
            }
        }
    }
    free(idx);
    free(X);
    free(zz);
    free(gs);
    return rc;
}

int sgd_model_sample(const SgdModel *m, const Schedule *s, const SgdNormals *z, double *iter_s,
                     double *machine_s, double *device_s, double *comm_s, Error *err)
{
    const Cluster *c = m->c;
    size_t ns = z->ns, D = c->n_devices, M = c->n_machines;
    double *dev = device_s ? device_s : malloc(ns * D * sizeof *dev);
    if (sample_devices(m, s, z, dev, err) < 0) {
        if (!device_s)
            free(dev);
        return -1;
    }
    /* Aggregation mean and sd per loaded multi-device worker (its marginal posterior). */
    double *agg_gm = calloc(M, sizeof *agg_gm), *agg_gsd = calloc(M, sizeof *agg_gsd);
    for (size_t mi = 0; mi < M; mi++) {
        const AggPart *a = &m->agg[c->machines[mi].type];
        if (!s->worker[mi] || machine_loaded(c, s, mi) < 2 || !a->use_gp)
            continue;
        double X[GP_MAX_DIM] = {0}, v;
        for (size_t j = 0; j < a->n_dev && j < GP_MAX_DIM; j++)
            X[j] = s->inputs[c->machines[mi].first_device + j];
        gp_predict(a->gp, X, &agg_gm[mi], &v);
        agg_gsd[mi] = sqrt(v);
    }
    double phi[BLR_MAX_P], X[2], theta[BLR_MAX_P], cgm = 0, cgsd = 0;
    for (size_t t = 0; t < c->n_types; t++)
        theta[t] = m->comm.mean[t];
    comm_phi(m, s->worker, s->ps, theta, phi, X);
    if (m->comm_use_gp) {
        gp_predict(m->comm_gp, X, &cgm, &cgsd);
        cgsd = sqrt(cgsd);
    }
    double traffic[4096], *tr = M <= 4096 ? traffic : malloc(M * sizeof *tr);
    int W = 0, P = 0;
    traffic_all(c, m->job.model_mb, s->worker, s->ps, tr);
    for (size_t mi = 0; mi < M; mi++) {
        W += s->worker[mi] != 0;
        P += s->ps[mi] != 0;
    }
    for (size_t si = 0; si < ns; si++) {
        double worst = 0;
        for (size_t mi = 0; mi < M; mi++) {
            const Machine *mc = &c->machines[mi];
            double t = 0;
            if (s->worker[mi]) {
                for (size_t j = 0; j < c->types[mc->type].n_devices; j++)
                    t = fmax(t, dev[si * D + mc->first_device + j]);
                if (machine_loaded(c, s, mi) > 1) {
                    const AggPart *a = &m->agg[mc->type];
                    double beta;
                    blr_sample(&a->blr, &z->agg_beta[si * c->n_types + mc->type], &beta);
                    double g = beta + agg_gm[mi] + agg_gsd[mi] * z->agg[si * M + mi];
                    t += g > 0 ? g : 0;
                }
            }
            if (machine_s)
                machine_s[si * M + mi] = t;
            worst = fmax(worst, t);
        }
        double beta[BLR_MAX_P], comm = 0;
        blr_sample(&m->comm, &z->comm_beta[si * m->comm_p], beta);
        for (size_t mi = 0; mi < M; mi++)
            comm = fmax(comm, tr[mi] * beta[c->machines[mi].type]);
        comm += beta[c->n_types] + beta[c->n_types + 1] * (W + P) + cgm + cgsd * z->comm[si];
        comm = comm > 0 ? comm : 0;
        if (comm_s)
            comm_s[si] = comm;
        iter_s[si] = worst + comm;
    }
    if (tr != traffic)
        free(tr);
    free(agg_gm);
    free(agg_gsd);
    if (!device_s)
        free(dev);
    return 0;
}
