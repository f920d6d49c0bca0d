/* Long-lived nvidia-smi channels per GPU host, parsed into per-GPU and per-process state. */
#include "remote/gpu/gpuwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/gpu/gputable.h"
#include "remote/ssh/rexec.h"

enum { RESTART_MS = 10000, MAX_PROCS = 512 };

#define NO_TOOL_MARK "#no-gpu-tool"
#define NO_TOOL_CHECK                                                                              \
    "command -v nvidia-smi >/dev/null 2>&1 || { echo '" NO_TOOL_MARK "'; exit 0; }; "

typedef struct {
    size_t host;
    RemoteExec *gpu_x, *apps_x;
    GpuHostState state;
    char why[200];
    GpuTable gpus;
    GpuProc procs[MAX_PROCS], pending[MAX_PROCS];
    size_t n_procs, n_pending;
    int64_t restart_at_ms;
    int app_rounds;
} WatchedHost;

struct GpuWatch {
    HostPool *pool;
    double period_s;
    WatchedHost *hosts;
    size_t n;
};

const char *gpuwatch_state_name(GpuHostState s)
{
    static const char *const NAMES[] = {"starting", "ok", "no GPU tool", "error"};
    return NAMES[s];
}

char *gpuwatch_gpu_command(double period_s)
{
    char *c = malloc(512);
    if (!c)
        return NULL;
    if (period_s > 0)
        snprintf(c, 512,
                 NO_TOOL_CHECK "exec nvidia-smi --query-gpu=" NVSMI_QUERY_GPU
                               " --format=csv,noheader,nounits -lms %d",
                 (int)(period_s * 1000));
    else
        snprintf(c, 512,
                 NO_TOOL_CHECK "exec nvidia-smi --query-gpu=" NVSMI_QUERY_GPU
                               " --format=csv,noheader,nounits");
    return c;
}

char *gpuwatch_apps_command(double period_s)
{
    char *c = malloc(1024);
    if (!c)
        return NULL;
    /* One loop per host: the processes, then their groups (#pg PID PGID), then #end. */
    snprintf(
        c, 1024,
        NO_TOOL_CHECK
        "while out=$(nvidia-smi --query-compute-apps=" NVSMI_QUERY_APPS
        " --format=csv,noheader,nounits); do "
        "[ -n \"$out\" ] && printf '%%s\\n' \"$out\"; "
        "pids=$(printf '%%s\\n' \"$out\" | awk -F, '$1+0>0{printf \"%%s%%d\", s, $1; s=\",\"}'); "
        "[ -n \"$pids\" ] && ps -o pid=,pgid= -p \"$pids\" | awk '{print \"#pg\", $1, $2}'; "
        "echo '#end'; sleep %.3f; done",
        period_s > 0 ? period_s : 1.0);
    return c;
}

static WatchedHost *find(const GpuWatch *w, size_t host)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->hosts[i].host == host)
            return &w->hosts[i];
    return NULL;
}

static void on_gpu_line(void *ud, RemoteExec *x, StreamKind s, const char *line, int cut)
{
    GpuWatch *w = ud;
    WatchedHost *h = find(w, rexec_host(x));
    if (!h || cut)
        return;
    if (strcmp(line, NO_TOOL_MARK) == 0) {
        h->state = GPUHOST_NO_TOOL;
        snprintf(h->why, sizeof h->why, "no GPU tool (nvidia-smi not on PATH)");
        return;
    }
    if (s == STREAM_STDERR) {
        snprintf(h->why, sizeof h->why, "nvidia-smi: %s", line);
        return;
    }
    Error err;
    int refused = gputable_take_line(&h->gpus, line, &err) < 0;
    /* The process list may have come first: join it again on the new table. */
    for (size_t k = 0; k < h->n_procs; k++)
        h->procs[k].gpu = nvsmi_join(h->gpus.gpus, h->gpus.n, &h->procs[k].proc);
    /* The host is in error while none of its GPUs reads, its latest refusal the reason. It
     * stayed "starting", the refusal said nowhere, for as long as every line was refused. */
    if (gputable_readable(&h->gpus)) {
        h->state = GPUHOST_OK;
        h->why[0] = 0;
    } else if (refused) {
        h->state = GPUHOST_ERROR;
        snprintf(h->why, sizeof h->why, "%s", err.msg);
    }
}

static void on_apps_line(void *ud, RemoteExec *x, StreamKind s, const char *line, int cut)
{
    GpuWatch *w = ud;
    WatchedHost *h = find(w, rexec_host(x));
    if (!h || cut || s == STREAM_STDERR)
        return;
    if (strcmp(line, NO_TOOL_MARK) == 0) {
        h->state = GPUHOST_NO_TOOL;
        snprintf(h->why, sizeof h->why, "no GPU tool (nvidia-smi not on PATH)");
        return;
    }
    if (strcmp(line, "#end") == 0) {
        h->app_rounds++;
        for (size_t i = 0; i < h->n_pending; i++)
            h->pending[i].gpu = nvsmi_join(h->gpus.gpus, h->gpus.n, &h->pending[i].proc);
        memcpy(h->procs, h->pending, h->n_pending * sizeof *h->procs);
        h->n_procs = h->n_pending;
        h->n_pending = 0;
        return;
    }
    long pid, pgid;
    if (sscanf(line, "#pg %ld %ld", &pid, &pgid) == 2) {
        for (size_t i = 0; i < h->n_pending; i++)
            if (h->pending[i].proc.pid == pid)
                h->pending[i].pgid = pgid;
        return;
    }
    GpuProc p = {.gpu = -1};
    Error err;
    if (h->n_pending < MAX_PROCS && nvsmi_parse_app_line(line, &p.proc, &err) == 0)
        h->pending[h->n_pending++] = p;
}

