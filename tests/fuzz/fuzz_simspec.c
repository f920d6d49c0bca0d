/* Fuzzes the --sim SETTING:NETWORK[:BATCH] spec reader (core/sim/simcluster.c). */
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char *spec = fuzz_cstring(data, size);
    Error err;
    SimCluster *s = simcluster_new(spec, &err);
    /* Large generated clusters are valid but slow to build: the size bound is the spec's. */
    if (!s && !err.msg[0])
        abort();
    simcluster_free(s);
    free(spec);
    return 0;
}
