/* The structured model of distributed SGD: device, aggregation and communication parts,
 * each a Bayesian linear model with a GP on its residual (BOAT's semi-parametric parts).
 * This file holds the model, its trials and the features every part is built on; fitting,
 * mean curves and forward sampling have a file each (core/opt/sgd_model_parts.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt/sgd_model.h"
#include "core/opt/sgd_model_parts.h"

int sgd_model_machine_loaded(const Cluster *c, const Schedule *s, size_t m)
{
    const Machine *mc = &c->machines[m];
    int n = 0;
    for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
        n += s->inputs[mc->first_device + d] > 0;
    return n;
}

static void count_roles(const Cluster *c, const unsigned char *worker, const unsigned char *ps,
                        int *W, int *P)
{
    *W = *P = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        *W += worker[m] != 0;
        *P += ps[m] != 0;
    }
}

/* Megabytes one machine moves among W workers and P servers (DESIGN §2.1). */
static double traffic_of(double model_mb, int W, int P, int is_worker, int is_ps)
{
    double d = 0;
    if (is_worker && P)
        d += 2 * model_mb * (1.0 - (is_ps ? 1.0 / P : 0.0));
    if (is_ps && P)
        d += 2 * (model_mb / P) * (W - (is_worker ? 1 : 0));
    return d;
}

double sgd_model_traffic_mb(const Cluster *c, double model_mb, const unsigned char *worker,
                            const unsigned char *ps, size_t i)
{
    int W, P;
    count_roles(c, worker, ps, &W, &P);
    return traffic_of(model_mb, W, P, worker[i] != 0, ps[i] != 0);
}

void sgd_model_traffic_all(const Cluster *c, double model_mb, const unsigned char *worker,
                           const unsigned char *ps, double *out)
{
    int W, P;
    count_roles(c, worker, ps, &W, &P);
    for (size_t i = 0; i < c->n_machines; i++)
        out[i] = traffic_of(model_mb, W, P, worker[i] != 0, ps[i] != 0);
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
    if (!m) {
        error_no_memory(err, "model of '%s'", c->name);
        return NULL;
    }
    m->c = c;
    job_copy(&m->job, job);
    m->class_of = calloc(c->n_devices, sizeof *m->class_of);
    m->cls = calloc(c->n_devices, sizeof *m->cls);
    m->agg = calloc(c->n_types, sizeof *m->agg);
    m->comm_gp = gp_new(GP_KERNEL_MATERN52, 2, NULL);
    if (!m->class_of || !m->cls || !m->agg || !m->comm_gp)
        goto no_memory;
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
            if (!m->cls[k].gp)
                goto no_memory;
        }
        m->class_of[d] = k;
        const DeviceSpec *ds = cluster_device(c, d, NULL);
        if (ds->max_inputs && (!m->cls[k].cap || ds->max_inputs < m->cls[k].cap))
            m->cls[k].cap = ds->max_inputs;
    }
    for (size_t t = 0; t < c->n_types; t++) {
        m->agg[t].n_dev = c->types[t].n_devices;
        if (m->agg[t].n_dev > 1 && m->agg[t].n_dev <= GP_MAX_DIM &&
            !(m->agg[t].gp = gp_new(GP_KERNEL_MATERN52, m->agg[t].n_dev, NULL)))
            goto no_memory;
    }
    m->comm_p = c->n_types + 2;
    if (sgd_model_fit(m, 0, err) < 0) {
        sgd_model_free(m);
        return NULL;
    }
    return m;
no_memory:
    error_no_memory(err, "model of '%s'", c->name);
    sgd_model_free(m);
    return NULL;
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
    for (size_t t = 0; m->agg && t < m->c->n_types; t++)
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

const Observation *sgd_model_trial(const SgdModel *m, size_t i)
{
    return m->obs[i];
}

int sgd_model_observe(SgdModel *m, const Observation *o)
{
    if (m->n_obs == m->cap_obs) {
        size_t cap = m->cap_obs ? 2 * m->cap_obs : 16;
        Observation **grown = realloc(m->obs, cap * sizeof *grown);
        if (!grown)
            return -1;
        m->obs = grown;
        m->cap_obs = cap;
    }
    Observation *copy = observation_copy(o);
    if (!copy)
        return -1;
    m->obs[m->n_obs++] = copy;
    return 0;
}

/* ---- features ---- */

double sgd_model_part_mean(const Blr *blr, const Gp *gp, int use_gp, const double *phi,
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

void sgd_model_device_phi(double x, int shared, double *phi)
{
    phi[0] = 1;
    phi[1] = x;
    phi[2] = shared ? x : 0;
}

void sgd_model_comm_phi(const SgdModel *m, const unsigned char *worker, const unsigned char *ps,
                        const double *theta, double *phi, double *X)
{
    const Cluster *c = m->c;
    memset(phi, 0, m->comm_p * sizeof *phi);
    int W, P;
    count_roles(c, worker, ps, &W, &P);
    double worst = -1, worst_mb = 0;
    size_t at = 0;
    for (size_t i = 0; i < c->n_machines; i++) {
        double mb = traffic_of(m->job.model_mb, W, P, worker[i] != 0, ps[i] != 0);
        double t = mb * theta[c->machines[i].type];
        if (t > worst) {
            worst = t;
            worst_mb = mb;
            at = i;
        }
    }
    phi[c->machines[at].type] = worst_mb;
    phi[c->n_types] = 1;
    phi[c->n_types + 1] = W + P;
    X[0] = W;
    X[1] = P;
}
