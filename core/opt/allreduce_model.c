/* The allreduce iteration model: compute parts borrowed from the structured SGD model, and a
 * semi-parametric hierarchical allreduce term (intra-node and inter-node links fitted
 * separately) in place of parameter-server traffic. */
#include "core/base/rng.h"
#include "core/opt/allreduce_model.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/allreduce.h"
#include "core/opt/blr.h"
#include "core/opt/gp.h"

enum { GP_MIN_POINTS = 6, GP_MAX_POINTS = 60, FIT_ROUNDS = 4 };

struct ArModel {
    const Cluster *c;
    JobSpec job;
    SgdModel *compute; /* also holds the trials, which the allreduce term reads back */
    size_t p; /* n_types + AR_N_SHARED */
    double m0[BLR_MAX_P], sd0[BLR_MAX_P];
    Blr blr;
    Gp *gp; /* residual on (nodes, ranks) */
    int use_gp;
    size_t gp_fit_n;
};

struct ArNormals {
    SgdNormals *compute;
    size_t ns;
    double *beta, *resid;
};

int ar_schedule_ranks(const Schedule *s, int *ranks)
{
    const Cluster *c = s->cluster;
    int total = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        const Machine *mc = &c->machines[m];
        ranks[m] = 0;
        if (!s->worker[m])
            continue;
        for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
            ranks[m] += s->inputs[mc->first_device + d] > 0;
        total += ranks[m];
    }
    return total;
}

ArModel *ar_model_new(const Cluster *c, const JobSpec *job, Error *err)
{
    if (job->sync != JOB_SYNC_ALLREDUCE) {
        error_set(err, "allreduce model: job '%s' is not an allreduce job (\"sync\": \"%s\")",
                  job->name, job_sync_name(job->sync));
        return NULL;
    }
    if (c->n_types + AR_N_SHARED > BLR_MAX_P) {
        error_set(err, "allreduce model: %zu machine types, at most %d supported", c->n_types,
                  BLR_MAX_P - AR_N_SHARED);
        return NULL;
    }
    SgdModel *compute = sgd_model_new(c, job, err);
    if (!compute)
        return NULL;
    ArModel *m = calloc(1, sizeof *m);
    if (!m) {
        sgd_model_free(compute);
        error_no_memory(err, "allreduce model of '%s'", c->name);
        return NULL;
    }
    m->c = c;
    job_copy(&m->job, job);
    m->compute = compute;
    m->p = c->n_types + AR_N_SHARED;
    size_t T = c->n_types;
    double bw_mean = 0;
    for (size_t t = 0; t < T; t++) {
        /* Nothing in the inventory names the GPU link: 10 GB/s (PCIe 3) with a prior wide
         * enough for NVLink's 20× faster and a slow PCIe switch alike. */
        m->m0[t] = 1e-4;
        m->sd0[t] = 1e-4;
        bw_mean += (c->types[t].bandwidth_gbps > 0 ? c->types[t].bandwidth_gbps : 1.0) / T;
    }
    double ref = 2 * job->model_mb / (125.0 * bw_mean) + 1e-3;
    double mean[AR_N_SHARED] = {1e-5, 1.0, 3e-5, 0, 0};
    double sd[AR_N_SHARED] = {1e-5, 0.5, 3e-5, 0.3 * ref, 0.03 * ref};
    for (size_t i = 0; i < AR_N_SHARED; i++) {
        m->m0[T + i] = mean[i];
        m->sd0[T + i] = sd[i];
    }
    m->gp = gp_new(GP_KERNEL_MATERN52, 2, NULL);
    if (!m->gp) {
        ar_model_free(m);
        error_no_memory(err, "allreduce model of '%s'", c->name);
        return NULL;
    }
    if (ar_model_fit(m, 0, err) < 0) {
        ar_model_free(m);
        return NULL;
    }
    return m;
}

void ar_model_free(ArModel *m)
{
    if (!m)
        return;
    sgd_model_free(m->compute);
    gp_free(m->gp);
    job_clear(&m->job);
    free(m);
}

