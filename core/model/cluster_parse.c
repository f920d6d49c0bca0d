/* Reading a cluster inventory from JSON (DESIGN §5.2): each field checked with an error that
 * names the file, the field and what was expected; the refusal of secrets and of unknown ssh
 * keys, and the warning for a misspelt key, that every reader of an inventory shares. The
 * cluster itself, built in code, its lookups and its writing: cluster.c. */
#include "core/model/cluster.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/jfield.h"
#include "core/base/nearkey.h"
#include "core/base/termsafe.h"
#include "core/model/hostrange.h"
#include "core/model/jobtemplate.h"

/* A machine's name reaches commands (TUNEDECK_MACHINE, {hosts}, folders) whether or not
 * it also names the host to connect to: the same safe alphabet either way. */
static int machine_name_check(const char *name, Error *err)
{
    if (name[0] == '-' || name[0] == '.')
        return error_set(err, "machine '%s': expected a name not starting with '-' or '.'", name);
    for (const char *p = name; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.' || ch == '_')) {
            /* as the host check names it: the whole character, not its first byte (\xC3
             * of an e with an accent) nor '?' */
            char shown[48];
            termsafe_char(shown, sizeof shown, p);
            return error_set(err,
                             "machine '%s': unexpected character %s at %zu: expected letters, "
                             "digits, '-', '.' or '_' only",
                             name, shown, (size_t)(p - name) + 1);
        }
    }
    return 0;
}

static int parse_device(const cJSON *j, const char *ctx, DeviceSpec *d, Error *err)
{
    memset(d, 0, sizeof *d);
    char kind[16] = "";
    if (!cJSON_IsObject(j))
        return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(j));
    /* Machines, their types and devices are tunedeck's settings like the ssh and trial
     * blocks: a misspelt "max_input" lost the GPU's limit, "hots" the machine's address. */
    static const char *const known[] = {"id", "kind", "threads", "model", "max_inputs", NULL};
    if (jfield_only(j, ctx, known, err) < 0 ||
        jfield_string(j, ctx, "id", 1, d->id, sizeof d->id, err) < 0 ||
        jfield_string(j, ctx, "kind", 1, kind, sizeof kind, err) < 0)
        return -1;
    if (!d->id[0]) /* it names the device in schedules and TUNEDECK_DEVICE */
        return error_set(err, "%s: field 'id': expected a device id such as \"gpu0\", found \"\"",
                         ctx);
    if (strcmp(kind, "cpu") == 0)
        d->kind = DEVICE_CPU;
    else if (strcmp(kind, "gpu") == 0)
        d->kind = DEVICE_GPU;
    else
        return error_set(err, "%s: field 'kind': expected \"cpu\" or \"gpu\", found \"%s\"", ctx,
                         kind);
    if (jfield_int(j, ctx, "threads", 0, 1, 100000, &d->threads, err) < 0 ||
        jfield_string(j, ctx, "model", 0, d->model, sizeof d->model, err) < 0 ||
        jfield_int(j, ctx, "max_inputs", 0, 1, 100000000, &d->max_inputs, err) < 0)
        return -1;
    return 0;
}

static int parse_type(const cJSON *j, const char *source, Cluster *c, Error *err)
{
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: machine_types.%s", source, j->string);
    if (!cJSON_IsObject(j))
        return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(j));
    MachineType t;
    memset(&t, 0, sizeof t);
    if (strlen(j->string) >= sizeof t.name || !j->string[0])
        return error_set(err, "%s: expected a type name of 1 to %zu characters", ctx,
                         sizeof t.name - 1);
    snprintf(t.name, sizeof t.name, "%s", j->string);
    static const char *const known[] = {"bandwidth_gbps", "devices", NULL};
    if (jfield_only(j, ctx, known, err) < 0 ||
        jfield_number(j, ctx, "bandwidth_gbps", 1, 1e-6, 1e6, &t.bandwidth_gbps, err) < 0)
        return -1;
    const cJSON *devs = jfield_array(j, ctx, "devices", 1, err);
    if (!devs)
        return -1;
    t.n_devices = (size_t)cJSON_GetArraySize(devs);
    if (t.n_devices == 0)
        return error_set(err, "%s: field 'devices': expected at least one device", ctx);
    t.devices = calloc(t.n_devices, sizeof *t.devices);
    if (!t.devices)
        return error_no_memory(err, "%s: %zu devices", ctx, t.n_devices);
    size_t i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, devs)
    {
        char dctx[300];
        snprintf(dctx, sizeof dctx, "%s.devices[%zu]", ctx, i);
        if (parse_device(d, dctx, &t.devices[i], err) < 0)
            goto fail;
        for (size_t k = 0; k < i; k++)
            if (strcmp(t.devices[k].id, t.devices[i].id) == 0) {
                error_set(err, "%s: field 'id': device '%s' appears twice", dctx,
                          t.devices[i].id);
                goto fail;
            }
        i++;
    }
    long added = cluster_add_type(c, &t, err);
    free(t.devices);
    return added < 0 ? -1 : 0;
