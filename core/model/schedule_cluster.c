/* Rebuilds a cluster from a schedule object: every type is defined by the first machine
 * that names it; later machines of that type must list the same devices. */
#include "core/model/schedule_cluster.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/base/jfield.h"

static int read_devices(const cJSON *m, const char *ctx, MachineType *t, DeviceSpec *devs,
                        size_t cap, Error *err)
{
    const cJSON *arr = jfield_array(m, ctx, "devices", 1, err);
    if (!arr)
        return -1;
    t->n_devices = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, arr)
    {
        char dctx[320];
        snprintf(dctx, sizeof dctx, "%s.devices[%zu]", ctx, t->n_devices);
        if (t->n_devices == cap)
            return error_set(err, "%s: expected at most %zu devices", dctx, cap);
        if (!cJSON_IsObject(d))
            return error_set(err, "%s: expected an object, found %s", dctx, jfield_type_name(d));
        DeviceSpec *ds = &devs[t->n_devices];
        memset(ds, 0, sizeof *ds);
        if (jfield_string(d, dctx, "id", 1, ds->id, sizeof ds->id, err) < 0)
            return -1;
        for (size_t k = 0; k < t->n_devices; k++)
            if (strcmp(devs[k].id, ds->id) == 0)
                return error_set(err, "%s: field 'id': device '%s' appears twice", dctx, ds->id);
        ds->kind = strncmp(ds->id, "gpu", 3) == 0 ? DEVICE_GPU : DEVICE_CPU;
        t->n_devices++;
    }
    if (t->n_devices == 0)
        return error_set(err, "%s: field 'devices': expected at least one device", ctx);
    t->devices = devs;
    return 0;
}

/* "cpu, gpu0": the ids of n devices, cut with "..." past cap. */
static void device_ids(const DeviceSpec *devs, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t d = 0; d < n; d++) {
        int k = snprintf(out + len, cap - len, "%s%s", d ? ", " : "", devs[d].id);
        if (k < 0 || (size_t)k >= cap - len) {
            snprintf(out + cap - 4, 4, "...");
            return;
        }
        len += (size_t)k;
    }
}

/* A machine whose devices are not those of the first machine of its type: the type is one
 * model of machine (its devices are measured and fitted as one class), so both are named,
 * with the devices each lists. */
static int devices_differ(const Cluster *c, size_t ti, const char *ctx, const char *name,
                          const DeviceSpec *devs, size_t n, Error *err)
{
    size_t first = 0;
    while (first < c->n_machines && c->machines[first].type != ti)
        first++;
    const MachineType *have = &c->types[ti];
    char want[160], found[160];
    device_ids(have->devices, have->n_devices, want, sizeof want);
    device_ids(devs, n, found, sizeof found);
    return error_set(err,
                     "%s: field 'devices': expected machine '%s' to list the devices of type "
                     "'%s' as machines[%zu] '%s' does (%s), in that order, found (%s)",
                     ctx, name, have->name, first, c->machines[first].name, want, found);
}

Cluster *schedule_cluster_from_json(const cJSON *root, const char *source, Error *err)
{
    if (!cJSON_IsObject(root)) {
        error_set(err, "%s: expected a JSON object, found %s", source, jfield_type_name(root));
        return NULL;
    }
    const cJSON *machines = jfield_array(root, source, "machines", 1, err);
    if (!machines)
        return NULL;
    Cluster *c = cluster_new("schedule");
    if (!c) {
        error_no_memory(err, "%s", source);
        return NULL;
    }
    size_t i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, machines)
    {
        char ctx[300], name[128], host[256] = "", type[64] = "";
        snprintf(ctx, sizeof ctx, "%s: machines[%zu]", source, i++);
        if (!cJSON_IsObject(m)) {
            error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(m));
            goto fail;
        }
        if (jfield_string(m, ctx, "name", 1, name, sizeof name, err) < 0 ||
            jfield_string(m, ctx, "host", 0, host, sizeof host, err) < 0 ||
            jfield_string(m, ctx, "type", 0, type, sizeof type, err) < 0)
            goto fail;
        if (cluster_find_machine(c, name) >= 0) {
            error_set(err, "%s: field 'name': machine '%s' appears twice", ctx, name);
            goto fail;
        }
        if (!type[0])
            snprintf(type, sizeof type, "%.40s-type", name);
        MachineType t;
        DeviceSpec devs[64];
        memset(&t, 0, sizeof t);
        snprintf(t.name, sizeof t.name, "%s", type);
        t.bandwidth_gbps = 1.0;
        if (read_devices(m, ctx, &t, devs, 64, err) < 0)
            goto fail;
        long ti = cluster_find_type(c, type);
        if (ti < 0) {
            ti = cluster_add_type(c, &t, err);
            if (ti < 0) {
                error_prefix(err, "%s", ctx);
                goto fail;
            }
        } else {
            const MachineType *have = &c->types[ti];
            int same = have->n_devices == t.n_devices;
            for (size_t d = 0; same && d < t.n_devices; d++)
                same = strcmp(have->devices[d].id, devs[d].id) == 0;
            if (!same) {
                devices_differ(c, (size_t)ti, ctx, name, devs, t.n_devices, err);
                goto fail;
            }
        }
        if (cluster_add_machine(c, name, host[0] ? host : name, (size_t)ti, err) < 0) {
            error_prefix(err, "%s", ctx);
            goto fail;
        }
    }
    if (c->n_machines == 0) {
        error_set(err, "%s: field 'machines': expected at least one machine", source);
        goto fail;
    }
    cluster_finish(c);
    return c;
fail:
    cluster_free(c);
    return NULL;
}
