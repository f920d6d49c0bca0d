/* The inventory's job_command template (live scheduling), checked when the inventory is
 * loaded rather than when a job starts: only the placeholders below, and never inside
 * quotes, because tunedeck quotes every value itself (a value inside '...' or "..." would
 * end up half quoted, and a job name or host list could then run as shell). */
#ifndef TUNEDECK_JOBTEMPLATE_H
#define TUNEDECK_JOBTEMPLATE_H

#include "core/base/error.h"

/* Every placeholder remote/live/jobctl substitutes, as the messages list them. */
#define JOBTEMPLATE_PLACEHOLDERS                                                                   \
    "{gpus}, {hosts}, {resume}, {master_addr}, {master_port}, {nnodes}, {node_rank}, "             \
    "{gpus_per_host}, {gpu_ids}, {hostfile}, {hostfile_text}, {host_slots}"

/* 0 when every placeholder of t is known and stands outside quotes. */
int jobtemplate_check(const char *t, Error *err);

#endif
