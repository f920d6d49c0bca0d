/* A suggestion's prediction from forward samples (core/opt/prediction.h). */
#include "core/opt/prediction.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int prediction_from_samples(Suggestion *out, const Schedule *s, size_t ns, double *iter_s,
                            const double *machine_s, const double *device_s,
                            const double *comm_s, const char *who, Error *err)
{
    const Cluster *c = s->cluster;
    size_t M = c->n_machines, D = c->n_devices;
    out->machine_mean_s = calloc(M, sizeof(double));
    out->machine_p10_s = calloc(M, sizeof(double));
    out->machine_p90_s = calloc(M, sizeof(double));
    out->device_mean_s = calloc(D, sizeof(double));
    double *col = malloc(ns * sizeof *col);
    if (!out->machine_mean_s || !out->machine_p10_s || !out->machine_p90_s ||
        !out->device_mean_s || !col) {
        free(col);
        return error_no_memory(err, "%s: prediction", who);
    }
    out->has_prediction = 1;
    out->mean_s = out->comm_mean_s = 0;
    for (size_t i = 0; i < ns; i++) {
        out->mean_s += iter_s[i] / ns;
        out->comm_mean_s += comm_s[i] / ns;
    }
    qsort(iter_s, ns, sizeof *iter_s, cmp_double);
    out->p10_s = iter_s[ns / 10];
    out->p90_s = iter_s[ns * 9 / 10];
    for (size_t m = 0; m < M; m++) {
        for (size_t i = 0; i < ns; i++) {
            col[i] = s->worker[m] ? machine_s[i * M + m] : 0;
            out->machine_mean_s[m] += col[i] / ns;
        }
        qsort(col, ns, sizeof *col, cmp_double);
        out->machine_p10_s[m] = col[ns / 10];
        out->machine_p90_s[m] = col[ns * 9 / 10];
    }
    free(col);
    for (size_t d = 0; d < D; d++)
        for (size_t i = 0; i < ns; i++)
            out->device_mean_s[d] += device_s[i * D + d] / ns;
    return 0;
}
