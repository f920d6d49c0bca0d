/* Joint forward samples of the structured SGD model: every part's posterior drawn with
 * standard normals fixed per suggestion (common random numbers across candidates). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/rng.h"
#include "core/opt/sgd_model.h"
#include "core/opt/sgd_model_parts.h"

SgdNormals *sgd_normals_new(const SgdModel *m, size_t ns, uint64_t seed)
{
    const Cluster *c = m->c;
    SgdNormals *z = calloc(1, sizeof *z);
    gsl_rng *rng = rng_new((unsigned long)(seed * 6364136223846793005ull + 1442695040888963407ull));
    if (!z || !rng) {
        free(z);
        gsl_rng_free(rng);
        return NULL;
    }
    z->ns = ns;
    size_t sizes[6] = {ns * c->n_devices,  ns * m->n_classes * DEV_P,
                       ns * c->n_machines, ns * c->n_types,
                       ns * m->comm_p,     ns};
    double **arrays[6] = {&z->device,   &z->device_beta, &z->agg,
                          &z->agg_beta, &z->comm_beta,   &z->comm};
    for (int a = 0; a < 6; a++) {
        *arrays[a] = malloc((sizes[a] ? sizes[a] : 1) * sizeof(double));
        if (!*arrays[a]) {
            gsl_rng_free(rng);
            sgd_normals_free(z);
            return NULL;
        }
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
    int rc = idx && X && zz && gs ? 0 : error_no_memory(err, "model: samples of %zu devices", D);
    for (size_t k = 0; k < m->n_classes && rc == 0; k++) {
        const DevClass *cl = &m->cls[k];
        size_t n = 0;
        for (size_t mi = 0; mi < c->n_machines; mi++) {
            const Machine *mc = &c->machines[mi];
            if (!s->worker[mi])
                continue;
            int shared = sgd_model_machine_loaded(c, s, mi) > 1;
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
                sgd_model_device_phi(X[2 * i], (int)X[2 * i + 1], phi);
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
    if (!dev)
        return error_no_memory(err, "model: %zu samples", ns);
    if (sample_devices(m, s, z, dev, err) < 0) {
        if (!device_s)
            free(dev);
        return -1;
    }
    /* Aggregation mean and sd per loaded multi-device worker (its marginal posterior). */
    double *agg_gm = calloc(M, sizeof *agg_gm), *agg_gsd = calloc(M, sizeof *agg_gsd);
    double traffic[4096], *tr = M <= 4096 ? traffic : malloc(M * sizeof *tr);
    if (!agg_gm || !agg_gsd || !tr) {
        free(agg_gm), free(agg_gsd);
        if (tr != traffic)
            free(tr);
        if (!device_s)
            free(dev);
        return error_no_memory(err, "model: samples of %zu machines", M);
    }
    for (size_t mi = 0; mi < M; mi++) {
        const AggPart *a = &m->agg[c->machines[mi].type];
        if (!s->worker[mi] || sgd_model_machine_loaded(c, s, mi) < 2 || !a->use_gp)
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
    sgd_model_comm_phi(m, s->worker, s->ps, theta, phi, X);
    if (m->comm_use_gp) {
        gp_predict(m->comm_gp, X, &cgm, &cgsd);
        cgsd = sqrt(cgsd);
    }
    int W = 0, P = 0;
    sgd_model_traffic_all(c, m->job.model_mb, s->worker, s->ps, tr);
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
                if (sgd_model_machine_loaded(c, s, mi) > 1) {
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
