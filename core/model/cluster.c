/* The cluster inventory in memory: building it in code, its lookups, and writing it as JSON.
 * Reading one from JSON, with its checks: cluster_parse.c. */
#include "core/model/cluster.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Cluster *cluster_new(const char *name)
{
    Cluster *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "cluster");
    c->ssh.connect_timeout_s = 5;
    c->job_master_port = CLUSTER_JOB_MASTER_PORT; /* as a parsed inventory without the field */
    return c;
}

void cluster_free(Cluster *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_types; i++)
        free(c->types[i].devices);
    free(c->types);
    free(c->machines);
    cJSON_Delete(c->extra);
    free(c);
}

long cluster_add_type(Cluster *c, const MachineType *t, Error *err)
{
    size_t n = c->n_types;
    DeviceSpec *devices = calloc(t->n_devices ? t->n_devices : 1, sizeof *devices);
    if (!devices)
        return error_no_memory(err, "machine type '%s'", t->name);
    if ((n & (n - 1)) == 0) { /* capacity doubles at each power of two */
        MachineType *grown = realloc(c->types, (n ? 2 * n : 1) * sizeof *grown);
        if (!grown) {
            free(devices);
            return error_no_memory(err, "machine type '%s'", t->name);
        }
        c->types = grown;
    }
    MachineType *dst = &c->types[c->n_types];
    *dst = *t;
    dst->devices = devices;
    memcpy(dst->devices, t->devices, t->n_devices * sizeof *dst->devices);
    return (long)c->n_types++;
}

int cluster_add_machine(Cluster *c, const char *name, const char *host, size_t type, Error *err)
{
    /* Capacity doubles at each power of two: adding n machines costs O(n), not O(n^2)
     * (an inventory of "n[0-99999]" took minutes; found by tests/fuzz/fuzz_cluster.c). */
    size_t n = c->n_machines;
    if ((n & (n - 1)) == 0) {
        Machine *grown = realloc(c->machines, (n ? 2 * n : 1) * sizeof *grown);
        if (!grown)
            return error_no_memory(err, "machine '%s'", name);
        c->machines = grown;
    }
    Machine *m = &c->machines[c->n_machines++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->host, sizeof m->host, "%s", host ? host : name);
    m->type = type;
    return 0;
}

void cluster_finish(Cluster *c)
{
    size_t d = 0;
    for (size_t i = 0; i < c->n_machines; i++) {
        c->machines[i].first_device = d;
        d += c->types[c->machines[i].type].n_devices;
    }
    c->n_devices = d;
}

const MachineType *cluster_machine_type(const Cluster *c, size_t machine)
{
    return &c->types[c->machines[machine].type];
}

const DeviceSpec *cluster_device(const Cluster *c, size_t flat_device, size_t *machine_out)
{
    /* Machines hold consecutive devices in order: the first machine whose devices end after
     * flat_device, by bisection (a scan made every loop over a G100000 cluster's devices
     * quadratic). */
    size_t lo = 0, hi = c->n_machines;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->machines[mid].first_device + cluster_machine_type(c, mid)->n_devices > flat_device)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == c->n_machines || flat_device < c->machines[lo].first_device)
        return NULL;
    if (machine_out)
        *machine_out = lo;
    return &cluster_machine_type(c, lo)->devices[flat_device - c->machines[lo].first_device];
}

long cluster_find_machine(const Cluster *c, const char *name)
{
    for (size_t i = 0; i < c->n_machines; i++)
        if (strcmp(c->machines[i].name, name) == 0)
            return (long)i;
    return -1;
}

long cluster_launch_machine(const Cluster *c)
{
    return c->trial.launch_host[0] ? cluster_find_machine(c, c->trial.launch_host) : 0;
}

long cluster_find_type(const Cluster *c, const char *name)
{
    for (size_t i = 0; i < c->n_types; i++)
        if (strcmp(c->types[i].name, name) == 0)
            return (long)i;
    return -1;
}

int cluster_machine_has_gpu(const Cluster *c, size_t machine)
{
    const MachineType *t = cluster_machine_type(c, machine);
    for (size_t d = 0; d < t->n_devices; d++)
        if (t->devices[d].kind == DEVICE_GPU)
            return 1;
    return 0;
}