int ar_model_observe(ArModel *m, const Observation *o)
{
    return sgd_model_observe(m->compute, o);
}

size_t ar_model_trials(const ArModel *m)
{
    return sgd_model_trials(m->compute);
}

const SgdModel *ar_model_compute(const ArModel *m)
{
    return m->compute;
}

double ar_model_coef(const ArModel *m, size_t i)
{
    return i < m->p ? m->blr.mean[i] : NAN;
}

/* Features of the allreduce term (see ar_model_coef for the slots). The intra-node term is
 * the node whose own allreduce is slowest under coefficients `coef` (its type's θ slot);
 * the inter-node term runs over the participating nodes at the slowest network link, the
 * vector going out and coming back (the 2β of core/model/allreduce.h). */
static void comm_phi(const ArModel *m, const int *ranks, const double *coef, double *phi, double *X)
{
    const Cluster *c = m->c;
    size_t T = c->n_types;
    memset(phi, 0, m->p * sizeof *phi);
    int nodes = 0, total = 0;
    double min_gbps = INFINITY, worst = -1, worst_f = 0, worst_steps = 0;
    size_t worst_type = 0;
    for (size_t i = 0; i < c->n_machines; i++) {
        if (ranks[i] <= 0)
            continue;
        size_t t = c->machines[i].type;
        nodes++;
        total += ranks[i];
        double bw = c->types[t].bandwidth_gbps > 0 ? c->types[t].bandwidth_gbps : 1.0;
        min_gbps = fmin(min_gbps, bw);
        if (ranks[i] < 2)
            continue;
        double steps, f;
        allreduce_features(m->job.collective, ranks[i], &steps, &f);
        double cost = coef[t] * 2 * f * m->job.model_mb + coef[T + AR_COEF_ALPHA_INTRA] * steps;
        if (cost > worst) {
            worst = cost;
            worst_type = t;
            worst_f = f;
            worst_steps = steps;
        }
    }
    if (worst >= 0) {
        phi[worst_type] = 2 * worst_f * m->job.model_mb;
        phi[T + AR_COEF_ALPHA_INTRA] = worst_steps;
    }
    if (nodes > 1) {
        double steps, f;
        allreduce_features(m->job.collective, nodes, &steps, &f);
        phi[T + AR_COEF_THETA_INTER] = 2 * f * m->job.model_mb / (125.0 * min_gbps);
        phi[T + AR_COEF_ALPHA_INTER] = steps;
    }
    phi[T + AR_COEF_CONST] = 1;
    phi[T + AR_COEF_PER_RANK] = total;
    X[0] = nodes;
    X[1] = total;
}

/* The communication a trial measured: its comm_s, else what compute leaves of the time. */
static int measured_comm(const Cluster *c, const Observation *o, double *y)
{
    if (!observation_measured(o))
        return 0;
    if (o->comm_s >= 0) {
        *y = o->comm_s;
        return 1;
    }
    double worst = 0;
    for (size_t i = 0; i < c->n_machines; i++)
        if (o->schedule->worker[i] && o->machine_time_s[i] >= 0)
            worst = fmax(worst, o->machine_time_s[i]);
    *y = o->time_s - worst;
    return *y >= 0;
}

/* BLR with a noise floor (refitted at the residual's own scale), then the GP on the residual
 * of the most recent points; hyperparameters refitted when the data grew by a quarter. */