fail:
    free(t.devices);
    return -1;
}

static int parse_machines(const cJSON *j, size_t index, const char *source, Cluster *c,
                          Error *err)
{
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: machines[%zu]", source, index);
    if (!cJSON_IsObject(j))
        return error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(j));
    char name[128], host[256] = "", type[64], user[sizeof((Machine *)0)->user] = "";
    int port = 0;
    static const char *const known[] = {"name", "host", "type", "port", "user", NULL};
    if (jfield_only(j, ctx, known, err) < 0 ||
        jfield_string(j, ctx, "name", 1, name, sizeof name, err) < 0 ||
        jfield_string(j, ctx, "host", 0, host, sizeof host, err) < 0 ||
        jfield_string(j, ctx, "type", 1, type, sizeof type, err) < 0 ||
        jfield_int(j, ctx, "port", 0, 1, 65535, &port, err) < 0 ||
        jfield_string(j, ctx, "user", 0, user, sizeof user, err) < 0)
        return -1;
    /* Given but empty (a template's variable left unset): not the same as left out. */
    if (cJSON_HasObjectItem(j, "host") && !host[0])
        return error_set(err, "%s: field 'host': expected a host name or address, found '' "
                              "(leave the field out to use the machine's name)",
                         ctx);
    if (cJSON_HasObjectItem(j, "user") && !user[0])
        return error_set(err, "%s: field 'user': expected a user name, found '' (leave the "
                              "field out to use the ssh block's)",
                         ctx);
    long t = cluster_find_type(c, type);
    if (t < 0)
        return error_set(err, "%s: field 'type': unknown machine type '%s' (not in machine_types)",
                         ctx, type);
    char **names = NULL, **hosts = NULL;
    size_t n_names = 0, n_hosts = 0;
    if (hostrange_expand(name, &names, &n_names, err) < 0)
        return error_prefix(err, "%s: field 'name'", ctx);
    if (hostrange_expand(host[0] ? host : name, &hosts, &n_hosts, err) < 0) {
        hostrange_free(names, n_names);
        return error_prefix(err, "%s: field 'host'", ctx);
    }
    int rc = 0;
    if (n_hosts != n_names && n_hosts != 1) {
        if (n_names == 1)
            rc = error_set(err, "%s: field 'host': expected 1 host for machine '%s', found %zu",
                           ctx, names[0], n_hosts);
        else
            rc = error_set(err,
                           "%s: field 'host': expected 1 or %zu hosts to match the names, "
                           "found %zu",
                           ctx, n_names, n_hosts);
    }
    for (size_t i = 0; rc == 0 && i < n_names; i++) {
        if (strlen(names[i]) >= sizeof c->machines[0].name) {
            rc = error_set(err, "%s: field 'name': '%s' is too long", ctx, names[i]);
            break;
        }
        if (machine_name_check(names[i], err) < 0) {
            rc = error_prefix(err, "%s: field 'name'", ctx);
            break;
        }
        if (cluster_add_machine(c, names[i], hosts[n_hosts == 1 ? 0 : i], (size_t)t, err) < 0) {
            rc = error_prefix(err, "%s", ctx);
            break;
        }
        Machine *m = &c->machines[c->n_machines - 1];
        m->port = port;
        snprintf(m->user, sizeof m->user, "%s", user);
    }
    hostrange_free(names, n_names);
    hostrange_free(hosts, n_hosts);
    return rc;
}

