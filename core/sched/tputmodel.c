/* Fitting and evaluating the throughput model (see tputmodel.h) with NNLS. */
#include "core/sched/tputmodel.h"

#include <math.h>
#include <stdlib.h>

#include "core/sched/nnls.h"

static void features(AllreduceAlgo algo, int gpus, int nodes, double m, double *row)
{
    double steps, factor;
    allreduce_features(algo, gpus, &steps, &factor);
    int net = nodes > 1;
    row[0] = m;
    row[1] = 1;
    row[2] = net ? 0 : steps;
    row[3] = net ? 0 : factor;
    row[4] = net ? steps : 0;
    row[5] = net ? factor : 0;
    row[6] = net ? nodes - 1 : 0;
}

int tputmodel_fit(TputModel *m, AllreduceAlgo algo, const TputPoint *pts, size_t n, Error *err)
{
    if (n == 0)
        return error_set(err, "throughput model: expected at least one (GPUs, step time) point");
    double *A = calloc(n * TPUT_NPARAM, sizeof *A), *b = calloc(n, sizeof *b);
    if (!A || !b) {
        free(A), free(b);
        return error_no_memory(err, "throughput model");
    }
    /* Relative error matters (0.01 s and 1 s steps alike): weight each row by 1/t. */
    for (size_t i = 0; i < n; i++) {
        double wgt = pts[i].step_s > 0 ? 1.0 / pts[i].step_s : 1.0;
        features(algo, pts[i].gpus, pts[i].nodes, pts[i].local_batch, A + i * TPUT_NPARAM);
        for (int j = 0; j < TPUT_NPARAM; j++)
            A[i * TPUT_NPARAM + j] *= wgt;
        b[i] = pts[i].step_s * wgt;
    }
    double x[TPUT_NPARAM];
    int rc = nnls_solve(A, n, TPUT_NPARAM, b, x, NULL, err);
    free(A), free(b);
    if (rc < 0)
        return error_prefix(err, "throughput model");
    m->algo = algo;
    for (int j = 0; j < TPUT_NPARAM; j++)
        m->theta[j] = x[j];
    int any_net = 0;
    for (size_t i = 0; i < n; i++)
        any_net |= pts[i].nodes > 1;
    if (!any_net) {
        m->theta[4] = m->theta[2];
        m->theta[5] = m->theta[3];
    }
    m->npoints = n;
    double s2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d =
            tputmodel_step_s(m, pts[i].gpus, pts[i].nodes, pts[i].local_batch) - pts[i].step_s;
        s2 += d * d;
    }
    m->rmse_s = sqrt(s2 / (double)n);
    return 0;
}

int tputmodel_fit_best(TputModel *m, const TputPoint *pts, size_t n, Error *err)
{
    TputModel ring, dbl;
    if (tputmodel_fit(&ring, ALLREDUCE_RING, pts, n, err) < 0 ||
        tputmodel_fit(&dbl, ALLREDUCE_DOUBLING, pts, n, err) < 0)
        return -1;
    *m = dbl.rmse_s <= ring.rmse_s ? dbl : ring;
    return 0;
}

double tputmodel_step_s(const TputModel *m, int gpus, int nodes, double local_batch)
{
    double row[TPUT_NPARAM], t = 0;
    features(m->algo, gpus, nodes, local_batch, row);
    for (int j = 0; j < TPUT_NPARAM; j++)
        t += m->theta[j] * row[j];
    return t;
}
