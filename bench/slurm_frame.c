/* What watching a long Slurm partition costs tunedeck itself (issue 12: "the console frame
 * stays within the existing budget"), per round and per frame, at 4, 64 and 1,024 nodes:
 *
 * - a round: parsing sinfo's answer (slurm_nodes_parse, one line per node and partition, as
 *   `sinfo -N -o SLURM_SINFO_FORMAT` prints it) and squeue's (slurm_queue_parse), against
 *   the 4-node round measured in the same run;
 * - a frame: the cluster view with one machine per Slurm node (8 GPUs each, a job on most,
 *   as bench/console does), diffed as the console draws it, against a bare ncurses
 *   full-screen refresh measured in the same run and against the console's frame budget
 *   (a frame at most every 33 ms, tui/console_loop.c);
 * - the Slurm panel's frame (frame_slurm_panel): the hosts view on a Slurm cluster
 *   (tui/view_slurm.c), against the same bare refresh and budget.
 *
 * The answers are synthetic but shaped as Slurm 22.05 prints them (tests/fixtures/slurm):
 * a quarter of the nodes in a second partition (two lines each), every state, reasons. */
#include <cJSON.h>
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args/benchargs.h"
#include "bench/frame/benchframe.h"
#include "core/base/clock.h"
#include "core/base/median.h"
#include "core/base/jsonfile.h"
#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_queue.h"
#include "tui/layout.h"
#include "tui/snapshot.h"
#include "tui/view.h"

enum { COLS_B = 200, ROWS_B = 60, FRAMES = 150, ROUNDS = 41 };

static const double FRAME_BUDGET_MS = 33.0; /* tui/console_loop.c: a frame at most every 33 ms */

typedef struct {
    char *buf;
    size_t len, cap;
} Text;