static int fit_semi(ArModel *m, const double *phi, const double *X, const double *y, size_t n,
                    double floor, int with_gp, uint64_t seed, Error *err)
{
    size_t p = m->p;
    if (blr_fit(&m->blr, phi, y, n, p, m->m0, m->sd0, floor, err) < 0)
        return -1;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - blr_predict_mean(&m->blr, &phi[i * p]);
        ss += r * r;
    }
    double rms = n > p ? sqrt(ss / (double)(n - p)) : 0;
    if (rms > floor && blr_fit(&m->blr, phi, y, n, p, m->m0, m->sd0, rms, err) < 0)
        return -1;
    m->use_gp = 0;
    if (!with_gp || !m->gp || n < GP_MIN_POINTS)
        return 0;
    size_t from = n > GP_MAX_POINTS ? n - GP_MAX_POINTS : 0, k = n - from;
    double *r = malloc(k * sizeof *r);
    if (!r)
        return error_no_memory(err, "residual of %zu trials", k);
    for (size_t i = 0; i < k; i++)
        r[i] = y[from + i] - blr_predict_mean(&m->blr, &phi[(from + i) * p]);
    int rc = gp_set_data(m->gp, &X[from * 2], r, k, err);
    if (rc == 0 && (m->gp_fit_n < GP_MIN_POINTS || n * 4 >= m->gp_fit_n * 5)) {
        rc = gp_fit(m->gp, 1, seed, err);
        m->gp_fit_n = n;
    }
    free(r);
    if (rc < 0)
        return -1;
    m->use_gp = 1;
    return 0;
}

/* The fitted coefficients, each type's link kept above a thousandth of its prior. */
static void mean_coef(const ArModel *m, double *coef)
{
    for (size_t t = 0; t < m->p; t++)
        coef[t] = t < m->c->n_types ? fmax(m->blr.mean[t], 1e-3 * m->m0[t]) : m->blr.mean[t];
}

int ar_model_fit(ArModel *m, uint64_t seed, Error *err)
{
    if (sgd_model_fit(m->compute, seed, err) < 0)
        return -1;
    const Cluster *c = m->c;
    size_t p = m->p, n = 0, n_obs = sgd_model_trials(m->compute);
    double *phi = malloc((n_obs ? n_obs : 1) * p * sizeof *phi);
    double *X = malloc((n_obs ? n_obs : 1) * 2 * sizeof *X);
    double *y = malloc((n_obs ? n_obs : 1) * sizeof *y);
    int *ranks = malloc((c->n_machines ? c->n_machines : 1) * sizeof *ranks);
    double coef[BLR_MAX_P], ysum = 0;
    memcpy(coef, m->m0, p * sizeof *coef);
    int rc = phi && X && y && ranks ? 0 : error_no_memory(err, "%zu trials", n_obs);
    /* The max picks the bottleneck node: alternate the pick and the fit (as for PS). */
    for (int round = 0; round < FIT_ROUNDS && rc == 0; round++) {
        n = 0;
        ysum = 0;
        for (size_t i = 0; i < n_obs; i++) {
            const Observation *o = sgd_model_trial(m->compute, i);
            if (!measured_comm(c, o, &y[n]))
                continue;
            ar_schedule_ranks(o->schedule, ranks);
            comm_phi(m, ranks, coef, &phi[n * p], &X[n * 2]);
            ysum += y[n++];
        }
        double floor = 0.03 * (n ? ysum / n : 0.01) + 1e-6;
        rc = fit_semi(m, phi, X, y, n, floor, round == FIT_ROUNDS - 1, seed + 300, err);
        mean_coef(m, coef);
    }
    free(phi);
    free(X);
    free(y);
    free(ranks);
    return rc < 0 ? error_prefix(err, "allreduce model fit") : 0;
}

double ar_model_comm_mean(const ArModel *m, const int *ranks)
{
    double coef[BLR_MAX_P], phi[BLR_MAX_P], X[2];
    mean_coef(m, coef);
    comm_phi(m, ranks, coef, phi, X);
    double v = blr_predict_mean(&m->blr, phi);
    if (m->use_gp) {
        double gm, gv;
        gp_predict(m->gp, X, &gm, &gv);
        v += gm;
    }
    return v > 0 ? v : 0;
}

double ar_model_mean(const ArModel *m, const Schedule *s, double *machine_s, double *comm_s)
{
    const Cluster *c = m->c;
    double stack[256], *ms = machine_s              ? machine_s
                             : c->n_machines <= 256 ? stack
                                                    : malloc(c->n_machines * sizeof *ms);
    int rstack[256], *ranks = c->n_machines <= 256 ? rstack : malloc(c->n_machines * sizeof *ranks);
    if (!ms || !ranks) {
        if (ms != machine_s && ms != stack)
            free(ms);
        if (ranks != rstack)
            free(ranks);
        return NAN;
    }
    sgd_model_mean(m->compute, s, ms, NULL);
    double worst = 0;
    for (size_t i = 0; i < c->n_machines; i++)
        if (s->worker[i])
            worst = fmax(worst, ms[i]);
    ar_schedule_ranks(s, ranks);
    double comm = ar_model_comm_mean(m, ranks);
    if (comm_s)
        *comm_s = comm;
    if (ms != machine_s && ms != stack)
        free(ms);
    if (ranks != rstack)
        free(ranks);
    return worst + comm;
}

