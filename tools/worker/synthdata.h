/* Synthetic classification data: example i of a data set is a pure function of (seed, i),
 * so every worker makes its own share with no file to copy. Labels come from a fixed random
 * linear teacher, so a network can learn them and the loss falls. */
#ifndef TUNEDECK_SYNTHDATA_H
#define TUNEDECK_SYNTHDATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t seed;
    size_t dim, classes;
    uint64_t n_examples; /* the data set's size: one epoch */
    double *teacher;     /* classes x dim */
} SynthData;

/* Returns -1 when memory runs out. */
int synthdata_init(SynthData *d, uint64_t seed, size_t dim, size_t classes, uint64_t n_examples);
void synthdata_clear(SynthData *d);
/* Examples first .. first+n-1 (indices wrap at n_examples) into x (n x dim) and labels. */
void synthdata_fill(const SynthData *d, uint64_t first, size_t n, double *x, int *labels);

#endif
