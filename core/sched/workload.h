/* Scheduler workloads in the Pollux/Sia artifacts' CSV format,
 * `name,time,application,num_replicas,batch_size`, checked row by row against the catalogue. */
#ifndef TUNEDECK_WORKLOAD_H
#define TUNEDECK_WORKLOAD_H

#include <stddef.h>

#include "core/sched/catalogue.h"
#include "core/base/error.h"
#include "core/sched/sched.h"

/* The columns, in any order: each once, no other. */
#define WORKLOAD_COLUMNS "name,time,application,num_replicas,batch_size"

/* Reads the file into a malloc'd array of specs (names malloc'd too; free with
 * workload_free). RFC 4180 quoting is read (csvtab.h). Errors name the file, line and field:
 * an unknown application, a negative or decreasing time, a non-positive replica count or
 * batch, a column other than WORKLOAD_COLUMNS, an empty file. */
int workload_load(const char *path, const Catalogue *cat, SchedJobSpec **out, size_t *n,
                  Error *err);
int workload_parse(const char *text, const char *name, const Catalogue *cat, SchedJobSpec **out,
                   size_t *n, Error *err);
void workload_free(SchedJobSpec *specs, size_t n);

#endif