static int parse_ssh(const cJSON *j, const char *source, SshSettings *s, Error *err)
{
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: ssh", source);
    return (inventory_ssh_keys_check(j, source, err) < 0 ||
            jfield_string(j, ctx, "user", 0, s->user, sizeof s->user, err) < 0 ||
            jfield_int(j, ctx, "port", 0, 1, 65535, &s->port, err) < 0 ||
            jfield_string(j, ctx, "identity", 0, s->identity, sizeof s->identity, err) < 0 ||
            jfield_string(j, ctx, "known_hosts", 0, s->known_hosts, sizeof s->known_hosts,
                          err) < 0 ||
            jfield_number(j, ctx, "connect_timeout_s", 0, 0.001, 3600, &s->connect_timeout_s,
                          err) < 0)
               ? -1
               : 0;
}

static int parse_trial(const cJSON *j, const char *source, TrialSettings *t, Error *err)
{
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: trial", source);
    /* The block is tunedeck's own settings: a misspelt key ("rank": "per-device") was
     * ignored, and every trial ran one command per machine instead of one per device. */
    static const char *const known[] = {"launch", "command",     "launch_host",
                                        "ranks",  "master_port", NULL};
    if (jfield_only(j, ctx, known, err) < 0)
        return -1;
    if (jfield_string(j, ctx, "launch", 0, t->launch, sizeof t->launch, err) < 0 ||
        jfield_string(j, ctx, "command", 0, t->command, sizeof t->command, err) < 0 ||
        jfield_string(j, ctx, "launch_host", 0, t->launch_host, sizeof t->launch_host, err) < 0 ||
        jfield_string(j, ctx, "ranks", 0, t->ranks, sizeof t->ranks, err) < 0 ||
        /* trial % 100 is added: the base leaves room for that below 65536 */
        jfield_int(j, ctx, "master_port", 0, 1024, 65435, &t->master_port, err) < 0)
        return -1;
    if (t->ranks[0] && strcmp(t->ranks, "per-host") && strcmp(t->ranks, "per-device"))
        return error_set(err, "%s: field 'ranks': expected \"per-host\" or \"per-device\", "
                              "found \"%s\"",
                         ctx, t->ranks);
    if (t->launch[0] && strcmp(t->launch, "per-host") && strcmp(t->launch, "single") &&
        strcmp(t->launch, "local") && strcmp(t->launch, "slurm"))
        return error_set(err, "%s: field 'launch': expected \"per-host\", \"single\", "
                              "\"local\" or \"slurm\", found \"%s\"",
                         ctx, t->launch);
    return 0;
}

static int by_machine_name(const void *a, const void *b, void *machines)
{
    const Machine *m = machines;
    return strcmp(m[*(const size_t *)a].name, m[*(const size_t *)b].name);
}

/* Machine names are unique: one sort instead of a look-up per machine. entry[i] is the
 * index of the "machines" entry machine i came from, for the message. */
static int check_unique_names(const Cluster *c, const size_t *entry, const char *source,
                              Error *err)
{
    size_t *order = malloc((c->n_machines ? c->n_machines : 1) * sizeof *order);
    if (!order)
        return error_no_memory(err, "%s", source);
    for (size_t i = 0; i < c->n_machines; i++)
        order[i] = i;
    qsort_r(order, c->n_machines, sizeof *order, by_machine_name, c->machines);
    int rc = 0;
    for (size_t i = 1; i < c->n_machines && rc == 0; i++) {
        size_t a = order[i - 1], b = order[i];
        if (strcmp(c->machines[a].name, c->machines[b].name) == 0)
            rc = error_set(err, "%s: machines[%zu]: field 'name': machine '%s' appears twice",
                           source, entry[a > b ? a : b], c->machines[b].name);
    }
    free(order);
    return rc;
}

/* How the live scheduler starts a job: on the placement's first host (the job spreads
 * itself, e.g. mpirun) or on every host (torch.distributed env://, one node rank each). */