static void text_printf(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(Text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (t->buf && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
        if (!t->buf)
            abort();
        t->buf[t->len] = 0;
    }
}

/* `sinfo -N -h -o SLURM_SINFO_FORMAT` for n nodes g0001..: a 64-CPU, 8-GPU shape and a
 * 32-CPU, 4-GPU one; states mostly mixed and allocated, some idle, drained and down with
 * reasons; every fourth node also in partition "debug", which sinfo prints as a second line. */
static char *sinfo_text(size_t n)
{
    static const char *const STATES[] = {"mixed", "allocated", "allocated", "mixed", "idle",
                                         "mixed", "allocated", "drained",   "mixed", "down*"};
    Text t = {0};
    for (size_t i = 0; i < n; i++) {
        int big = i % 3 != 0;
        const char *st = STATES[i % 10];
        int cpus = big ? 64 : 32, alloc = strcmp(st, "allocated") == 0 ? cpus
                                          : strcmp(st, "mixed") == 0   ? cpus / 2
                                                                       : 0;
        const char *reason = strcmp(st, "drained") == 0 ? "bad DIMM, ticket 4121"
                             : strcmp(st, "down*") == 0 ? "Not responding"
                                                        : "none";
        for (int part = 0; part < (i % 4 == 0 ? 2 : 1); part++)
            text_printf(&t, "g%04zu|%d|%d|%s|%s|%s|%s|%d/%d/0/%d|10.1.%zu.%zu|%s\n", i + 1, cpus,
                        big ? 512000 : 256000, big ? "gpu:a100:8(S:0-1)" : "gpu:v100:4(S:0)", st,
                        big ? "a100,ib" : "v100", part ? "debug" : "gpu*", alloc, cpus - alloc,
                        cpus, (i + 1) / 256, (i + 1) % 256, reason);
    }
    return t.buf;
}

/* `squeue -h -o SLURM_SQUEUE_FORMAT`: a job per four nodes, one in four pending. */
static char *squeue_text(size_t n)
{
    Text t = {0};
    text_printf(&t, "%s", "");
    for (size_t j = 0; j < n / 4 + 1; j++) {
        if (j % 4 == 3)
            text_printf(&t, "%zu|user%zu|PENDING|4|gres:gpu:a100:8||Resources|sweep-%zu\n",
                        40000 + j, j % 17, j);
        else
            text_printf(&t, "%zu|user%zu|RUNNING|4|gres:gpu:a100:8|g[%04zu-%04zu]|None|train|%zu\n",
                        40000 + j, j % 17, 4 * j + 1, 4 * j + 4, j);
    }
    return t.buf;
}

typedef struct {
    double nodes_ms, queue_ms;
    size_t bytes, nodes, jobs;
} RoundCost;

/* One round's parsing, median over ROUNDS. */
static int round_cost(size_t n, RoundCost *rc)
{
    char *st = sinfo_text(n), *qt = squeue_text(n);
    double tn[ROUNDS], tq[ROUNDS];
    Error err;
    for (int k = 0; k < ROUNDS; k++) {
        SlurmNodes nodes;
        SlurmQueue queue;
        double t0 = benchframe_now_ms();
        if (slurm_nodes_parse(st, "sinfo", &nodes, &err) < 0) {
            fprintf(stderr, "bench slurm_frame: %s\n", err.msg);
            return -1;
        }
        double t1 = benchframe_now_ms();
        if (slurm_queue_parse(qt, "squeue", &queue, &err) < 0) {
            fprintf(stderr, "bench slurm_frame: %s\n", err.msg);
            return -1;
        }
        tn[k] = t1 - t0;
        tq[k] = benchframe_now_ms() - t1;
        rc->nodes = nodes.n;
        rc->jobs = queue.n;
        slurm_nodes_clear(&nodes);
        slurm_queue_clear(&queue);
    }
    rc->nodes_ms = median_sorting(tn, ROUNDS);
    rc->queue_ms = median_sorting(tq, ROUNDS);
    rc->bytes = strlen(st) + strlen(qt);
    free(st);
    free(qt);
    return 0;
}

/* The cluster view's snapshot as the console would fill it from the watch: a machine per
 * node with its GPUs, each GPU held by one of the queue's running jobs or free. */
static void snapshot_from_slurm(const SlurmNodes *nodes, const SlurmQueue *queue,
                                ClusterSnapshot *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->source, sizeof s->source, "slurm (synthetic, %zu nodes)", nodes->n);
    s->hosts = calloc(nodes->n, sizeof *s->hosts);
    s->jobs = calloc(queue->n ? queue->n : 1, sizeof *s->jobs);
    if (!s->hosts || !s->jobs)
        abort();
    s->n_hosts = nodes->n;
    s->n_jobs = queue->n;
    for (size_t j = 0; j < queue->n; j++) {
        JobRow *r = &s->jobs[j];
        snprintf(r->name, sizeof r->name, "%s", queue->v[j].name);
        snprintf(r->state_name, sizeof r->state_name, "%s",
                 strcmp(queue->v[j].state, "PENDING") == 0 ? "pending" : "running");
        r->state = -1;
        r->gpus = queue->v[j].nodes * 8;
        r->progress = NAN;
        r->eta_s = NAN;
    }
    for (size_t i = 0; i < nodes->n; i++) {
        const SlurmNode *n = &nodes->v[i];
        HostLoad *h = &s->hosts[i];
        snprintf(h->name, sizeof h->name, "%s", n->name);
        h->cpu = n->cpus ? (double)n->cpus_alloc / n->cpus : NAN;
        h->gpu = h->mem = h->share = NAN;
        h->n_gpus = n->gpus < SNAP_MAX_GPUS ? n->gpus : SNAP_MAX_GPUS;
        for (int g = 0; g < h->n_gpus; g++)
            h->gpu_job[g] = n->cpus_alloc && queue->n ? (short)((i / 4) % queue->n) : -1;
    }
}

