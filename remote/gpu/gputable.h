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
 * each period (up to GPUTABLE_MAX), all but one of them ghosts.
 *
 * Where no line names its GPU no repeat marks a period, and such a line whose text changed
 * each period still added an entry each period. One -lms process lists the GPUs NVML counted
 * when it started, every period (a GPU that fails is still listed, as an error line), so a
 * period has as many lines as the last complete one: a line naming no GPU that would add an
 * entry where the period already has that many lines is taken as the next period's first,
 * and the table stays at the GPUs the last complete period listed. A host whose lines never
 * named a GPU since its -lms process started has no complete period to count, and still
 * grows to GPUTABLE_MAX: nothing in the output tells its periods apart. A new -lms process
 * (gpuwatch restarts it) may list more or fewer GPUs: gputable_new_process forgets the count.
 * Should one process's period hold more lines than its last (NVML counts once, so it should
 * not), the lines past that count naming no GPU are matched as the next period's, and the
 * table shows fewer GPUs until a line naming one marks the periods again. */
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
    size_t period_lines; /* lines the last complete period had (0: none seen since the
                          * -lms process started) */
} GpuTable;

/* Upserts the line's GPU into the table: 0 when it read, -1 when refused (listed in error,
 * err says why). A new GPU past GPUTABLE_MAX is not listed. Zero the table to start. */
int gputable_take_line(GpuTable *t, const char *line, Error *err);

/* A new -lms process starts: the GPUs it lists may differ, so no period of the last one
 * bounds its periods, and the last one's unfinished period is no period (its GPUs are kept,
 * shown as last read, until the new process's first period ends). */
void gputable_new_process(GpuTable *t);

/* How many GPUs of the table read (none in error). */
size_t gputable_readable(const GpuTable *t);

#endif
