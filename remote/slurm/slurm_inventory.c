/* Inventories read from the Slurm controller (remote/slurm/slurm_inventory.h). */
#include "remote/slurm/slurm_inventory.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"
#include "core/base/termsafe.h"

static int parse_ssh(const cJSON *root, const char *source, SshSettings *s, Error *err)
{
    memset(s, 0, sizeof *s);
    Error none;
    memset(&none, 0, sizeof none);
    const cJSON *j = jfield_object(root, source, "ssh", 0, &none);
    if (!j)
        return none.msg[0] ? error_set(err, "%s", none.msg) : 0;
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s: ssh", source);
    if (inventory_ssh_keys_check(j, source, err) < 0 ||
        jfield_string(j, ctx, "user", 0, s->user, sizeof s->user, err) < 0 ||
        jfield_int(j, ctx, "port", 0, 1, 65535, &s->port, err) < 0 ||
        jfield_string(j, ctx, "identity", 0, s->identity, sizeof s->identity, err) < 0 ||
        jfield_string(j, ctx, "known_hosts", 0, s->known_hosts, sizeof s->known_hosts, err) < 0 ||
        jfield_number(j, ctx, "connect_timeout_s", 0, 0.1, 600, &s->connect_timeout_s, err) < 0)
        return -1;
    return 0;
}

static const struct {
    const char *key;
    size_t offset;
    double min_s, max_s;
} INTERVALS[] = {
    {"command_timeout_s", offsetof(SlurmIntervals, command_timeout_s), SLURM_COMMAND_TIMEOUT_MIN_S,
     SLURM_INTERVAL_MAX_S},
    {"job_round_s", offsetof(SlurmIntervals, job_round_s), SLURM_JOB_ROUND_MIN_S,
     SLURM_INTERVAL_MAX_S},
    {"node_round_s", offsetof(SlurmIntervals, node_round_s), SLURM_NODE_ROUND_MIN_S,
     SLURM_INTERVAL_MAX_S},
    {"pending_say_s", offsetof(SlurmIntervals, pending_say_s), SLURM_PENDING_SAY_MIN_S,
     SLURM_INTERVAL_MAX_S},
    {"exit_grace_s", offsetof(SlurmIntervals, exit_grace_s), SLURM_EXIT_GRACE_MIN_S,
     SLURM_EXIT_GRACE_MAX_S},
    {"ceiling_retry_s", offsetof(SlurmIntervals, ceiling_retry_s), SLURM_CEILING_RETRY_MIN_S,
     SLURM_CEILING_RETRY_MAX_S},
    {"ceiling_retry_max_s", offsetof(SlurmIntervals, ceiling_retry_max_s),
     SLURM_CEILING_RETRY_MIN_S, SLURM_CEILING_RETRY_MAX_S},
    {"release_wait_s", offsetof(SlurmIntervals, release_wait_s), SLURM_RELEASE_WAIT_MIN_S,
     SLURM_RELEASE_WAIT_MAX_S},
};
enum { N_INTERVALS = sizeof INTERVALS / sizeof INTERVALS[0] };

int slurm_intervals_from_json(const cJSON *root, const char *ctx, SlurmIntervals *out, Error *err)
{
    memset(out, 0, sizeof *out);
    Error none;
    memset(&none, 0, sizeof none);
    const cJSON *j = jfield_object(root, ctx, "slurm", 0, &none);
    if (!j)
        return none.msg[0] ? error_set(err, "%s", none.msg) : 0;
    char where[256];
    snprintf(where, sizeof where, "%s: slurm", ctx);
    const cJSON *f;
    cJSON_ArrayForEach(f, j)
    {
        size_t i = 0;
        while (i < N_INTERVALS && strcmp(f->string, INTERVALS[i].key) != 0)
            i++;
        if (i == N_INTERVALS)
            return error_set(err,
                             "%s: field '%s': unknown; expected command_timeout_s, job_round_s, "
                             "node_round_s, pending_say_s, exit_grace_s, ceiling_retry_s, "
                             "ceiling_retry_max_s or release_wait_s (seconds)",
                             where, f->string);
        double *v = (double *)((char *)out + INTERVALS[i].offset);
        if (jfield_number(j, where, f->string, 1, INTERVALS[i].min_s, INTERVALS[i].max_s, v, err) <
            0)
            return -1;
    }
    /* a most under the first hold would cut every hold to it: a slip, not a wish */
    if (out->ceiling_retry_s > 0 && out->ceiling_retry_max_s > 0 &&
        out->ceiling_retry_max_s < out->ceiling_retry_s)
        return error_set(err,
                         "%s: field 'ceiling_retry_max_s': expected at least ceiling_retry_s "
                         "(%g s, the first hold, which it caps as it doubles), found %g",
                         where, out->ceiling_retry_s, out->ceiling_retry_max_s);
    return 0;
}

