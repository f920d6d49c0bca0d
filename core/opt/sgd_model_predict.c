/* The structured SGD model's mean predictions: device time curves and their inverse (what
 * water-filling reads), aggregation, communication and the iteration time of a schedule. */
#include <math.h>

#include "core/opt/sgd_model.h"
#include "core/opt/sgd_model_parts.h"

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
        inputs ? sgd_model_part_mean(&a->blr, a->gp, a->use_gp, &one, X) : blr_predict_mean(&a->blr, &one);
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
    sgd_model_comm_phi(m, worker, ps, theta, phi, X);
    double v = sgd_model_part_mean(&m->comm, m->comm_gp, m->comm_use_gp, phi, X);
    return v > 0 ? v : 0;
}

double sgd_model_mean(const SgdModel *m, const Schedule *s, double *machine_s, double *comm_s)
{
    const Cluster *c = m->c;
    double worst = 0;
    for (size_t mi = 0; mi < c->n_machines; mi++) {
        const Machine *mc = &c->machines[mi];
        int shared = sgd_model_machine_loaded(c, s, mi) > 1;
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