/* A little changes between frames, as on a live cluster: a few nodes' CPU share. */
static void churn(ClusterSnapshot *s, int k)
{
    for (size_t i = (size_t)k % 7; i < s->n_hosts; i += 50)
        s->hosts[i].cpu = fmod(s->hosts[i].cpu + 0.13, 1.0);
}

static double frame_cluster(BenchScreen *bs, ClusterSnapshot *s, int k, long *bytes)
{
    churn(s, k);
    return benchframe_cluster(bs, s, 0, bytes);
}

/* The console's Slurm panel (tui/view_slurm.c): one frame of the hosts view on a Slurm
 * cluster, drawn from the round's nodes and queue as the console draws it, in ms; the
 * selection moves a row a frame (what changes between two frames when nothing else does). */
static double frame_slurm_panel(const SlurmNodes *nodes, const SlurmQueue *queue, int k)
{
    SlurmPanel p = {.nodes = nodes, .queue = queue, .interval_s = 2, .calls = 2, .rounds = 1};
    snprintf(p.where, sizeof p.where, "here");
    slurm_panel_count(&p); /* once per round in the console, outside its frames */
    double t0 = benchframe_now_ms();
    erase();
    Layout l;
    layout_compute(COLS, LINES, VIEW_HOSTS, LAYOUT_SLURM, &l);
    Rect none = {0, 0, 0, 0};
    view_slurm_draw(&p, l.shown[PANE_HOSTS] ? l.rect[PANE_HOSTS] : none,
                    l.shown[PANE_QUEUE] ? l.rect[PANE_QUEUE] : none,
                    nodes->n ? (size_t)k % nodes->n : 0, clock_now_ms());
    wnoutrefresh(stdscr);
    doupdate();
    return benchframe_now_ms() - t0;
}