/* ---- forward sampling ---- */

ArNormals *ar_normals_new(const ArModel *m, size_t ns, uint64_t seed)
{
    ArNormals *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    z->ns = ns;
    z->compute = sgd_normals_new(m->compute, ns, seed);
    z->beta = malloc((ns ? ns : 1) * m->p * sizeof *z->beta);
    z->resid = malloc((ns ? ns : 1) * sizeof *z->resid);
    gsl_rng *rng = rng_new((unsigned long)(seed * 2862933555777941757ull + 3037000493ull));
    if (!z->compute || !z->beta || !z->resid || !rng) {
        gsl_rng_free(rng);
        ar_normals_free(z);
        return NULL;
    }
    for (size_t i = 0; i < ns * m->p; i++)
        z->beta[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    for (size_t i = 0; i < ns; i++)
        z->resid[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    gsl_rng_free(rng);
    return z;
}

void ar_normals_free(ArNormals *z)
{
    if (!z)
        return;
    sgd_normals_free(z->compute);
    free(z->beta);
    free(z->resid);
    free(z);
}

size_t ar_normals_count(const ArNormals *z)
{
    return z->ns;
}

int ar_model_sample(const ArModel *m, const Schedule *s, const ArNormals *z, double *iter_s,
                    double *machine_s, double *device_s, double *comm_s, Error *err)
{
    const Cluster *c = m->c;
    size_t ns = z->ns, M = c->n_machines, T = c->n_types;
    double *ms = machine_s ? machine_s : malloc((ns * M + 1) * sizeof *ms);
    double *tmp = malloc((ns ? ns : 1) * sizeof *tmp);
    int *ranks = malloc((M ? M : 1) * sizeof *ranks);
    int rc = ms && tmp && ranks ? 0
                                : error_no_memory(err, "allreduce model: %zu samples of %zu machines",
                                                  ns, M);
    if (rc == 0)
        rc = sgd_model_sample(m->compute, s, z->compute, tmp, ms, device_s, NULL, err);
    if (rc == 0) {
        ar_schedule_ranks(s, ranks);
        double coef[BLR_MAX_P], phi[BLR_MAX_P], X[2], gm = 0, gsd = 0;
        mean_coef(m, coef);
        comm_phi(m, ranks, coef, phi, X);
        if (m->use_gp) {
            gp_predict(m->gp, X, &gm, &gsd);
            gsd = sqrt(gsd);
        }
        for (size_t si = 0; si < ns; si++) {
            double beta[BLR_MAX_P], worst = 0, intra = 0;
            blr_sample(&m->blr, &z->beta[si * m->p], beta);
            for (size_t i = 0; i < M; i++) {
                if (s->worker[i])
                    worst = fmax(worst, ms[si * M + i]);
                if (ranks[i] < 2)
                    continue;
                double steps, f;
                allreduce_features(m->job.collective, ranks[i], &steps, &f);
                intra = fmax(intra, beta[c->machines[i].type] * 2 * f * m->job.model_mb +
                                        beta[T + AR_COEF_ALPHA_INTRA] * steps);
            }
            double comm = intra;
            for (size_t k = AR_COEF_THETA_INTER; k < AR_N_SHARED; k++)
                comm += beta[T + k] * phi[T + k];
            comm += gm + gsd * z->resid[si];
            comm = comm > 0 ? comm : 0;
            if (comm_s)
                comm_s[si] = comm;
            iter_s[si] = worst + comm;
        }
    }
    free(tmp);
    free(ranks);
    if (ms != machine_s)
        free(ms);
    return rc;
}
