/* The nodes' states and GPUs, as `sinfo -h -N -o SLURM_NODESTATE_FORMAT` prints them: what
 * the live scheduler reads every few seconds to learn which nodes of its partition Slurm took
 * out (drained, down, not responding), gave back, or added. Parsed without running anything
 * (tested on captured output); a fraction of the full node table's bytes a node. */
#ifndef TUNEDECK_SLURM_NODESTATE_H
#define TUNEDECK_SLURM_NODESTATE_H

#include <stddef.h>

#include "core/base/error.h"

/* The node, its long state with flag suffixes, its generic resources (the GPUs of a node the
 * live scheduler did not have at its start), and the free-text reason last. */
#define SLURM_NODESTATE_FORMAT "%N|%T|%G|%E"

typedef struct {
    char name[64];
    char state[32];    /* as sinfo printed it: "drained", "down*", "mixed" */
    char reason[200];  /* "" for none */
    int gpus;          /* from the gres (slurm_gres_gpus): 0 none, SLURM_MAX_GPUS + 1 too many */
    char gpu_type[32]; /* "t4"; "a100,t4" for a node of both; "" untyped (or too many) */
    int unusable;      /* slurm_node_unusable(state) */
} SlurmNodeStatus;

typedef struct {
    SlurmNodeStatus *v; /* sorted by name (a node listed once per partition: once) */
    size_t n;
} SlurmNodeStatuses;

/* Parses the output; source names it in errors, with the line and the field at fault. */
int slurm_nodestate_parse(const char *text, const char *source, SlurmNodeStatuses *out, Error *err);
void slurm_nodestate_clear(SlurmNodeStatuses *l);
/* The node's record, or NULL (binary search). */
const SlurmNodeStatus *slurm_nodestate_find(const SlurmNodeStatuses *l, const char *name);

/* 1 when nothing new should run on a node in this state: drained or draining, down, fail or
 * failing, or not responding (a '*' suffix). A node whose state is unknown (a controller
 * that just restarted and has not heard from it yet) is not: its runs stay. */
int slurm_node_unusable(const char *state);

#endif
