/* Slurm's node list as `sinfo` prints it in fixed columns, parsed without running anything
 * (so the parser is tested on captured output), and the inventory built from it: one
 * machine type per distinct (CPUs, memory, GPU type and count) shape. */
#ifndef TUNEDECK_SLURM_NODES_H
#define TUNEDECK_SLURM_NODES_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/model/cluster.h"

/* One node per line and partition (-N), no header (-h), '|' between fields, the free-text
 * reason last so a '|' inside it stays in it. docs/slurm.md says why not --json. */
#define SLURM_SINFO_FORMAT "%N|%c|%m|%G|%T|%f|%P|%C|%o|%E"

/* More GPUs than this on one node is a broken line, not a node (each GPU becomes a device). */
#define SLURM_MAX_GPUS 1024

/* GPU types on one node: real nodes have two (gpu:t4:2,gpu:v100:2); more than this is a
 * broken line. */
#define SLURM_MAX_GPU_KINDS 4

typedef struct {
    char type[32]; /* "t4"; empty when the GRES names no type (gpu:2) */
    int count;
} SlurmGpuKind;

typedef enum {
    SLURM_NODE_IDLE,
    SLURM_NODE_MIXED,
    SLURM_NODE_ALLOC,
    SLURM_NODE_DRAIN, /* drained or draining: the operator took it out */
    SLURM_NODE_DOWN,  /* down, failing, not responding, unknown */
    SLURM_NODE_OTHER  /* reserved, maintenance, powered down, planned... (raw state says) */
} SlurmNodeState;

typedef struct {
    char name[64];
    int cpus;
    long mem_mb;
    char gpu_type[32]; /* "t4"; "t4,v100" for a node of both; empty when the GRES names no
                          type (or they do not fit) */
    int gpus;          /* all types together */
    SlurmGpuKind gpu_kinds[SLURM_MAX_GPU_KINDS]; /* each type's count, in the GRES's order */
    int n_gpu_kinds;
    SlurmNodeState state;
    char state_raw[32];    /* as sinfo printed it ("drained", "down*", "idle~") */
    char features[128];    /* comma list; empty for none */
    char partitions[256];  /* comma list, sorted, without the default's '*' */
    int cpus_alloc;
    char addr[64];         /* NodeAddr: where Slurm itself reaches the node (its name when
                              the configuration gives none) */
    char reason[200];      /* empty for none */
} SlurmNode;

typedef struct {
    SlurmNode *v;
    size_t n;
} SlurmNodes;

/* Parses `sinfo -N -h -o SLURM_SINFO_FORMAT` output; a node listed once per partition
 * becomes one node with every partition. source names the output in errors ("sinfo"),
 * with the line and the field at fault: a negative GPU count, more than SLURM_MAX_GPUS
 * GPUs or SLURM_MAX_GPU_KINDS types, more CPUs allocated than the node's total. */
int slurm_nodes_parse(const char *text, const char *source, SlurmNodes *out, Error *err);
void slurm_nodes_clear(SlurmNodes *nodes);

const char *slurm_node_state_name(SlurmNodeState s);
/* "gpu:t4:2", "gpu:2(S:0-1)", "gpu:a100:4,shard:8": the GPUs it names (all types
 * together; type gets the first one's); 0 for "(null)"; SLURM_MAX_GPUS + 1 for anything
 * above SLURM_MAX_GPUS; -1 for a wrong answer: a negative count ("gpu:t4:-2"), or an item
 * of 127 bytes or more before its '(' (it would be cut before its count). */
int slurm_gres_gpus(const char *gres, char *type, size_t type_cap);
/* Every GPU type the GRES names, "a100,t4" for "gpu:a100:2,gpu:t4:2" (a node with several
 * takes a job of any of them); "" when it names none or they do not fit cap. */
void slurm_gres_gpu_types(const char *gres, char *out, size_t cap);

/* The machine type a node makes: "8cpu-4000mb-v100x4", "8cpu-4000mb-t4x2-v100x2"; -1 when
 * it does not fit cap (a cut name could match another shape's). */
int slurm_node_shape(const SlurmNode *n, char *out, size_t cap);
/* "t4:2", "t4:2,v100:2", "gpu:4" (untyped), "-" (none): the node's GPUs as printed. */
void slurm_node_gpus_label(const SlurmNode *n, char *out, size_t cap);

/* 1 when `name`, a node name Slurm gave, can be used and printed as it is: 1 to cap-1
 * bytes, no blank, nothing that would drive a terminal (core/base/termsafe). A node name
 * is an identifier (--nodelist, the inventory's machines): it is refused, not rewritten. */
int slurm_node_name_ok(const char *name, size_t cap);

/* The inventory: machines named after the nodes (in sinfo's order) with their NodeAddr as
 * the host (a rank's MASTER_ADDR), types named after their shape ("8cpu-4000mb-v100x4",
 * "8cpu-4000mb-t4x2-v100x2"), every GPU a device of model TYPE upper-cased (a node of two
 * types: its first type's GPUs first, each of its own model). */
Cluster *slurm_nodes_cluster(const SlurmNodes *nodes, const char *name, double bandwidth_gbps,
                             Error *err);

#endif
