/* A simulated cluster for the scheduler in JSON: node groups that may differ in GPU count
 * and GPU type, and each type's speed relative to the GPUs the job models were measured on
 * (NVIDIA T4, the Pollux artifact's g4dn nodes). Format: docs/formats.md, example:
 * examples/sched-mixed-cluster.json. */
#ifndef TUNEDECK_SCHEDCLUSTER_H
#define TUNEDECK_SCHEDCLUSTER_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/sched/sched.h"

typedef struct {
    SchedNodeGroup *groups; /* their type names point into types */
    size_t n_groups;
    char (*types)[32];
} SchedCluster;

/* Errors name the file and the field: node_groups[1].gpu: expected one of T4, V100... */
SchedCluster *schedcluster_load(const char *path, Error *err);
void schedcluster_free(SchedCluster *c);
/* Puts the groups into cfg (which then points into c: keep c until sched_new returns). */
void schedcluster_apply(const SchedCluster *c, SchedConfig *cfg);

#endif