int slurm_target_from_json(const cJSON *root, const char *source, SlurmTarget *t, Error *err)
{
    char backend[32] = "";
    if (inventory_refuse_secrets(root, source, err) < 0)
        return -1;
    if (jfield_string(root, source, "backend", 0, backend, sizeof backend, err) < 0)
        return -1;
    if (!backend[0] || strcmp(backend, "ssh") == 0)
        return 0;
    if (strcmp(backend, "slurm") != 0)
        return error_set(err, "%s: field 'backend': expected \"ssh\" or \"slurm\", found \"%s\"",
                         source, backend);
    /* An operator's node list written the SSH way would be dropped in silence, and the
     * session would take every node of the partition instead. */
    static const char *const not_here[] = {"machines", "machine_types"};
    for (size_t i = 0; i < sizeof not_here / sizeof *not_here; i++)
        if (cJSON_GetObjectItemCaseSensitive(root, not_here[i]))
            return error_set(err,
                             "%s: field '%s': a Slurm inventory takes its machines from the "
                             "controller (every usable node of its \"partition\"): expected no "
                             "'%s' with \"backend\": \"slurm\"",
                             source, not_here[i], not_here[i]);
    memset(t, 0, sizeof *t);
    t->bandwidth_gbps = 10;
    if (jfield_string(root, source, "login", 0, t->login, sizeof t->login, err) < 0 ||
        jfield_string(root, source, "partition", 0, t->partition, sizeof t->partition, err) < 0 ||
        jfield_number(root, source, "bandwidth_gbps", 0, 1e-6, 1e6, &t->bandwidth_gbps, err) < 0 ||
        parse_ssh(root, source, &t->ssh, err) < 0 ||
        slurm_intervals_from_json(root, source, &t->every, err) < 0)
        return -1;
    /* absent: every node the controller lists; an empty name would mean the same, unsaid */
    if (cJSON_GetObjectItemCaseSensitive(root, "partition") && !t->partition[0])
        return error_set(err, "%s: field 'partition': expected a partition name, found '' "
                              "(leave the field out for every partition)",
                         source);
    return 1;
}

SlurmCtl *slurm_target_ctl(const SlurmTarget *t, const char *ssh_config, int accept_new_host_keys,
                           Error *err)
{
    SlurmCtlOptions o = {.login = t->login,
                         .ssh = &t->ssh,
                         .ssh_config = ssh_config,
                         .accept_new_host_keys = accept_new_host_keys,
                         .timeout_s = t->every.command_timeout_s};
    return slurm_ctl_new(&o, err);
}

/* The controller's partitions, "a, b, c" (sinfo -a: hidden ones too), "" when it does not
 * say; at most cap - 1 bytes, cut at a whole name with ", ..." after. */
static void partition_names(SlurmCtl *c, char *out, size_t cap)
{
    const char *argv[] = {"sinfo", "-a", "-h", "-o", "%R", NULL};
    char *text = NULL;
    Error ignored;
    out[0] = 0;
    if (slurm_ctl_run(c, argv, &text, &ignored) != 0 || !text) {
        free(text);
        return;
    }
    size_t len = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!line[0] || strlen(line) > 64)
            continue;
        char shown[80];
        termsafe(shown, sizeof shown, line); /* names others chose reach the terminal */
        int n = snprintf(out + len, cap - len, "%s%s", len ? ", " : "", shown);
        if (n < 0 || (size_t)n + 6 >= cap - len) {
            snprintf(out + len, cap - len, ", ...");
            break;
        }
        len += (size_t)n;
    }
    free(text);
}

int slurm_query_nodes(SlurmCtl *c, const char *partition, SlurmNodes *out, Error *err)
{
    const char *argv[8] = {"sinfo", "-N", "-h", "-o", SLURM_SINFO_FORMAT, NULL, NULL, NULL};
    if (partition && partition[0]) {
        argv[5] = "-p";
        argv[6] = partition;
    }
    char *text = NULL;
    if (slurm_ctl_run(c, argv, &text, err) != 0)
        return -1;
    char source[96];
    snprintf(source, sizeof source, "sinfo on %s", slurm_ctl_where(c));
    int rc = slurm_nodes_parse(text, source, out, err);
    free(text);
    if (rc == 0 && out->n == 0) {
        if (!(partition && partition[0]))
            return error_set(err, "sinfo on %s: no nodes", slurm_ctl_where(c));
        /* The controller answered: the partition is not one of its own (a typo, another
         * cluster's name), which is the operator's to fix, so the error names the
         * partitions there are (it was a remote failure, exit 4, naming none). */
        char names[256] = "";
        partition_names(c, names, sizeof names);
        slurm_nodes_clear(out);
        error_set(err, "partition '%s': sinfo on %s lists no node in it%s%s%s", partition,
                  slurm_ctl_where(c), names[0] ? " (its partitions: " : "", names,
                  names[0] ? ")" : "");
        error_mark(err, ERROR_INPUT);
        return -1;
    }
    return rc;
}