GpuWatch *gpuwatch_new(HostPool *pool, double period_s)
{
    GpuWatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->pool = pool;
    w->period_s = period_s > 0 ? period_s : 2;
    return w;
}

static void start_channels(GpuWatch *w, WatchedHost *h)
{
    char *gc = gpuwatch_gpu_command(w->period_s), *ac = gpuwatch_apps_command(w->period_s);
    ExecOptions go = {.on_line = on_gpu_line, .userdata = w, .max_line = 4096};
    ExecOptions ao = {.on_line = on_apps_line, .userdata = w, .max_line = 4096};
    h->gpu_x = gc ? hostpool_exec(w->pool, h->host, gc, NULL, 0, &go, NULL) : NULL;
    h->apps_x = ac ? hostpool_exec(w->pool, h->host, ac, NULL, 0, &ao, NULL) : NULL;
    free(gc);
    free(ac);
}

void gpuwatch_add_host(GpuWatch *w, size_t host)
{
    if (find(w, host))
        return;
    WatchedHost *g = realloc(w->hosts, (w->n + 1) * sizeof *g);
    if (!g)
        return;
    w->hosts = g;
    WatchedHost *h = &w->hosts[w->n++];
    memset(h, 0, sizeof *h);
    h->host = host;
    hostpool_connect(w->pool, host, 1);
    start_channels(w, h);
}

void gpuwatch_step(GpuWatch *w, int64_t now_ms)
{
    for (size_t i = 0; i < w->n; i++) {
        WatchedHost *h = &w->hosts[i];
        if (h->state == GPUHOST_NO_TOOL)
            continue;
        int over = (h->gpu_x && rexec_done(h->gpu_x)) || (h->apps_x && rexec_done(h->apps_x));
        if (over && !h->restart_at_ms) {
            const RemoteExec *x = h->gpu_x && rexec_done(h->gpu_x) ? h->gpu_x : h->apps_x;
            if (h->state != GPUHOST_NO_TOOL) {
                h->state = GPUHOST_ERROR;
                if (rexec_outcome(x) == EXEC_SSH_FAILED)
                    snprintf(h->why, sizeof h->why, "%s", rexec_error(x));
                else if (!h->why[0])
                    snprintf(h->why, sizeof h->why, "nvidia-smi stopped (exit status %d)",
                             rexec_exit_status(x));
            }
            rexec_free(h->gpu_x);
            rexec_free(h->apps_x);
            h->gpu_x = h->apps_x = NULL;
            h->restart_at_ms = now_ms + RESTART_MS;
        }
        if (h->state == GPUHOST_NO_TOOL) {
            rexec_free(h->gpu_x);
            rexec_free(h->apps_x);
            h->gpu_x = h->apps_x = NULL;
            continue;
        }
        if (h->restart_at_ms && now_ms >= h->restart_at_ms) {
            HostInfo hi;
            hostpool_info(w->pool, h->host, &hi);
            if (hi.state == HOST_READY) {
                h->restart_at_ms = 0;
                gputable_new_process(&h->gpus);
                start_channels(w, h);
            }
        }
    }
}

GpuHostState gpuwatch_state(const GpuWatch *w, size_t host, const char **why)
{
    const WatchedHost *h = find(w, host);
    if (why)
        *why = h ? h->why : "not watched";
    return h ? h->state : GPUHOST_ERROR;
}

int gpuwatch_answered(const GpuWatch *w, size_t host)
{
    const WatchedHost *h = find(w, host);
    return !h || h->state == GPUHOST_NO_TOOL || h->state == GPUHOST_ERROR ||
           (h->state == GPUHOST_OK && h->app_rounds > 0);
}

size_t gpuwatch_gpus(const GpuWatch *w, size_t host, const GpuSample **out)
{
    const WatchedHost *h = find(w, host);
    *out = h ? h->gpus.gpus : NULL;
    return h ? h->gpus.n : 0;
}

size_t gpuwatch_procs(const GpuWatch *w, size_t host, const GpuProc **out)
{
    const WatchedHost *h = find(w, host);
    *out = h ? h->procs : NULL;
    return h ? h->n_procs : 0;
}

void gpuwatch_free(GpuWatch *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        rexec_free(w->hosts[i].gpu_x);
        rexec_free(w->hosts[i].apps_x);
    }
    free(w->hosts);
    free(w);
}

static void source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    (void)now_ms;
    gpuwatch_step(ctx, clock_now_ms()); /* after the pool's step, which took time */
}

long gpuwatch_attach(GpuWatch *w, EvLoop *l)
{
    return evloop_add(l, NULL, source_step, w);
}
