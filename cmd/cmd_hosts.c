/* `tunedeck hosts --cluster FILE`: every host of an inventory checked in parallel —
 * reachability, handshake latency, host-key status, GPUs seen, last error. */
#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/table_row.h"
#include "core/base/jsonprint.h"
#include "core/base/termsafe.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/gpu_errors.h"
#include "cmd/hosts_slurm.h"
#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/jfield.h"
#include "core/base/exitcode.h"
#include "core/model/cluster.h"
#include "remote/gpu/gpuwatch.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tunedeck hosts --cluster FILE [--json] [--accept-new-host-keys]\n"
                 "                      [--gpu-wait S]\n"
                 "Connects to every host of the inventory at once and reports reachability,\n"
                 "handshake latency, host-key status (with the SHA256 fingerprint), the GPUs\n"
                 "nvidia-smi reports and the last error. Exit status 4 when a host is down.\n"
                 "  --accept-new-host-keys  add unknown host keys to known_hosts (a changed key\n"
                 "                          is always refused)\n"
                 "  --gpu-wait S            how long to wait for GPU state (default 3)\n"
                 "  TUNEDECK_SSH_CONFIG     an ssh_config file to read instead of ~/.ssh/config\n"
                 "                          and /etc/ssh/ssh_config\n"
                 "\n"
                 "usage: tunedeck hosts --slurm [--partition P] [--login HOST] [--json]\n"
                 "                      [--watch [--watch-for S] [--max-interval S]]\n"
                 "Lists the nodes Slurm's controller knows (state, CPUs, memory, GPUs, features,\n"
                 "partitions) and the machine type each becomes; the commands run here, or on\n"
                 "the login HOST over SSH. An inventory with \"backend\": \"slurm\" given to\n"
                 "--cluster does the same. --watch polls with back-off (never more than one\n"
                 "controller call a second, up to --max-interval S between calls while nothing\n"
                 "changes) and prints the table when it changes, for --watch-for S or until\n"
                 "Ctrl-C. Exit status 1 when a node is drained or down, 3 when the partition\n"
                 "is not one the controller has, 4 when the controller or login node does not\n"
                 "answer.\n");
}

typedef struct {
    HostPool *pool;
    GpuWatch *watch;
} GpuWait;

static int every_ready_host_answered(void *ctx)
{
    const GpuWait *g = ctx;
    for (size_t i = 0; i < hostpool_size(g->pool); i++) {
        HostInfo hi;
        hostpool_info(g->pool, i, &hi);
        if (hi.state == HOST_READY && !gpuwatch_answered(g->watch, i))
            return 0;
    }
    return 1;
}

static cJSON *num_or_null(double v, int known)
{
    return known ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *host_json(HostPool *p, GpuWatch *w, size_t i)
{
    HostInfo hi;
    hostpool_info(p, i, &hi);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", hi.name);
    cJSON_AddStringToObject(j, "host", hi.host);
    cJSON_AddBoolToObject(j, "reachable", hi.state == HOST_READY);
    cJSON_AddStringToObject(j, "state", hostpool_state_name(hi.state));
    cJSON_AddItemToObject(j, "handshake_ms", num_or_null(hi.handshake_ms, hi.handshake_ms >= 0));
    cJSON_AddStringToObject(j, "host_key", hostpool_key_name(hi.key));
    cJSON_AddStringToObject(j, "fingerprint", hi.fingerprint);
    const char *why = "";
    GpuHostState gs = hi.state == HOST_READY ? gpuwatch_state(w, i, &why) : GPUHOST_ERROR;
    const GpuSample *g;
    size_t n = hi.state == HOST_READY ? gpuwatch_gpus(w, i, &g) : 0;
    cJSON_AddStringToObject(j, "gpu_state",
                            hi.state == HOST_READY ? gpuwatch_state_name(gs) : "unknown");
    cJSON_AddItemToObject(j, "gpus", num_or_null((double)n, gs == GPUHOST_OK));
    /* A GPU in error is listed (counted in gpus) so that it is seen, never as one to use. */
    size_t in_error = 0;
    for (size_t k = 0; k < n; k++)
        in_error += g[k].error[0] != 0;
    cJSON_AddNumberToObject(j, "gpus_in_error", (double)in_error);
    cJSON *list = cJSON_AddArrayToObject(j, "gpu_list");
    for (size_t k = 0; k < n; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "index", num_or_null(g[k].index, g[k].index >= 0));
        cJSON_AddItemToObject(o, "error", g[k].error[0] ? cJSON_CreateString(g[k].error)
                                                        : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "uuid", g[k].uuid);
        cJSON_AddStringToObject(o, "name", g[k].name);
        cJSON_AddItemToObject(o, "util_pct", num_or_null(g[k].util_pct, g[k].has_util));
        cJSON_AddItemToObject(o, "mem_used_mib", num_or_null(g[k].mem_used_mib, g[k].has_mem_used));
        cJSON_AddItemToObject(o, "mem_total_mib",
                              num_or_null(g[k].mem_total_mib, g[k].has_mem_total));
        cJSON_AddItemToArray(list, o);
    }
    const GpuProc *pr;
    size_t np = hi.state == HOST_READY ? gpuwatch_procs(w, i, &pr) : 0;
    cJSON *procs = cJSON_AddArrayToObject(j, "gpu_processes");
    for (size_t k = 0; k < np; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", (double)pr[k].proc.pid);
        /* null too for a GPU in error whose index did not read (its uuid did) */
        int gi = pr[k].gpu >= 0 ? g[pr[k].gpu].index : -1;
        cJSON_AddItemToObject(o, "gpu_index", num_or_null(gi, gi >= 0));
        cJSON_AddItemToObject(o, "used_mib", num_or_null(pr[k].proc.used_mib, pr[k].proc.has_used));
        cJSON_AddItemToObject(o, "pgid", num_or_null((double)pr[k].pgid, pr[k].pgid > 0));
        cJSON_AddItemToArray(procs, o);
    }
    const char *err = hi.last_error[0] ? hi.last_error : (gs == GPUHOST_ERROR ? why : "");
    cJSON_AddStringToObject(j, "last_error", err);
    cJSON_AddStringToObject(j, "warning", hi.warning);
    return j;
}

