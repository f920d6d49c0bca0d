/* The cluster inventory: machine types with their devices and bandwidth, machines with
 * their hosts, and the ssh and trial settings the remote layer uses (DESIGN §5.2). */
#ifndef TUNEDECK_CLUSTER_H
#define TUNEDECK_CLUSTER_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct cJSON cJSON;

typedef enum { DEVICE_CPU, DEVICE_GPU } DeviceKind;

#define CLUSTER_JOB_MASTER_PORT 29500 /* torch.distributed's own default */

typedef struct {
    char id[32];    /* "cpu", "gpu0" */
    DeviceKind kind;
    int threads;    /* cpu: hardware threads; 0 when not given */
    char model[64]; /* gpu: "K520"; empty for cpu */
    int max_inputs; /* gpu memory limit in inputs; 0 = unknown/unbounded */
} DeviceSpec;

typedef struct {
    char name[64];
    double bandwidth_gbps;
    DeviceSpec *devices;
    size_t n_devices;
} MachineType;

typedef struct {
    char name[128];
    char host[256];
    size_t type;        /* index into Cluster.types */
    int port;           /* 0 = use the ssh block's */
    char user[257];     /* empty = use the ssh block's; 256 bytes as AD allows */
    size_t first_device; /* index of this machine's first device in the flat device list */
} Machine;

typedef struct {
    char user[257];        /* 256 bytes, as AD allows */
    int port;              /* 0 = ssh default / ~/.ssh/config */
    char identity[512];
    char known_hosts[512];
    double connect_timeout_s;
} SshSettings;

typedef struct {
    char launch[16];       /* "per-host" | "single" | "local" */
    char command[1024];
    char launch_host[128]; /* for "single": a machine name; empty = the first machine */
    /* "per-host" (default): one trial command per machine; "per-device": one process per
     * device with inputs (a rank, as torch.distributed expects; remote/launch/rankfan.h). */
    char ranks[16];
    int master_port; /* per-device: rendezvous port base; 0 = 29500 */
} TrialSettings;

typedef struct {
    char name[64];
    MachineType *types;
    size_t n_types;
    Machine *machines;
    size_t n_machines;
    size_t n_devices;      /* total devices over all machines (the flat device list) */
    SshSettings ssh;
    TrialSettings trial;
    char job_command[1024]; /* scheduler live mode template (docs/scheduler-live.md) */
    int job_launch_per_host; /* "job_launch": "per-host": the command starts on every host */
    int job_master_port;     /* "job_master_port": first {master_port} tried (0: the default) */
    cJSON *extra;           /* unknown top-level fields, carried through */
} Cluster;

/* Reading an inventory (core/model/cluster_parse.c). */

/* 0 when no object in the inventory (at any depth) has a "password" or "passphrase" field;
 * -1 with err naming the file and where the field is. tunedeck never stores a password:
 * such a field would otherwise be ignored in silence, the operator believing it used. */
int inventory_refuse_secrets(const cJSON *root, const char *source, Error *err);

/* 0 when the inventory's "ssh" object (`ssh`, SSH and Slurm inventories alike) holds only
 * user, port, identity, known_hosts and connect_timeout_s; -1 with err (ERROR_INPUT) naming
 * the first other key, "SOURCE: ssh: field 'KEY': unknown; expected ...". A misspelt key
 * ("identiy") was ignored, and the host was reached with the default identity or
 * known_hosts. A secret ("password") keeps inventory_refuse_secrets's message. */
int inventory_ssh_keys_check(const cJSON *ssh, const char *source, Error *err);

/* An inventory's key that tunedeck does not read but is one slip from one it does
 * ("job_comand", "partiton"): carried through in extra without a word, the field meant left
 * at its default. The warning, as every reader of an inventory gives it (nearkey_warning:
 * "SOURCE: key 'partiton' is not one tunedeck reads; did you mean 'partition'?"), for the
 * inventory object or a Cluster's extra (a Slurm inventory's own fields are known); 1 when
 * written, 0 when none. */
int inventory_misspelt_warning(const cJSON *fields, const char *source, char *out, size_t cap);

/* Parses an inventory object; `source` names the file in error messages. */
Cluster *cluster_from_json(const cJSON *root, const char *source, Error *err);
Cluster *cluster_load(const char *path, Error *err);

/* Writing, freeing, building in code and lookups (core/model/cluster.c). */
cJSON *cluster_to_json(const Cluster *c);
void cluster_free(Cluster *c);

/* Builds a cluster in code (simulator, generated benchmark clusters). Types and machines
 * are appended in order; cluster_finish computes the flat device indices. */
Cluster *cluster_new(const char *name);
/* Both leave the cluster as it was when they fail (out of memory, error_no_memory). */
long cluster_add_type(Cluster *c, const MachineType *t, Error *err); /* copies t, its devices;
                                                                       the index or -1 */
int cluster_add_machine(Cluster *c, const char *name, const char *host, size_t type, Error *err);
void cluster_finish(Cluster *c);

const MachineType *cluster_machine_type(const Cluster *c, size_t machine);
const DeviceSpec *cluster_device(const Cluster *c, size_t flat_device, size_t *machine_out);
long cluster_find_machine(const Cluster *c, const char *name);
/* For the single launcher: trial.launch_host, when set, names one of c's machines; -1 with
 * err naming `source` and the field otherwise. Checked where that launcher is chosen. */
int cluster_check_launch_host(const Cluster *c, const char *source, Error *err);
/* The machine the single launcher starts trials on: trial.launch_host's, else the first; -1
 * when launch_host names none of c's machines. */
long cluster_launch_machine(const Cluster *c);
long cluster_find_type(const Cluster *c, const char *name);
int cluster_machine_has_gpu(const Cluster *c, size_t machine);

/* The model key of a device: its GPU model ("K520"), or "<machine type>/<id>" for CPUs —
 * one performance curve per key (seed §3: "one GP per type of device"). */
void cluster_device_class(const Cluster *c, size_t flat_device, char *out, size_t cap);

#endif
