/* An inventory whose machines come from Slurm: `"backend": "slurm"` with an optional
 * "login" node (the commands run there over SSH; absent: here) and "partition". The nodes
 * are read from the controller when the inventory is opened; everything else of the file
 * (name, ssh, trial, job_command) is kept as written. */
#ifndef TUNEDECK_SLURM_INVENTORY_H
#define TUNEDECK_SLURM_INVENTORY_H

#include <cJSON.h>

#include "remote/slurm/slurm_ctl.h"
#include "remote/slurm/slurm_nodes.h"

typedef struct {
    char login[256];      /* empty: here */
    char partition[64];   /* empty: every partition */
    double bandwidth_gbps; /* Slurm does not know it; default 10 */
    SshSettings ssh;      /* the inventory's ssh block, for the login node */
} SlurmTarget;

/* Reads the Slurm fields of an inventory. Returns 1 for "backend": "slurm", 0 for any
 * other inventory (t untouched), -1 for a bad field (err names the file and the field). */
int slurm_target_from_json(const cJSON *root, const char *source, SlurmTarget *t, Error *err);
SlurmCtl *slurm_target_ctl(const SlurmTarget *t, const char *ssh_config, int accept_new_host_keys,
                           Error *err);

/* `sinfo -N -h -o SLURM_SINFO_FORMAT [-p partition]` through c, parsed. */
int slurm_query_nodes(SlurmCtl *c, const char *partition, SlurmNodes *out, Error *err);

/* Whether the inventory file says "backend": "slurm" (0 for any other, or a file that cannot
 * be read: opening it says why). */
int slurm_inventory_is_slurm_file(const char *path);

/* The session's inventory: a Slurm one becomes the controller's nodes that can run work
 * (drained and down nodes left out), trial.launch "slurm" unless the file says otherwise;
 * any other is cluster_from_json. *ctl (may be NULL) gets the Slurm connection, NULL for a
 * plain inventory; the caller frees it. */
Cluster *slurm_inventory_load(const cJSON *root, const char *source, const char *ssh_config,
                              int accept_new_host_keys, SlurmCtl **ctl, Error *err);
Cluster *slurm_inventory_load_file(const char *path, const char *ssh_config,
                                   int accept_new_host_keys, SlurmCtl **ctl, Error *err);

#endif
