/* An inventory whose machines come from Slurm: `"backend": "slurm"` with an optional
 * "login" node (the commands run there over SSH; absent: here), "partition", and a "slurm"
 * block of the intervals an operator may change (a busy slurmctld answers slowly; a small
 * cluster wants faster rounds). The nodes are read from the controller when the inventory
 * is opened; everything else of the file (name, ssh, trial, job_command) is kept as
 * written. */
#ifndef TUNEDECK_SLURM_INVENTORY_H
#define TUNEDECK_SLURM_INVENTORY_H

#include <cJSON.h>

#include "remote/slurm/slurm_ctl.h"
#include "remote/slurm/slurm_nodes.h"

/* The "slurm" block's bounds (docs/formats.md). Below them a busy slurmctld is hammered, or
 * a command cut before a healthy one answers; above them nothing is seen for an hour. */
#define SLURM_COMMAND_TIMEOUT_MIN_S 1.0
#define SLURM_JOB_ROUND_MIN_S 0.1
#define SLURM_NODE_ROUND_MIN_S 0.5
#define SLURM_PENDING_SAY_MIN_S 1.0
#define SLURM_INTERVAL_MAX_S 3600.0
/* A ceiling's back-off: from a second (the test suites) to a day. */
#define SLURM_CEILING_RETRY_MIN_S 1.0
#define SLURM_CEILING_RETRY_MAX_S 86400.0
/* The wait for a job's exit line after Slurm says it ended: every death of a job whose
 * batch script was killed (no line will come) waits it out, so it is kept short. */
#define SLURM_EXIT_GRACE_MIN_S 1.0
#define SLURM_EXIT_GRACE_MAX_S 300.0
/* The wait for a down login node at a tuning session's end, before its allocation is left
 * unreleased: from a second to an hour (a session's end held longer is a hung session). */
#define SLURM_RELEASE_WAIT_MIN_S 1.0
#define SLURM_RELEASE_WAIT_MAX_S 3600.0

/* The "slurm" block: 0 where the inventory leaves a value out, so each user keeps its own
 * default (slurm_ctl 30 s; the live backend 1, 10, 30 and 5 s: remote/live/liverun_slurm.h;
 * the release's wait 30 s: remote/session/release_wait.h). */
typedef struct {
    double command_timeout_s;   /* each Slurm command's answer (sbatch, scontrol, sinfo...) */
    double job_round_s;         /* live scheduler: between two scontrol rounds */
    double node_round_s;        /* live scheduler: between two node-state rounds (sinfo) */
    double pending_say_s;       /* live scheduler: a job of ours pending this long is said */
    double exit_grace_s;        /* live scheduler: how long a job's output file is read again,
                                   after Slurm says it ended, for its batch script's exit line */
    double ceiling_retry_s;     /* live scheduler: how long a job's ceiling holds (a size Slurm
                                   refused it), doubled at each refusal that sets it again... */
    double ceiling_retry_max_s; /* ...up to this */
    double release_wait_s;      /* tuning: at a session's end, how long the release of its
                                   allocation waits for a login node that is down */
} SlurmIntervals;

typedef struct {
    char login[256];       /* empty: here */
    char partition[64];    /* empty: every partition */
    double bandwidth_gbps; /* Slurm does not know it; default 10 */
    SshSettings ssh;       /* the inventory's ssh block, for the login node */
    SlurmIntervals every;  /* the "slurm" block */
} SlurmTarget;

/* Reads the Slurm fields of an inventory. Returns 1 for "backend": "slurm", 0 for any
 * other inventory (t untouched), -1 for a bad field (err names the file and the field; a
 * field of the "slurm" block that is not one of SlurmIntervals' is refused, so a misspelt
 * interval is never silently the default). */
int slurm_target_from_json(const cJSON *root, const char *source, SlurmTarget *t, Error *err);
SlurmCtl *slurm_target_ctl(const SlurmTarget *t, const char *ssh_config, int accept_new_host_keys,
                           Error *err);

/* The "slurm" block of an inventory (absent: every interval 0, the defaults). ctx names the
 * inventory ("cluster.json"); errors say "cluster.json: slurm: field 'node_round_s': ...". */
int slurm_intervals_from_json(const cJSON *root, const char *ctx, SlurmIntervals *out, Error *err);

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
