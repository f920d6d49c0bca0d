/* Training checkpoints for job mode: network shape, step, data position and parameters in
 * one binary file with a CRC-32, written atomically (temp file, fsync, rename). */
#ifndef TUNEDECK_CHECKPOINT_H
#define TUNEDECK_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "tools/worker/densenet.h"
#include "core/base/error.h"

typedef struct {
    DenseNet net;
    uint64_t step;     /* optimizer steps taken */
    uint64_t examples; /* examples consumed: the data position (epoch = examples / n) */
    uint64_t data_seed;
    double loss;      /* mean loss of the last step */
    uint32_t workers; /* how many workers wrote it (informational) */
    double *params;   /* net.n_params; owned */
} Checkpoint;

int checkpoint_save(const char *path, const Checkpoint *c, Error *err);
/* Whether checkpoint_save could write `path`, asked before a job trains rather than at its
 * stop: an empty path, a folder, or a place where PATH.tmp cannot be created is refused.
 * Leaves nothing behind. */
int checkpoint_check_writable(const char *path, Error *err);
/* Rejects a wrong magic, version, shape, size or checksum with a message naming the file. */
int checkpoint_load(const char *path, Checkpoint *c, Error *err);
void checkpoint_clear(Checkpoint *c);

#endif
