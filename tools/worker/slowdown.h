/* A trial's --slowdown specs: each stretches the device times of every device, of one
 * machine's devices or of one device F-fold, so one worker can stand in for a slower card. */
#ifndef TUNEDECK_SLOWDOWN_H
#define TUNEDECK_SLOWDOWN_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/model/cluster.h"

typedef struct {
    char name[200]; /* "" = every device; "m" = machine m; "m/dev" = one device */
    double factor;
} SlowdownSpec;

/* Every flat device's factor (1 where no spec names it; a later spec wins), or NULL when a
 * spec names a machine or device the cluster lacks (ERROR_INPUT, naming it and what the cluster
 * has). Caller frees. */
double *slowdown_resolve(const SlowdownSpec *specs, size_t n_specs, const Cluster *c, Error *err);

#endif
