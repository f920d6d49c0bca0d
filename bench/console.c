/* Render cost of the console per frame, against a bare ncurses full-screen refresh measured
 * in the same run: the cluster view at 10, 64 and 1,024 hosts × 8 GPUs, the tune view after
 * 60 trials, diffed (what the console does) vs forced full redraws, and the console's CPU
 * use while idle (the real binary in a pseudo-terminal). */
#include <cJSON.h>
#include <curses.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/args/benchargs.h"
#include "bench/frame/benchframe.h"
#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "core/base/median.h"
#include "core/base/jsonfile.h"
#include "tui/app.h"
#include "tui/frame.h"
#include "tui/view.h"

enum { COLS_B = 200, ROWS_B = 60, FRAMES = 150 };

/* A cluster of n hosts × 8 GPUs with jobs holding most GPUs. */
static void make_snapshot(ClusterSnapshot *s, size_t n, unsigned seed)
{
    memset(s, 0, sizeof *s);
    snprintf(s->source, sizeof s->source, "synthetic");
    s->hosts = calloc(n, sizeof *s->hosts);
    s->n_hosts = n;
    s->n_jobs = n / 2 + 1;
    s->jobs = calloc(s->n_jobs, sizeof *s->jobs);
    srand(seed);
    for (size_t i = 0; i < n; i++) {
        HostLoad *h = &s->hosts[i];
        snprintf(h->name, sizeof h->name, "node%04zu", i);
        snprintf(h->role, sizeof h->role, "W");
        h->cpu = rand() / (double)RAND_MAX;
        h->gpu = rand() / (double)RAND_MAX;
        h->mem = rand() / (double)RAND_MAX;
        h->share = 1.0 / (double)n;
        h->n_gpus = 8;
        for (int g = 0; g < 8; g++)
            h->gpu_job[g] = rand() % 5 == 0 ? -1 : (short)(rand() % (int)s->n_jobs);
    }
    for (size_t j = 0; j < s->n_jobs; j++) {
        JobRow *r = &s->jobs[j];
        snprintf(r->name, sizeof r->name, "job-%03zu", j);
        r->gpus = 1 << (j % 4);
        r->progress = rand() / (double)RAND_MAX;
        r->eta_s = rand() % 5000;
        snprintf(r->history, sizeof r->history, "1>2>4");
    }
}

/* What changes between two frames of a live cluster: a few loads and one job's GPUs. */
static void churn(ClusterSnapshot *s)
{
    for (size_t k = 0; k < s->n_hosts / 20 + 1; k++) {
        HostLoad *h = &s->hosts[(size_t)rand() % s->n_hosts];
        h->cpu = rand() / (double)RAND_MAX;
        h->gpu = rand() / (double)RAND_MAX;
        h->gpu_job[rand() % 8] = (short)(rand() % (int)s->n_jobs);
    }
    s->jobs[0].progress = fmod(s->jobs[0].progress + 0.01, 1.0);
}

static double frame_cluster(BenchScreen *bs, ClusterSnapshot *s, int full, long *bytes)
{
    churn(s);
    return benchframe_cluster(bs, s, full, bytes);
}

static double frame_tune(BenchScreen *bs, App *a, long *bytes)
{
    long b0 = benchframe_bytes(bs);
    double t0 = benchframe_now_ms();
    a->table_stale = 0;
    app_rebuild_table(a);
    frame_draw(a);
    double dt = benchframe_now_ms() - t0;
    *bytes += benchframe_bytes(bs) - b0;
    return dt;
}

/* CPU seconds (user + system) of a process, from /proc. */
static double cpu_s(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return NAN;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return NAN;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Runs the console (tuning and the simulated scheduler) in a pseudo-terminal and measures
 * its CPU share over window_s: first while it works, then after Space paused everything
 * (what an operator leaves on screen). Reads its output so it never blocks on the pty. */
static void console_cpu_pct(const char *bin, double window_s, double *busy, double *idle)
{
    *busy = *idle = NAN;
    int master;
    struct winsize ws = {.ws_row = 30, .ws_col = 100};
    sigset_t mask;
    childsig_block(&mask); /* the console starts with no handler of ours */
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid == 0)
        childsig_reset();
    else
        childsig_restore(&mask);
    if (pid < 0)
        return;
    if (pid == 0) {
        setenv("TERM", "xterm-256color", 1);
        execl(bin, bin, "--pace-ms", "200", "--no-journal", (char *)NULL);
        _exit(127);
    }
    char buf[65536];
    double t_start = clock_now_s();
    /* phases: 0 warm-up 1 s, 1 busy window, 2 settle 0.5 s after Space, 3 idle window */
    int phase = 0;
    double mark = t_start + 1.0, c0 = 0;
    for (;;) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 50) > 0 && read(master, buf, sizeof buf) <= 0)
            break;
        double t = clock_now_s();
        if (t < mark)
            continue;
        if (phase == 0) {
            c0 = cpu_s(pid);
            mark = t + window_s;
            phase = 1;
        } else if (phase == 1) {
            *busy = (cpu_s(pid) - c0) / window_s * 100.0;
            if (write(master, " ", 1) != 1)
                break;
            mark = t + 0.5;
            phase = 2;
        } else if (phase == 2) {
            c0 = cpu_s(pid);
            mark = t + window_s;
            phase = 3;
        } else {
            *idle = (cpu_s(pid) - c0) / (t - (mark - window_s)) * 100.0;
            break;
        }
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    close(master);
}