static int parse_job_launch(const cJSON *root, const char *source, Cluster *c, Error *err)
{
    char mode[32] = "";
    if (jfield_string(root, source, "job_launch", 0, mode, sizeof mode, err) < 0)
        return -1;
    if (mode[0] && strcmp(mode, "per-host") != 0 && strcmp(mode, "first-host") != 0)
        return error_set(err, "%s: field 'job_launch': expected \"first-host\" or \"per-host\", "
                              "found \"%s\"", source, mode);
    c->job_launch_per_host = strcmp(mode, "per-host") == 0;
    int port = CLUSTER_JOB_MASTER_PORT;
    if (jfield_int(root, source, "job_master_port", 0, 1024, 65000, &port, err) < 0)
        return -1;
    c->job_master_port = port;
    return 0;
}

/* The fields this reader takes; spelt once, for KNOWN_FIELDS and INVENTORY_KEYS alike: a field
 * added to one list only would be read but warned about as a slip from another. */
#define CLUSTER_FIELDS                                                                        \
    "name", "ssh", "machine_types", "machines", "trial", "job_command", "job_launch",          \
        "job_master_port"

static const char *const KNOWN_FIELDS[] = {CLUSTER_FIELDS, NULL};

/* What an inventory holds besides KNOWN_FIELDS that tunedeck reads elsewhere: a Slurm
 * inventory's own fields (remote/slurm/slurm_inventory.h), kept in extra. */
static const char *const INVENTORY_KEYS[] = {CLUSTER_FIELDS, "backend", "login", "partition",
                                             "slurm", "bandwidth_gbps", NULL};

int inventory_misspelt_warning(const cJSON *fields, const char *source, char *out, size_t cap)
{
    return nearkey_warning(fields, INVENTORY_KEYS, source, out, cap);
}