int cmd_hosts(int argc, char **argv)
{
    static const struct option LONG[] = {{"cluster", required_argument, 0, 'c'},
                                         {"json", no_argument, 0, 'J'},
                                         {"accept-new-host-keys", no_argument, 0, 'A'},
                                         {"gpu-wait", required_argument, 0, 'g'},
                                         {"slurm", no_argument, 0, 'S'},
                                         {"partition", required_argument, 0, 'p'},
                                         {"login", required_argument, 0, 'l'},
                                         {"watch", no_argument, 0, 'w'},
                                         {"watch-for", required_argument, 0, 'f'},
                                         {"max-interval", required_argument, 0, 'm'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *path = NULL;
    int json = 0, accept = 0, c;
    double gpu_wait_s = 3;
    int slurm = 0, watch_timing = 0; /* --watch-for or --max-interval given */
    HostsSlurmArgs sa = {.max_interval_s = 30};
    optind = 1;
    opterr = 0;
    while ((c = flags_getopt("hosts", argc, argv, LONG, NULL)) != -1) {
        switch (c) {
        case 'c':
            path = optarg;
            break;
        case 'J':
            json = 1;
            break;
        case 'A':
            accept = 1;
            break;
        case 'g':
            if (flags_double("hosts", "--gpu-wait", optarg, 0, 600, &gpu_wait_s) < 0)
                return EXIT_USAGE;
            break;
        case 'S':
            slurm = 1;
            break;
        case 'p':
            if (flags_name("hosts", "--partition", optarg, "a partition name") < 0)
                return EXIT_USAGE;
            sa.partition = optarg;
            break;
        case 'l':
            sa.login = optarg;
            break;
        case 'w':
            sa.watch = 1;
            break;
        case 'f':
            if (flags_double("hosts", "--watch-for", optarg, 0, 1e7, &sa.watch_for_s) < 0)
                return EXIT_USAGE;
            watch_timing = 1;
            break;
        case 'm':
            if (flags_double("hosts", "--max-interval", optarg, 2, 3600, &sa.max_interval_s) < 0)
                return EXIT_USAGE;
            watch_timing = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return EXIT_USAGE; /* flags_getopt said why */
        }
    }
    if ((!path && !slurm) || optind < argc) {
        fprintf(stderr, "tunedeck hosts: expected --cluster FILE or --slurm (try --help)\n");
        return EXIT_USAGE;
    }
    if (watch_timing && !sa.watch) {
        fprintf(stderr, "tunedeck hosts: --watch-for and --max-interval: expected --watch with "
                        "them\n");
        return EXIT_USAGE;
    }
    sa.json = json;
    sa.accept = accept;
    Error err;
    if (!slurm) {
        /* An inventory that cannot be read is said so here: with --watch or --partition it
         * would otherwise be taken for a plain one, and the refusal of those flags would
         * hide that the file is missing or malformed (a bad input file, as cluster_load says). */
        cJSON *root = jfield_parse_file(path, &err);
        if (!root) {
            fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
            return EXIT_BAD_INPUT;
        }
        const cJSON *b = cJSON_GetObjectItem(root, "backend");
        slurm = cJSON_IsString(b) && strcmp(b->valuestring, "slurm") == 0;
        cJSON_Delete(root);
    }
    if (slurm) {
        sa.inventory = path;
        return hosts_slurm(&sa);
    }
    if (sa.partition || sa.login || sa.watch) {
        fprintf(stderr, "tunedeck hosts: --partition, --login and --watch are for Slurm "
                        "(--slurm, or an inventory with \"backend\": \"slurm\")\n");
        return EXIT_USAGE;
    }
    Cluster *cl = cluster_load(path, &err);
    if (!cl) {
        fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
        return exitcode_for(&err, EXIT_USAGE);
    }
    char warning[ERROR_MSG_MAX];
    if (inventory_misspelt_warning(cl->extra, path, warning, sizeof warning))
        fprintf(stderr, "tunedeck hosts: %s\n", warning);
    HostPoolOptions po = {.accept_new_host_keys = accept,
                          .ssh_config = getenv("TUNEDECK_SSH_CONFIG")};
    HostPool *p = hostpool_new(&po, &err);
    if (!p || hostpool_add_cluster(p, cl, &err) < 0) {
        if (p) /* a machine's settings: the file they are in */
            error_prefix(&err, "%s", path);
        fprintf(stderr, "tunedeck hosts: %s\n", err.msg);
        hostpool_free(p);
        cluster_free(cl);
        return exitcode_for(&err, EXIT_USAGE);
    }
    size_t n = hostpool_size(p);
    for (size_t i = 0; i < n; i++)
        hostpool_connect(p, i, 0);
    double timeout_s = cl->ssh.connect_timeout_s > 0 ? cl->ssh.connect_timeout_s : 5;
    hostpool_run_until_settled(p, clock_now_ms() + (int64_t)(timeout_s * 1000) + 1000);
    GpuWatch *w = gpuwatch_new(p, 0.5);
    EvLoop *loop = evloop_new();
    GpuWait gw = {p, w};
    if (!w || !loop || hostpool_attach(p, loop) < 0 ||
        gpuwatch_attach(w, loop) < 0) {
        fprintf(stderr, "tunedeck hosts: out of memory\n");
        evloop_free(loop);
        gpuwatch_free(w);
        hostpool_free(p);
        cluster_free(cl);
        return EXIT_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        HostInfo hi;
        hostpool_info(p, i, &hi);
        if (hi.state == HOST_READY)
            gpuwatch_add_host(w, i);
    }
    /* GPU state: until every ready host answered (GPUs and a process round), or the wait. */
    evloop_run(loop, every_ready_host_answered, &gw, clock_now_ms() + (int64_t)(gpu_wait_s * 1000));
    evloop_free(loop);
    int down = 0;
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, host_json(p, w, i));
        HostInfo hi;
        hostpool_info(p, i, &hi);
        down += hi.state != HOST_READY;
    }
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "cluster", cl->name);
        cJSON_AddItemToObject(root, "hosts", arr);
        char *text = jsonprint_text(root, 1);
        puts(text);
        free(text);
        cJSON_Delete(root);
    } else {
        table_row(stdout, "%-16s %-18s %-6s %9s %-9s %-12s %s", "machine", "host", "state",
                  "handshake", "host key", "gpus", "fingerprint / last error");
        cJSON *h;
        cJSON_ArrayForEach(h, arr)
        {
            const cJSON *hs = cJSON_GetObjectItem(h, "handshake_ms");
            const cJSON *g = cJSON_GetObjectItem(h, "gpus");
            char lat[32] = "-", gpus[32];
            if (cJSON_IsNumber(hs))
                snprintf(lat, sizeof lat, "%.0f ms", hs->valuedouble);
            int in_error = cJSON_GetObjectItem(h, "gpus_in_error")->valueint;
            if (cJSON_IsNumber(g) && in_error)
                snprintf(gpus, sizeof gpus, "%d, %d error", g->valueint, in_error);
            else if (cJSON_IsNumber(g))
                snprintf(gpus, sizeof gpus, "%d", g->valueint);
            else
                snprintf(gpus, sizeof gpus, "%s", cJSON_GetObjectItem(h, "gpu_state")->valuestring);
            const char *le = cJSON_GetObjectItem(h, "last_error")->valuestring;
            char gpu_errors[2048];
            if (!le[0] && cJSON_IsNumber(g) && in_error)
                le = gpu_errors_text(cJSON_GetObjectItem(h, "gpu_list"), gpu_errors,
                                     sizeof gpu_errors);
            /* A host's messages (its disconnect text, nvidia-smi's output) are outside
             * text: never a terminal's controls. */
            char name[256], host[512], gpu[128];
            termsafe(name, sizeof name, cJSON_GetObjectItem(h, "name")->valuestring);
            termsafe(host, sizeof host, cJSON_GetObjectItem(h, "host")->valuestring);
            termsafe(gpu, sizeof gpu, gpus);
            /* Whole: a failed login's last words (what was denied, the fix) come after the
             * agent's, which may be long. */
            char *note =
                termsafe_dup(le[0] ? le : cJSON_GetObjectItem(h, "fingerprint")->valuestring);
            table_row(stdout, "%-16s %-18s %-6s %9s %-9s %-12s %s", name, host,
                      cJSON_IsTrue(cJSON_GetObjectItem(h, "reachable")) ? "up" : "down", lat,
                      cJSON_GetObjectItem(h, "host_key")->valuestring, gpu,
                      note ? note : "(out of memory)");
            free(note);
        }
        cJSON_Delete(arr);
    }
    gpuwatch_free(w);
    hostpool_free(p);
    cluster_free(cl);
    return down ? EXIT_REMOTE : EXIT_OK;
}