int main(int argc, char **argv)
{
    const char *out_path;
    int args = benchframe_args(argc, argv, "console", &out_path);
    if (args != 0)
        return args < 0 ? 2 : 0;
    if (benchargs_out_writable("console", out_path) < 0)
        return 2;
    BenchScreen bs;
    if (benchframe_open(&bs, ROWS_B, COLS_B, "console") < 0)
        return 1;

    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "bench", "console");
    cJSON_AddNumberToObject(root, "screen_cols", COLS_B);
    cJSON_AddNumberToObject(root, "screen_rows", ROWS_B);
    double t[FRAMES];
    long bytes = 0;
    for (int k = 0; k < FRAMES; k++)
        t[k] = benchframe_bare(&bs, k, &bytes);
    double bare = median_sorting(t, FRAMES);
    double bare_bytes = (double)bytes / FRAMES;
    cJSON_AddNumberToObject(root, "bare_full_refresh_ms", bare);
    printf("bare ncurses full-screen refresh (%dx%d): %.3f ms, %.0f bytes/frame\n", COLS_B, ROWS_B,
           bare, bare_bytes);
    cJSON *views = cJSON_AddArrayToObject(root, "cluster_view");
    static const size_t HOSTS[] = {10, 64, 1024};
    for (size_t h = 0; h < 3; h++) {
        ClusterSnapshot s;
        make_snapshot(&s, HOSTS[h], 7);
        double diffed, full;
        long b_diff = 0, b_full = 0;
        for (int k = 0; k < FRAMES; k++)
            t[k] = frame_cluster(&bs, &s, 0, &b_diff);
        diffed = median_sorting(t, FRAMES);
        for (int k = 0; k < FRAMES; k++)
            t[k] = frame_cluster(&bs, &s, 1, &b_full);
        full = median_sorting(t, FRAMES);
        printf("cluster view, %4zu hosts x 8 GPUs: diffed %.3f ms (%.2fx bare), full redraw "
               "%.3f ms (%.2fx bare); %.0f vs %.0f bytes/frame\n",
               HOSTS[h], diffed, diffed / bare, full, full / bare, (double)b_diff / FRAMES,
               (double)b_full / FRAMES);
        cJSON *v = cJSON_CreateObject();
        cJSON_AddNumberToObject(v, "hosts", (double)HOSTS[h]);
        cJSON_AddNumberToObject(v, "gpus_per_host", 8);
        cJSON_AddNumberToObject(v, "frame_ms_median", diffed);
        cJSON_AddNumberToObject(v, "frame_vs_bare", diffed / bare);
        cJSON_AddNumberToObject(v, "full_redraw_ms_median", full);
        cJSON_AddNumberToObject(v, "full_vs_bare", full / bare);
        cJSON_AddNumberToObject(v, "bytes_per_frame_diffed", (double)b_diff / FRAMES);
        cJSON_AddNumberToObject(v, "bytes_per_frame_full", (double)b_full / FRAMES);
        cJSON_AddItemToArray(views, v);
        free(s.hosts);
        free(s.jobs);
    }

    /* The tune view after 60 simulated trials, through the console's own draw. */
    Error err;
    App *a = calloc(1, sizeof *a);
    a->sim = simcluster_new("B:googlenet", &err);
    a->cluster = simcluster_cluster(a->sim);
    a->job = simcluster_job(a->sim);
    a->plot_style = plot_style_find("braille");
    a->follow = 1;
    TunerConfig cfg = {.cluster = a->cluster,
                       .job = a->job,
                       .optimizer = "random",
                       .seed = 1,
                       .budget = 60,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = a->sim, .seed = 1}};
    a->tuner = tuner_new(&cfg, &err);
    if (!a->tuner || tuner_run_blocking(a->tuner, &err) < 0) {
        fprintf(stderr, "bench console: %s\n", err.msg);
        return 1;
    }
    view_cluster_snapshot(a);
    long b_tune = 0;
    for (int k = 0; k < FRAMES; k++)
        t[k] = frame_tune(&bs, a, &b_tune);
    double tune = median_sorting(t, FRAMES);
    printf("tune view, 60 trials: %.3f ms (%.2fx bare), %.0f bytes/frame\n", tune, tune / bare,
           (double)b_tune / FRAMES);
    cJSON_AddNumberToObject(root, "tune_view_frame_ms_median", tune);
    cJSON_AddNumberToObject(root, "tune_view_vs_bare", tune / bare);
    tuner_free(a->tuner);
    trials_free(&a->table);
    free(a->snap.hosts);
    free(a->snap.jobs);
    simcluster_free(a->sim);
    free(a);
    benchframe_close(&bs);

    char bin[1024];
    const char *build = getenv("TUNEDECK_BUILD");
    snprintf(bin, sizeof bin, "%s/tunedeck", build && build[0] ? build : "build");
    double busy = NAN, idle = NAN;
    if (access(bin, X_OK) == 0)
        console_cpu_pct(bin, 3.0, &busy, &idle);
    if (isfinite(idle)) {
        printf("console CPU over 3 s: %.2f%% tuning and scheduling (pace 200 ms, 4 ticks/s), "
               "%.2f%% paused (target < 1%%)\n",
               busy, idle);
        cJSON_AddNumberToObject(root, "busy_cpu_pct", busy);
        cJSON_AddNumberToObject(root, "idle_cpu_pct", idle);
    } else {
        printf("console CPU: not measured (no %s)\n", bin);
        cJSON_AddNullToObject(root, "idle_cpu_pct");
    }
    int rc = out_path && jsonfile_write(out_path, root, &err) < 0;
    if (rc)
        fprintf(stderr, "console bench: --out %s\n", err.msg);
    cJSON_Delete(root);
    return rc;
}