int main(int argc, char **argv)
{
    const char *out_path;
    int args = benchframe_args(argc, argv, "slurm_frame", &out_path);
    if (args != 0)
        return args < 0 ? 2 : 0;
    if (benchargs_out_writable("slurm_frame", out_path) < 0)
        return 2;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "bench", "slurm_frame");
    cJSON_AddNumberToObject(root, "frame_budget_ms", FRAME_BUDGET_MS);

    static const size_t SIZES[] = {4, 64, 1024};
    enum { N_SIZES = 3 };
    RoundCost rounds[N_SIZES];
    cJSON *jr = cJSON_AddArrayToObject(root, "rounds");
    printf("a watch round's parsing (median of %d), against the 4-node round:\n", ROUNDS);
    for (int s = 0; s < N_SIZES; s++) {
        if (round_cost(SIZES[s], &rounds[s]) < 0)
            return 1;
        double total = rounds[s].nodes_ms + rounds[s].queue_ms,
               base = rounds[0].nodes_ms + rounds[0].queue_ms;
        printf("  %4zu nodes, %3zu jobs, %6zu bytes: sinfo %.3f ms + squeue %.3f ms = %.3f ms "
               "(%.0fx the 4-node round; %.4f of a 2 s round interval)\n",
               rounds[s].nodes, rounds[s].jobs, rounds[s].bytes, rounds[s].nodes_ms,
               rounds[s].queue_ms, total, total / base, total / 2000.0);
        cJSON *v = cJSON_CreateObject();
        cJSON_AddNumberToObject(v, "nodes", (double)rounds[s].nodes);
        cJSON_AddNumberToObject(v, "jobs", (double)rounds[s].jobs);
        cJSON_AddNumberToObject(v, "bytes", (double)rounds[s].bytes);
        cJSON_AddNumberToObject(v, "sinfo_parse_ms", rounds[s].nodes_ms);
        cJSON_AddNumberToObject(v, "squeue_parse_ms", rounds[s].queue_ms);
        cJSON_AddNumberToObject(v, "vs_4_nodes", total / base);
        cJSON_AddItemToArray(jr, v);
    }

    BenchScreen bs;
    if (benchframe_open(&bs, ROWS_B, COLS_B, "slurm_frame") < 0)
        return 1;
    double t[FRAMES];
    for (int k = 0; k < FRAMES; k++)
        t[k] = benchframe_bare(&bs, k, NULL);
    double bare = median_sorting(t, FRAMES);
    cJSON_AddNumberToObject(root, "bare_full_refresh_ms", bare);
    printf("frames on a %dx%d screen (median of %d), against a bare ncurses full refresh "
           "(%.3f ms) and the %.0f ms frame budget:\n",
           COLS_B, ROWS_B, FRAMES, bare, FRAME_BUDGET_MS);
    cJSON *jf = cJSON_AddArrayToObject(root, "frames");
    for (int s = 0; s < N_SIZES; s++) {
        char *st = sinfo_text(SIZES[s]), *qt = squeue_text(SIZES[s]);
        SlurmNodes nodes;
        SlurmQueue queue;
        Error err;
        if (slurm_nodes_parse(st, "sinfo", &nodes, &err) < 0 ||
            slurm_queue_parse(qt, "squeue", &queue, &err) < 0) {
            fprintf(stderr, "bench slurm_frame: %s\n", err.msg);
            return 1;
        }
        ClusterSnapshot snap;
        snapshot_from_slurm(&nodes, &queue, &snap);
        long bytes = 0;
        for (int k = 0; k < FRAMES; k++)
            t[k] = frame_cluster(&bs, &snap, k, &bytes);
        double cluster = median_sorting(t, FRAMES);
        for (int k = 0; k < FRAMES; k++)
            t[k] = frame_slurm_panel(&nodes, &queue, k);
        double panel = median_sorting(t, FRAMES);
        printf("  %4zu nodes: cluster view %.3f ms (%.2fx bare, %.4f of the budget), %.0f "
               "bytes/frame; Slurm panel ",
               nodes.n, cluster, cluster / bare, cluster / FRAME_BUDGET_MS, (double)bytes / FRAMES);
        if (isnan(panel))
            printf("not measured (not in the console yet: frame_slurm_panel)\n");
        else
            printf("%.3f ms (%.2fx bare, %.4f of the budget)\n", panel, panel / bare,
                   panel / FRAME_BUDGET_MS);
        double round = rounds[s].nodes_ms + rounds[s].queue_ms;
        cJSON *v = cJSON_CreateObject();
        cJSON_AddNumberToObject(v, "nodes", (double)nodes.n);
        cJSON_AddNumberToObject(v, "cluster_view_frame_ms", cluster);
        cJSON_AddNumberToObject(v, "cluster_view_vs_bare", cluster / bare);
        cJSON_AddNumberToObject(v, "cluster_view_vs_budget", cluster / FRAME_BUDGET_MS);
        cJSON_AddNumberToObject(v, "round_parse_plus_frame_vs_budget",
                                (round + cluster) / FRAME_BUDGET_MS);
        if (isnan(panel))
            cJSON_AddNullToObject(v, "slurm_panel_frame_ms");
        else
            cJSON_AddNumberToObject(v, "slurm_panel_frame_ms", panel);
        cJSON_AddItemToArray(jf, v);
        free(snap.hosts);
        free(snap.jobs);
        slurm_nodes_clear(&nodes);
        slurm_queue_clear(&queue);
        free(st);
        free(qt);
    }
    benchframe_close(&bs);
    double worst = rounds[N_SIZES - 1].nodes_ms + rounds[N_SIZES - 1].queue_ms;
    printf("a 1,024-node round's parsing in the console's loop: %.3f ms, %.3f of one frame's "
           "budget\n",
           worst, worst / FRAME_BUDGET_MS);
    Error err;
    int rc = out_path && jsonfile_write(out_path, root, &err) < 0;
    if (rc)
        fprintf(stderr, "slurm_frame: --out %s\n", err.msg);
    cJSON_Delete(root);
    return rc;
}
