/* Slurm's queue as `squeue` prints it in fixed columns, parsed without running anything
 * (tested on captured output, fuzzed): each job's state, size, GRES, nodes and, for a
 * pending job, Slurm's reason (Resources, Priority...). */
#ifndef TUNEDECK_SLURM_QUEUE_H
#define TUNEDECK_SLURM_QUEUE_H

#include <stddef.h>

#include "core/base/error.h"

#define SLURM_SQUEUE_FORMAT "%i|%u|%T|%D|%b|%N|%r|%j"

typedef struct {
    char id[32];
    char user[64];
    char state[24];   /* RUNNING, PENDING, ... */
    int nodes;
    char gres[64];    /* "gres:gpu:2", "N/A" */
    char nodelist[128];
    char reason[64];  /* pending reason ("Resources", "Priority"), "None" */
    char name[128];
} SlurmQueueJob;

typedef struct {
    SlurmQueueJob *v;
    size_t n;
} SlurmQueue;

/* Parses `squeue -h -o SLURM_SQUEUE_FORMAT`; the job name (last) may hold '|'. */
int slurm_queue_parse(const char *text, const char *source, SlurmQueue *out, Error *err);
void slurm_queue_clear(SlurmQueue *q);

#endif
