/* Cost of one allreduce of n bytes over w GPUs (seed §2.1 and §3.2, after Thakur and
 * Rabenseifner 2005): α latency per message, β seconds per byte moved, γ seconds per byte
 * reduced. Ring; doubling-halving for powers of two; binary blocks otherwise. */
#ifndef TUNEDECK_ALLREDUCE_H
#define TUNEDECK_ALLREDUCE_H

typedef enum {
    ALLREDUCE_RING,
    ALLREDUCE_DOUBLING, /* doubling-halving when w is a power of two, else binary blocks */
} AllreduceAlgo;

typedef struct {
    double alpha_s, beta_s_per_byte, gamma_s_per_byte, model_bytes;
} AllreduceParams;

/* The cost splits as  steps·α + bw_factor·n·(2β + γ): these two numbers are the features
 * the throughput model fits (its θ's absorb α and n(2β+γ)). Ring: steps 2(w−1), factor
 * (w−1)/w. Doubling-halving: steps 2·log2 w, same factor. Binary blocks, w = Σ 2^k_i with
 * k_1 > k_2 > ...: each block runs doubling-halving, then every smaller block exchanges its
 * segment (n/2^k_i) with the next larger one, two more steps each: steps
 * 2·(⌊log2 w⌋ + b − 1), factor (w−1)/w + Σ_{i>1} 2^−k_i — worst when a block is tiny
 * (w = 9 = 8 + 1 pays a whole extra vector). */
void allreduce_features(AllreduceAlgo algo, int w, double *steps, double *bw_factor);
double allreduce_time_s(AllreduceAlgo algo, int w, const AllreduceParams *p);
const char *allreduce_name(AllreduceAlgo algo);

#endif
