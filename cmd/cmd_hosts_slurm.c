/* `tunedeck hosts --slurm`: the nodes Slurm's controller lists (state, CPUs, memory, GPUs,
 * features, partitions, reason) and the machine types a session would build from them;
 * --watch keeps polling with back-off and prints the table again whenever it changes. */
#include <cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/hosts_slurm.h"
#include "cmd/table_row.h"
#include "core/base/clock.h"
#include "core/base/exitcode.h"
#include "core/base/jfield.h"
#include "core/base/jsonprint.h"
#include "core/base/plural.h"
#include "core/model/cluster.h"
#include "remote/slurm/slurm_inventory.h"
#include "remote/slurm/slurm_watch.h"

static volatile sig_atomic_t stop_watching;

static void on_signal(int sig)
{
    (void)sig;
    stop_watching = 1;
}

/* The machine type the inventory gives the node (slurm_node_shape); "?" when too long for
 * one (the inventory refuses that node). */
static void shape(const SlurmNode *n, char *out, size_t cap)
{
    if (slurm_node_shape(n, out, cap) < 0)
        snprintf(out, cap, "?");
}

static cJSON *nodes_json(const SlurmNodes *ns)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < ns->n; i++) {
        const SlurmNode *n = &ns->v[i];
        char type[64];
        shape(n, type, sizeof type);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "state", slurm_node_state_name(n->state));
        cJSON_AddStringToObject(o, "slurm_state", n->state_raw);
        cJSON_AddNumberToObject(o, "cpus", n->cpus);
        cJSON_AddNumberToObject(o, "cpus_alloc", n->cpus_alloc);
        cJSON_AddNumberToObject(o, "memory_mb", (double)n->mem_mb);
        cJSON_AddStringToObject(o, "gpu_type", n->gpu_type);
        cJSON_AddNumberToObject(o, "gpus", n->gpus);
        /* each type's count: gpu_type ("t4,v100") and gpus (their total) say neither how
         * many of each a mixed node has; kept as they were for the readers that use them */
        cJSON *kinds = cJSON_AddArrayToObject(o, "gpu_types");
        for (int k = 0; kinds && k < n->n_gpu_kinds; k++) {
            cJSON *kind = cJSON_CreateObject();
            cJSON_AddStringToObject(kind, "type", n->gpu_kinds[k].type);
            cJSON_AddNumberToObject(kind, "count", n->gpu_kinds[k].count);
            cJSON_AddItemToArray(kinds, kind);
        }
        cJSON_AddStringToObject(o, "features", n->features);
        cJSON_AddStringToObject(o, "partitions", n->partitions);
        cJSON_AddStringToObject(o, "machine_type", type);
        cJSON_AddStringToObject(o, "reason", n->reason);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void print_table(const SlurmNodes *ns, const SlurmQueue *q)
{
    table_row(stdout, "%-12s %-6s %-9s %8s %-10s %-12s %-14s %-22s %s", "node", "state", "cpus",
              "mem_mb", "gpus", "features", "partitions", "machine type", "reason");
    for (size_t i = 0; i < ns->n; i++) {
        const SlurmNode *n = &ns->v[i];
        char cpus[32], gpus[48], type[64];
        snprintf(cpus, sizeof cpus, "%d/%d", n->cpus_alloc, n->cpus);
        slurm_node_gpus_label(n, gpus, sizeof gpus);
        shape(n, type, sizeof type);
        table_row(stdout, "%-12s %-6s %-9s %8ld %-10s %-12s %-14s %-22s %s", n->name,
                  slurm_node_state_name(n->state), cpus, n->mem_mb, gpus,
                  n->features[0] ? n->features : "-", n->partitions, type, n->reason);
    }
    if (!q)
        return;
    table_row(stdout, "\n%-10s %-10s %-9s %5s %-16s %-14s %s", "job", "user", "state", "nodes",
              "gres", "nodelist", "reason / name");
    for (size_t i = 0; i < q->n; i++) {
        const SlurmQueueJob *j = &q->v[i];
        int pending = strcmp(j->state, "PENDING") == 0;
        table_row(stdout, "%-10s %-10s %-9s %5d %-16s %-14s %s", j->id, j->user, j->state, j->nodes,
                  j->gres, j->nodelist[0] ? j->nodelist : "-", pending ? j->reason : j->name);
    }
}