void cluster_device_class(const Cluster *c, size_t flat_device, char *out, size_t cap)
{
    size_t m = 0;
    const DeviceSpec *d = cluster_device(c, flat_device, &m);
    if (!d) {
        snprintf(out, cap, "?");
        return;
    }
    if (d->kind == DEVICE_GPU && d->model[0])
        snprintf(out, cap, "%s", d->model);
    else
        snprintf(out, cap, "%s/%s", cluster_machine_type(c, m)->name, d->id);
}

static cJSON *device_to_json(const DeviceSpec *d)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", d->id);
    cJSON_AddStringToObject(j, "kind", d->kind == DEVICE_GPU ? "gpu" : "cpu");
    if (d->threads)
        cJSON_AddNumberToObject(j, "threads", d->threads);
    if (d->model[0])
        cJSON_AddStringToObject(j, "model", d->model);
    if (d->max_inputs)
        cJSON_AddNumberToObject(j, "max_inputs", d->max_inputs);
    return j;
}

cJSON *cluster_to_json(const Cluster *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", c->name);
    cJSON *ssh = cJSON_AddObjectToObject(root, "ssh");
    if (c->ssh.user[0])
        cJSON_AddStringToObject(ssh, "user", c->ssh.user);
    if (c->ssh.port)
        cJSON_AddNumberToObject(ssh, "port", c->ssh.port);
    if (c->ssh.identity[0])
        cJSON_AddStringToObject(ssh, "identity", c->ssh.identity);
    if (c->ssh.known_hosts[0])
        cJSON_AddStringToObject(ssh, "known_hosts", c->ssh.known_hosts);
    cJSON_AddNumberToObject(ssh, "connect_timeout_s", c->ssh.connect_timeout_s);
    cJSON *types = cJSON_AddObjectToObject(root, "machine_types");
    for (size_t i = 0; i < c->n_types; i++) {
        cJSON *t = cJSON_AddObjectToObject(types, c->types[i].name);
        cJSON_AddNumberToObject(t, "bandwidth_gbps", c->types[i].bandwidth_gbps);
        cJSON *devs = cJSON_AddArrayToObject(t, "devices");
        for (size_t d = 0; d < c->types[i].n_devices; d++)
            cJSON_AddItemToArray(devs, device_to_json(&c->types[i].devices[d]));
    }
    /* Machines are written expanded: one entry each, so a round trip is exact. */
    cJSON *machines = cJSON_AddArrayToObject(root, "machines");
    for (size_t i = 0; i < c->n_machines; i++) {
        const Machine *m = &c->machines[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", m->name);
        cJSON_AddStringToObject(j, "host", m->host);
        cJSON_AddStringToObject(j, "type", c->types[m->type].name);
        if (m->port)
            cJSON_AddNumberToObject(j, "port", m->port);
        if (m->user[0])
            cJSON_AddStringToObject(j, "user", m->user);
        cJSON_AddItemToArray(machines, j);
    }
    if (c->trial.launch[0] || c->trial.command[0] || c->trial.ranks[0] || c->trial.master_port) {
        cJSON *t = cJSON_AddObjectToObject(root, "trial");
        if (c->trial.launch[0])
            cJSON_AddStringToObject(t, "launch", c->trial.launch);
        if (c->trial.command[0])
            cJSON_AddStringToObject(t, "command", c->trial.command);
        if (c->trial.launch_host[0])
            cJSON_AddStringToObject(t, "launch_host", c->trial.launch_host);
        if (c->trial.ranks[0])
            cJSON_AddStringToObject(t, "ranks", c->trial.ranks);
        if (c->trial.master_port)
            cJSON_AddNumberToObject(t, "master_port", c->trial.master_port);
    }
    if (c->job_command[0])
        cJSON_AddStringToObject(root, "job_command", c->job_command);
    if (c->job_launch_per_host)
        cJSON_AddStringToObject(root, "job_launch", "per-host");
    if (c->job_master_port != CLUSTER_JOB_MASTER_PORT)
        cJSON_AddNumberToObject(root, "job_master_port", c->job_master_port);
    const cJSON *f;
    if (c->extra)
        cJSON_ArrayForEach(f, c->extra) cJSON_AddItemToObject(root, f->string,
                                                              cJSON_Duplicate(f, 1));
    return root;
}

int cluster_check_launch_host(const Cluster *c, const char *source, Error *err)
{
    if (c->trial.launch_host[0] && cluster_find_machine(c, c->trial.launch_host) < 0) {
        error_set(err, "%s: trial: field 'launch_host': expected the name of a machine, found '%s'",
                  source, c->trial.launch_host);
        return error_mark(err, ERROR_INPUT);
    }
    return 0;
}
