/* The cluster a protocol v1 schedule object describes (DESIGN §5.1): machine names, hosts,
 * types and device ids, so a trial command can read its schedule with no inventory file. */
#ifndef TUNEDECK_SCHEDULE_CLUSTER_H
#define TUNEDECK_SCHEDULE_CLUSTER_H

#include "core/model/cluster.h"

/* Device kinds are not on the wire: an id starting with "gpu" is a GPU, anything else a CPU.
 * A machine without "host" gets its name as host; without "type", a type of its own. */
Cluster *schedule_cluster_from_json(const cJSON *root, const char *source, Error *err);

#endif