static int watch(SlurmCtl *ctl, const char *partition, double max_s, double for_s)
{
    SlurmWatch *w = slurm_watch_new(ctl, partition, 2, max_s);
    if (!w) {
        fprintf(stderr, "tunedeck hosts: out of memory\n");
        return EXIT_FAILED;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int64_t end = for_s > 0 ? clock_now_ms() + (int64_t)(for_s * 1000) : -1;
    int rc = 0;
    while (!stop_watching && (end < 0 || clock_now_ms() < end)) {
        Error err;
        int64_t now = clock_now_ms();
        int r = slurm_watch_poll(w, now, &err);
        time_t t = time(NULL);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%H:%M:%S", localtime(&t));
        if (r < 0 && slurm_ctl_last_unusable(ctl)) {
            /* Slurm's commands cannot run here (or there): no round will answer. It was
             * "the controller did not answer", retried until Ctrl-C. */
            fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
            rc = EXIT_REMOTE;
            break;
        }
        if (r < 0) {
            printf("[%s] the controller did not answer (%s); retrying in %.0f s\n", stamp,
                   err.msg, slurm_watch_interval_s(w));
            rc = EXIT_REMOTE; /* until a round succeeds again */
        } else {
            rc = EXIT_OK;
        }
        if (r > 0) {
            size_t nodes = slurm_watch_nodes(w)->n, jobs = slurm_watch_queue(w)->n;
            printf("[%s] %zu node%s, %zu job%s (controller calls so far: %ld)\n", stamp, nodes,
                   plural_s((long long)nodes), jobs, plural_s((long long)jobs),
                   slurm_ctl_calls(ctl));
            print_table(slurm_watch_nodes(w), slurm_watch_queue(w));
            putchar('\n');
        }
        fflush(stdout);
        int64_t due = slurm_watch_due_ms(w);
        if (end >= 0 && due > end)
            due = end;
        int64_t wait = due - clock_now_ms();
        if (wait > 0) {
            struct timespec ts = {wait / 1000, (wait % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    long calls = slurm_ctl_calls(ctl);
    printf("watched: %ld controller call%s\n", calls, plural_s(calls));
    printf("rounds: %ld (%ld with the node table)\n", slurm_watch_rounds(w),
           slurm_watch_node_tables(w));
    printf("read: %lld bytes of answers\n", slurm_ctl_bytes_read(ctl));
    slurm_watch_free(w);
    return rc;
}

int hosts_slurm(const HostsSlurmArgs *a)
{
    Error err;
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    snprintf(t.partition, sizeof t.partition, "%s", a->partition ? a->partition : "");
    snprintf(t.login, sizeof t.login, "%s", a->login ? a->login : "");
    if (a->inventory) {
        cJSON *root = jfield_parse_file(a->inventory, &err);
        char warning[ERROR_MSG_MAX];
        if (root && inventory_misspelt_warning(root, a->inventory, warning, sizeof warning))
            fprintf(stderr, "tunedeck hosts: %s\n", warning);
        int is = root ? slurm_target_from_json(root, a->inventory, &t, &err) : -1;
        cJSON_Delete(root);
        if (is <= 0) {
            if (is == 0)
                error_set(&err, "%s: expected \"backend\": \"slurm\"", a->inventory);
            fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
            return EXIT_BAD_INPUT;
        }
        if (a->partition)
            snprintf(t.partition, sizeof t.partition, "%s", a->partition);
    }
    SlurmCtl *ctl = slurm_target_ctl(&t, getenv("TUNEDECK_SSH_CONFIG"), a->accept, &err);
    if (!ctl) {
        fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
        return EXIT_REMOTE;
    }
    if (a->watch) {
        int rc = watch(ctl, t.partition, a->max_interval_s, a->watch_for_s);
        slurm_ctl_free(ctl);
        return rc;
    }
    SlurmNodes nodes;
    if (slurm_query_nodes(ctl, t.partition, &nodes, &err) < 0) {
        if (a->inventory && err.kind == ERROR_INPUT && !a->partition)
            error_prefix(&err, "%s", a->inventory); /* its "partition" field */
        fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
        slurm_ctl_free(ctl);
        return exitcode_for(&err, EXIT_REMOTE); /* a partition it has not: bad input */
    }
    int unusable = 0;
    for (size_t i = 0; i < nodes.n; i++)
        unusable += nodes.v[i].state == SLURM_NODE_DOWN || nodes.v[i].state == SLURM_NODE_DRAIN;
    if (a->json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "backend", "slurm");
        cJSON_AddStringToObject(root, "where", slurm_ctl_where(ctl));
        cJSON_AddStringToObject(root, "partition", t.partition);
        cJSON_AddItemToObject(root, "nodes", nodes_json(&nodes));
        char *text = jsonprint_text(root, 1);
        puts(text);
        free(text);
        cJSON_Delete(root);
    } else {
        print_table(&nodes, NULL);
    }
    slurm_nodes_clear(&nodes);
    slurm_ctl_free(ctl);
    return unusable ? EXIT_FAILED : EXIT_OK;
}
