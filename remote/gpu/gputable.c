/* A host's GPU table, updated line by line; a refused line's GPU kept, in error. */
#include "remote/gpu/gputable.h"

#include <string.h>

/* Whether a line's GPU is one already listed: by UUID; by index when either uuid did not
 * read (a GPU in error that comes back, or goes); a line with neither by its refusal's text,
 * which is the same every period ("Unable to determine the device handle for GPU …"). */
static int same_gpu(const GpuSample *a, const GpuSample *b)
{
    if (a->uuid[0] && b->uuid[0])
        return strcmp(a->uuid, b->uuid) == 0;
    if (a->index >= 0 || b->index >= 0)
        return a->index == b->index;
    return strcmp(a->error, b->error) == 0;
}

int gputable_take_line(GpuSample *gpus, size_t *n, size_t cap, const char *line, Error *err)
{
    GpuSample g;
    int rc = nvsmi_parse_gpu_line(line, &g, err);
    size_t i = 0;
    while (i < *n && !same_gpu(&gpus[i], &g))
        i++;
    if (i == *n) {
        if (*n == cap)
            return rc;
        (*n)++;
    }
    gpus[i] = g;
    return rc;
}

size_t gputable_readable(const GpuSample *gpus, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !gpus[i].error[0];
    return k;
}
