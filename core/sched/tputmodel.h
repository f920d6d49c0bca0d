/* Throughput model of a ring-allreduce job (seed §3.2, DESIGN §2.2): step time on w GPUs
 * spread over `nodes` nodes with per-GPU batch m,
 *     t = θa·m + θl·steps(w) + θb·factor(w) + θx·(nodes − 1) + θc,
 * where steps/factor are the allreduce features (core/model/allreduce.h; θl = θ·α and
 * θb = θ·n(2β+γ)), θx a per-extra-node cost (our addition: the Pollux traces show a
 * network step between nodes that the single-node seed did not need), all fitted by NNLS. */
#ifndef TUNEDECK_TPUTMODEL_H
#define TUNEDECK_TPUTMODEL_H

#include <stddef.h>

#include "core/model/allreduce.h"
#include "core/base/error.h"

#define TPUT_NPARAM 7

typedef struct {
    int gpus, nodes;
    double local_batch;
    double step_s;
} TputPoint;

typedef struct {
    AllreduceAlgo algo;
    double theta[TPUT_NPARAM]; /* a, c, l_node, b_node, l_net, b_net, x */
    double rmse_s;
    size_t npoints;
} TputModel;

/* Fits θ for one algorithm form. Needs at least one point. */
int tputmodel_fit(TputModel *m, AllreduceAlgo algo, const TputPoint *pts, size_t n, Error *err);
/* Fits both forms and keeps the one with the smaller residual. */
int tputmodel_fit_best(TputModel *m, const TputPoint *pts, size_t n, Error *err);
double tputmodel_step_s(const TputModel *m, int gpus, int nodes, double local_batch);

#endif
