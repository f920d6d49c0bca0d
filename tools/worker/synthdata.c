/* Synthetic data from counter-based random numbers (splitmix64 of seed and index) and a
 * Box-Muller transform: any example can be made in any order, on any host. */
#include "tools/worker/synthdata.h"

#include <math.h>
#include <stdlib.h>

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t key)
{
    return ((double)(mix(key) >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(uint64_t key)
{
    double u = uniform01(key), v = uniform01(key ^ 0xD1B54A32D192ED03ULL);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int synthdata_init(SynthData *d, uint64_t seed, size_t dim, size_t classes, uint64_t n_examples)
{
    d->seed = seed;
    d->dim = dim;
    d->classes = classes;
    d->n_examples = n_examples ? n_examples : 1;
    d->teacher = malloc(classes * dim * sizeof(double));
    if (!d->teacher)
        return -1;
    for (size_t i = 0; i < classes * dim; i++)
        d->teacher[i] = gaussian(mix(seed ^ 0x7EAC4E8ULL) + i);
    return 0;
}

void synthdata_clear(SynthData *d)
{
    free(d->teacher);
    d->teacher = NULL;
}

void synthdata_fill(const SynthData *d, uint64_t first, size_t n, double *x, int *labels)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t index = (first + i) % d->n_examples;
        uint64_t base = mix(d->seed + mix(index));
        double *row = x + i * d->dim;
        for (size_t j = 0; j < d->dim; j++)
            row[j] = gaussian(base + j * 0x632BE59BD9B4E019ULL);
        int best = 0;
        double best_score = -INFINITY;
        for (size_t k = 0; k < d->classes; k++) {
            double score = 0;
            for (size_t j = 0; j < d->dim; j++)
                score += d->teacher[k * d->dim + j] * row[j];
            if (score > best_score) {
                best_score = score;
                best = (int)k;
            }
        }
        labels[i] = best;
    }
}
