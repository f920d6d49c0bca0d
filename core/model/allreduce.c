/* Allreduce cost forms: ring, doubling-halving, binary blocks (see allreduce.h). */
#include "core/model/allreduce.h"

#include <math.h>

const char *allreduce_name(AllreduceAlgo algo)
{
    return algo == ALLREDUCE_RING ? "ring" : "doubling";
}

void allreduce_features(AllreduceAlgo algo, int w, double *steps, double *bw_factor)
{
    if (w <= 1) {
        *steps = 0;
        *bw_factor = 0;
        return;
    }
    double base = (double)(w - 1) / w;
    if (algo == ALLREDUCE_RING) {
        *steps = 2.0 * (w - 1);
        *bw_factor = base;
        return;
    }
    int top = 0;
    while ((2 << top) <= w)
        top++;
    int blocks = 0;
    double extra = 0;
    for (int k = top; k >= 0; k--)
        if (w & (1 << k)) {
            if (blocks > 0)
                extra += 1.0 / (double)(1 << k);
            blocks++;
        }
    *steps = 2.0 * (top + blocks - 1);
    *bw_factor = base + extra;
}

double allreduce_time_s(AllreduceAlgo algo, int w, const AllreduceParams *p)
{
    double steps, factor;
    allreduce_features(algo, w, &steps, &factor);
    return steps * p->alpha_s +
           factor * p->model_bytes * (2.0 * p->beta_s_per_byte + p->gamma_s_per_byte);
}
