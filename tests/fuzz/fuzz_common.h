/* Shared helpers of the libFuzzer targets: inputs as NUL-terminated strings and the
 * simulated cluster that schedule and journal inputs refer to. */
#ifndef TUNEDECK_FUZZ_COMMON_H
#define TUNEDECK_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim/simcluster.h"

static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* Setting B has every kind of machine: GPU ones and CPU-only ones. */
static inline const SimCluster *fuzz_sim(void)
{
    static SimCluster *sim;
    if (!sim) {
        Error err;
        sim = simcluster_new("B:googlenet", &err);
        if (!sim)
            abort();
    }
    return sim;
}

#endif
