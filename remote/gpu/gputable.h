/* A host's GPU table as nvidia-smi's --query-gpu lines update it (-lms repeats the whole
 * table every period). A line that is refused keeps its GPU in the table, in error, at its
 * index, with the refusal as the reason: dropped, the host showed one GPU fewer and said
 * nothing (a lost GPU prints "[GPU is lost]" where its numbers go). A GPU in error is never
 * one to use: count gputable_readable, not the table's size. */
#ifndef TUNEDECK_GPUTABLE_H
#define TUNEDECK_GPUTABLE_H

#include <stddef.h>

#include "remote/gpu/nvsmi.h"

/* Upserts the line's GPU into gpus[0..*n) (cap entries): 0 when it read, -1 when refused
 * (listed in error, err says why). A new GPU past cap is not listed. */
int gputable_take_line(GpuSample *gpus, size_t *n, size_t cap, const char *line, Error *err);

/* How many GPUs of the table read (none in error). */
size_t gputable_readable(const GpuSample *gpus, size_t n);

#endif