static int known_field(const char *key)
{
    for (const char *const *k = KNOWN_FIELDS; *k; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

static int refuse_secrets_in(const cJSON *j, const char *where, int top, Error *err)
{
    static const char *const SECRETS[] = {"password", "passphrase", NULL};
    size_t i = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, j)
    {
        char inner[512];
        if (cJSON_IsObject(j)) {
            for (const char *const *k = SECRETS; *k; k++)
                if (f->string && strcasecmp(f->string, *k) == 0)
                    return error_set(err,
                                     "%s: field '%s': tunedeck never stores passwords or "
                                     "passphrases; remove it and log in with a key "
                                     "(ssh.identity) or an ssh-agent (ssh-add)",
                                     where, f->string);
            snprintf(inner, sizeof inner, "%s%s%s", where, top ? ": " : ".",
                     f->string ? f->string : "");
        } else {
            snprintf(inner, sizeof inner, "%s[%zu]", where, i);
        }
        i++;
        if ((cJSON_IsObject(f) || cJSON_IsArray(f)) && refuse_secrets_in(f, inner, 0, err) < 0)
            return -1;
    }
    return 0;
}

int inventory_refuse_secrets(const cJSON *root, const char *source, Error *err)
{
    if (!cJSON_IsObject(root) || refuse_secrets_in(root, source, 1, err) == 0)
        return 0;
    return error_mark(err, ERROR_INPUT);
}

int inventory_ssh_keys_check(const cJSON *ssh, const char *source, Error *err)
{
    static const char *const known[] = {"user", "port", "identity", "known_hosts",
                                        "connect_timeout_s", NULL};
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: ssh", source);
    /* A password is refused as one, whoever calls first (its advice is the one to give). */
    if (refuse_secrets_in(ssh, ctx, 0, err) < 0 || jfield_only(ssh, ctx, known, err) < 0)
        return error_mark(err, ERROR_INPUT);
    return 0;
}

Cluster *cluster_from_json(const cJSON *root, const char *source, Error *err)
{
    if (!cJSON_IsObject(root)) {
        error_set(err, "%s: expected a JSON object, found %s", source, jfield_type_name(root));
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    if (inventory_refuse_secrets(root, source, err) < 0)
        return NULL;
    Cluster *c = cluster_new(NULL);
    if (!c) {
        error_no_memory(err, "%s", source);
        return NULL;
    }
    if (jfield_string(root, source, "name", 0, c->name, sizeof c->name, err) < 0)
        goto fail;
    /* A misspelt backend read as an SSH inventory said only "field 'machine_types' is
     * missing", sending a Slurm operator to write machines by hand. */
    char backend[32] = "";
    if (jfield_string(root, source, "backend", 0, backend, sizeof backend, err) < 0)
        goto fail;
    if (backend[0] && strcmp(backend, "ssh") != 0 && strcmp(backend, "slurm") != 0) {
        error_set(err, "%s: field 'backend': expected \"ssh\" or \"slurm\", found \"%s\"", source,
                  backend);
        goto fail;
    }
    const cJSON *ssh = jfield_object(root, source, "ssh", 0, err);
    if ((!ssh && err && err->msg[0]) || (ssh && parse_ssh(ssh, source, &c->ssh, err) < 0))
        goto fail;
    const cJSON *types = jfield_object(root, source, "machine_types", 1, err);
    if (!types)
        goto fail;
    const cJSON *t;
    cJSON_ArrayForEach(t, types)
    {
        if (parse_type(t, source, c, err) < 0)
            goto fail;
    }
    if (c->n_types == 0) {
        error_set(err, "%s: field 'machine_types': expected at least one machine type", source);
        goto fail;
    }
    const cJSON *machines = jfield_array(root, source, "machines", 1, err);
    if (!machines)
        goto fail;
    size_t i = 0, *entry = NULL, entry_cap = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, machines)
    {
        size_t before = c->n_machines;
        if (parse_machines(m, i, source, c, err) < 0) {
            free(entry);
            goto fail;
        }
        if (c->n_machines > entry_cap) {
            entry_cap = c->n_machines * 2;
            size_t *grown = realloc(entry, entry_cap * sizeof *grown);
            if (!grown) {
                free(entry);
                error_no_memory(err, "%s", source);
                goto fail;
            }
            entry = grown;
        }
        for (size_t k = before; k < c->n_machines; k++)
            entry[k] = i;
        i++;
    }
    if (c->n_machines == 0) {
        free(entry);
        error_set(err, "%s: field 'machines': expected at least one machine", source);
        goto fail;
    }
    int unique = check_unique_names(c, entry, source, err);
    free(entry);
    if (unique < 0)
        goto fail;
    const cJSON *trial = jfield_object(root, source, "trial", 0, err);
    if ((!trial && err && err->msg[0]) || (trial && parse_trial(trial, source, &c->trial, err) < 0))
        goto fail;
    /* trial.launch_host names a machine only for the single launcher, which --launcher or a
     * journal may not choose: the session checks it once that launcher is chosen
     * (cluster_check_launch_host), so a stale value never stops another launcher or a
     * resume. */
    if (jfield_string(root, source, "job_command", 0, c->job_command, sizeof c->job_command,
                      err) < 0)
        goto fail;
    if (jobtemplate_check(c->job_command, err) < 0) {
        error_prefix(err, "%s: field 'job_command'", source);
        goto fail;
    }
    if (parse_job_launch(root, source, c, err) < 0)
        goto fail;
    /* The command runs once, on the first host: {node_rank} is 0 there, and a script that
     * starts its host's share of the ranks from it (tunedeck_trial.host_ranks) waits for
     * the other hosts' ranks, which nothing starts, until the stop timeout kills it. With
     * one machine no placement has another host, and the two launches are the same. */
    if (!c->job_launch_per_host && c->n_machines > 1 &&
        strstr(c->job_command, "{node_rank}")) {
        error_set(err,
                  "%s: field 'job_command': {node_rank} is always 0 when the command runs on "
                  "the placement's first host only (\"job_launch\": \"first-host\", the "
                  "default): set \"job_launch\": \"per-host\" to run it on every host",
                  source);
        goto fail;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, root)
    {
        if (known_field(f->string))
            continue;
        if (!c->extra)
            c->extra = cJSON_CreateObject();
        cJSON_AddItemToObject(c->extra, f->string, cJSON_Duplicate(f, 1));
    }
    cluster_finish(c);
    return c;
fail:
    cluster_free(c);
    error_mark(err, ERROR_INPUT); /* a bad inventory, whichever field */
    return NULL;
}

Cluster *cluster_load(const char *path, Error *err)
{
    cJSON *root = jfield_parse_file(path, err);
    if (!root) {
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    Cluster *c = cluster_from_json(root, path, err);
    cJSON_Delete(root);
    return c;
}