/* The controller's nodes as an inventory object, then the file's own fields over it. */
static Cluster *from_nodes(const cJSON *root, const char *source, const SlurmTarget *t,
                           const SlurmNodes *all, Error *err)
{
    SlurmNodes usable = {calloc(all->n ? all->n : 1, sizeof *usable.v), 0};
    if (!usable.v)
        abort();
    for (size_t i = 0; i < all->n; i++)
        if (all->v[i].state != SLURM_NODE_DRAIN && all->v[i].state != SLURM_NODE_DOWN)
            usable.v[usable.n++] = all->v[i];
    char name[64] = "slurm";
    jfield_string(root, source, "name", 0, name, sizeof name, NULL);
    Cluster *built = usable.n ? slurm_nodes_cluster(&usable, name, t->bandwidth_gbps, err) : NULL;
    if (!usable.n)
        error_set(err, "%s: every node Slurm lists is drained or down", source);
    slurm_nodes_clear(&usable);
    if (!built)
        return NULL;
    cJSON *merged = cluster_to_json(built);
    cluster_free(built);
    cJSON *f;
    cJSON_ArrayForEach(f, root)
    {
        if (!strcmp(f->string, "machine_types") || !strcmp(f->string, "machines"))
            continue;
        if (!strcmp(f->string, "trial") && cJSON_IsObject(f)) {
            cJSON *trial = cJSON_Duplicate(f, 1);
            if (!cJSON_GetObjectItem(trial, "launch"))
                cJSON_AddStringToObject(trial, "launch", "slurm");
            cJSON_ReplaceItemInObject(merged, "trial", trial);
            continue;
        }
        cJSON_DeleteItemFromObject(merged, f->string);
        cJSON_AddItemToObject(merged, f->string, cJSON_Duplicate(f, 1));
    }
    Cluster *c = cluster_from_json(merged, source, err);
    cJSON_Delete(merged);
    return c;
}

Cluster *slurm_inventory_load(const cJSON *root, const char *source, const char *ssh_config,
                              int accept_new_host_keys, SlurmCtl **ctl, Error *err)
{
    if (ctl)
        *ctl = NULL;
    SlurmTarget t;
    int is = slurm_target_from_json(root, source, &t, err);
    if (is < 0) {
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    if (!is)
        return cluster_from_json(root, source, err);
    SlurmCtl *c = slurm_target_ctl(&t, ssh_config, accept_new_host_keys, err);
    if (!c) {
        error_mark(err, ERROR_REMOTE);
        return NULL;
    }
    SlurmNodes nodes;
    Cluster *cl = NULL;
    if (slurm_query_nodes(c, t.partition, &nodes, err) == 0) {
        cl = from_nodes(root, source, &t, &nodes, err);
        slurm_nodes_clear(&nodes);
    } else {
        error_prefix(err, "%s", source);
        /* the controller or the login node did not answer; a partition it does not have
         * stays the file's (bad input) */
        if (err->kind != ERROR_INPUT)
            error_mark(err, ERROR_REMOTE);
    }
    if (cl && ctl)
        *ctl = c;
    else
        slurm_ctl_free(c);
    return cl;
}

Cluster *slurm_inventory_load_file(const char *path, const char *ssh_config,
                                   int accept_new_host_keys, SlurmCtl **ctl, Error *err)
{
    cJSON *root = jfield_parse_file(path, err);
    if (!root) {
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    Cluster *c = slurm_inventory_load(root, path, ssh_config, accept_new_host_keys, ctl, err);
    cJSON_Delete(root);
    return c;
}

int slurm_inventory_is_slurm_file(const char *path)
{
    Error err;
    cJSON *root = jfield_parse_file(path, &err);
    const cJSON *b = root ? cJSON_GetObjectItemCaseSensitive(root, "backend") : NULL;
    int is = cJSON_IsString(b) && strcmp(b->valuestring, "slurm") == 0;
    cJSON_Delete(root);
    return is;
}
