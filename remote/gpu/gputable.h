/* A host's GPU table as nvidia-smi's --query-gpu lines update it (-lms repeats the whole
 * table every period). A line that is refused keeps its GPU in the table, in error, at its
 * index, with the refusal as the reason: dropped, the host showed one GPU fewer and said
 * nothing (a lost GPU prints "[GPU is lost]" where its numbers go). A GPU in error is never
 * one to use: count gputable_readable, not the table's size.
 *
 * Nothing in -lms's output marks where a period ends: a period is seen to begin when a GPU
 * already updated in the current one is listed again (by UUID or index). Then every entry the
 * period just ended did not list is dropped, so the table holds the GPUs the last answer had:
 * a line with neither index nor uuid whose refusal text changed each period added an entry
 * each period (up to GPUTABLE_MAX), all but one of them ghosts. */
#ifndef TUNEDECK_GPUTABLE_H
#define TUNEDECK_GPUTABLE_H

#include <stddef.h>

#include "remote/gpu/nvsmi.h"

enum { GPUTABLE_MAX = 64 };

typedef struct {
    GpuSample gpus[GPUTABLE_MAX];
    size_t n;
    /* Per entry: its line's place in the period it was last listed in (0 first), and
     * whether the current period listed it. */
    size_t place[GPUTABLE_MAX];
    unsigned char listed[GPUTABLE_MAX];
    size_t lines; /* lines taken in the current period */
} GpuTable;

/* Upserts the line's GPU into the table: 0 when it read, -1 when refused (listed in error,
 * err says why). A new GPU past GPUTABLE_MAX is not listed. Zero the table to start. */
int gputable_take_line(GpuTable *t, const char *line, Error *err);

/* How many GPUs of the table read (none in error). */
size_t gputable_readable(const GpuTable *t);

#endif
