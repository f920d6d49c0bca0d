/* bench/optscale: how `bespoke`'s suggest() time grows with the cluster — setting B (10
 * machines) against generated clusters of 100 and 1,000 machines (issue 3's targets: 200 ms
 * at 10 machines with 30 observations, 2 s at 100, 30 s at 1,000). Trials run on the `sim`
 * launcher (simcluster_run + the observation accumulator), as in bench/optimizer. Times are
 * wall and thread CPU (the machine is shared: CPU time is the fairer figure); BLAS runs on one
 * thread so that the thread's CPU time is all of suggest()'s work. */
#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/args/benchargs.h"
#include "core/base/clock.h"
#include "core/base/median.h"
#include "core/base/jsonfile.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"

/* From OpenBLAS; not through cblas.h, whose declarations clash with GSL's (DESIGN §7). */
extern char *openblas_get_corename(void);
extern void openblas_set_num_threads(int n);

/* SPEC@TRIALS[xSEEDS]: a tuning session of TRIALS trials, then one more suggest() measured
 * with TRIALS observations; SEEDS sessions (seeds 1..SEEDS). The first cell is the baseline. */
#define DEFAULT_CELLS "B:googlenet@30x3,G100:googlenet@30x1,G1000:googlenet@5x1"
enum { MAX_CELLS = 16 };

typedef struct {
    char spec[128];
    int trials, seeds;
    SimCluster *sim;
    size_t n_machines;
    double target_s;  /* issue 3's limit for this size; NAN: none */
    double uniform_s; /* noiseless time of uniform-gpus (else uniform-devices) */
    const char *uniform_name;
    double best_known_s; /* INFINITY for generated clusters */
    /* [seed][k]: suggest() with k observations, k = 0..trials */
    double *wall_s, *cpu_s;
    double *best_s; /* [seed]: best noiseless time among the ok trials */
    int failed_trials;
    int done; /* sessions that ran to the end */
    char error[300];
    /* summaries */
    double final_wall_med, final_wall_max, final_cpu_med, final_cpu_max;
    double all_wall_med, all_wall_max, all_cpu_med, all_cpu_max;
    double best_med;
    double elapsed_s;
} Cell;

static double thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The median of a copy: the caller's samples keep their order. */
static double median_of(const double *src, size_t n)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NAN;
    memcpy(v, src, n * sizeof *v);
    double m = median_sorting(v, n);
    free(v);
    return m;
}

static double max_of(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        if (isnan(m) || v[i] > m)
            m = v[i];
    return m;
}

static int parse_cell(const char *text, Cell *c, Error *err)
{
    memset(c, 0, sizeof *c);
    const char *at = strrchr(text, '@');
    size_t len = at ? (size_t)(at - text) : strlen(text);
    if (len == 0 || len >= sizeof c->spec)
        return error_set(err, "--cells: '%s': expected SPEC@TRIALS[xSEEDS]", text);
    memcpy(c->spec, text, len);
    c->trials = 30;
    c->seeds = 1;
    if (at) {
        char *end;
        long t = strtol(at + 1, &end, 10), s = 1;
        if (*end == 'x')
            s = strtol(end + 1, &end, 10);
        if (*end || t < 1 || t > 1000 || s < 1 || s > 100)
            return error_set(err,
                             "--cells: '%s': expected SPEC@TRIALS[xSEEDS] with TRIALS 1..1000 and "
                             "SEEDS 1..100",
                             text);
        c->trials = (int)t;
        c->seeds = (int)s;
    }
    c->sim = simcluster_new(c->spec, err);
    if (!c->sim)
        return -1;
    c->n_machines = simcluster_cluster(c->sim)->n_machines;
    c->target_s = c->n_machines <= 10     ? 0.2
                  : c->n_machines <= 100  ? 2.0
                  : c->n_machines <= 1000 ? 30.0
                                          : NAN;
    c->best_known_s = simcluster_best_known(c->sim, NULL);
    return 0;
}

/* The noiseless time of the seed's simple schedule: the batch split evenly over the GPUs
 * (over every device when the cluster has none). */
static void measure_uniform(Cell *c)
{
    static const char *const names[] = {"uniform-gpus", "uniform-devices"};
    c->uniform_s = INFINITY;
    for (int i = 0; i < 2; i++) {
        Error err;
        Optimizer *o =
            optimizer_new(names[i], simcluster_cluster(c->sim), simcluster_job(c->sim), 1, &err);
        if (!o)
            continue;
        Suggestion sg;
        if (optimizer_suggest(o, &sg, &err) == 0) {
            c->uniform_s = simcluster_noiseless_time(c->sim, sg.schedule);
            c->uniform_name = names[i];
            suggestion_clear(&sg);
        }
        optimizer_free(o);
        if (c->uniform_name)
            return;
    }
    c->uniform_name = "none";
}

/* One session: trials suggest/run/observe, then the measured suggest() with `trials`
 * observations. Returns -1 with c->error set. */
static int run_session(Cell *c, int seed_index)
{
    Error err;
    uint64_t seed = (uint64_t)seed_index + 1;
    double *wall = c->wall_s + (size_t)seed_index * (size_t)(c->trials + 1);
    double *cpu = c->cpu_s + (size_t)seed_index * (size_t)(c->trials + 1);
    Optimizer *opt =
        optimizer_new("bespoke", simcluster_cluster(c->sim), simcluster_job(c->sim), seed, &err);
    if (!opt) {
        snprintf(c->error, sizeof c->error, "%s", err.msg);
        return -1;
    }
    double best = INFINITY;
    for (int t = 1; t <= c->trials + 1; t++) {
        Suggestion sg;
        double w0 = clock_now_s(), c0 = thread_cpu_s();
        int rc = optimizer_suggest(opt, &sg, &err);
        cpu[t - 1] = thread_cpu_s() - c0;
        wall[t - 1] = clock_now_s() - w0;
        if (rc < 0) {
            snprintf(c->error, sizeof c->error, "seed %llu, suggest %d: %s",
                     (unsigned long long)seed, t, err.msg);
            optimizer_free(opt);
            return -1;
        }
        if (t == c->trials + 1) { /* the measured one: not run */
            suggestion_clear(&sg);
            break;
        }
        Schedule *s = sg.schedule;
        s->trial = t;
        LaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.timeout_s = 600;
        cfg.seed = seed;
        cfg.sim = c->sim;
        Observation *o = launcher_run_blocking(launcher_find("sim"), &cfg, s, &err);
        if (!o) {
            o = observation_new(s);
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s", err.msg);
        }
        if (o->status == TRIAL_OK) {
            double nl = simcluster_noiseless_time(c->sim, s);
            if (nl < best)
                best = nl;
        } else
            c->failed_trials++;
        optimizer_observe(opt, o);
        observation_free(o);
        suggestion_clear(&sg);
    }
    c->best_s[seed_index] = best;
    optimizer_free(opt);
    return 0;
}

static void run_cell(Cell *c)
{
    size_t per = (size_t)(c->trials + 1), n = per * (size_t)c->seeds;
    c->wall_s = calloc(n, sizeof(double));
    c->cpu_s = calloc(n, sizeof(double));
    c->best_s = calloc((size_t)c->seeds, sizeof(double));
    measure_uniform(c);
    double t0 = clock_now_s();
    int done = 0;
    for (int s = 0; s < c->seeds; s++) {
        if (run_session(c, s) < 0)
            break;
        done++;
    }
    c->elapsed_s = clock_now_s() - t0;
    c->done = done;
    if (!done)
        return;
    double *fw = malloc((size_t)done * sizeof(double)), *fc = malloc((size_t)done * sizeof(double));
    for (int s = 0; s < done; s++) {
        fw[s] = c->wall_s[(size_t)s * per + (size_t)c->trials];
        fc[s] = c->cpu_s[(size_t)s * per + (size_t)c->trials];
    }
    c->final_wall_med = median_of(fw, (size_t)done);
    c->final_wall_max = max_of(fw, (size_t)done);
    c->final_cpu_med = median_of(fc, (size_t)done);
    c->final_cpu_max = max_of(fc, (size_t)done);
    c->all_wall_med = median_of(c->wall_s, per * (size_t)done);
    c->all_wall_max = max_of(c->wall_s, per * (size_t)done);
    c->all_cpu_med = median_of(c->cpu_s, per * (size_t)done);
    c->all_cpu_max = max_of(c->cpu_s, per * (size_t)done);
    c->best_med = median_of(c->best_s, (size_t)done);
    free(fw);
    free(fc);
}

/* Median over seeds of the CPU time of the suggest() made with k observations. */
static double cpu_at(const Cell *c, int k)
{
    if (k > c->trials || !c->done)
        return NAN;
    double v[100];
    for (int s = 0; s < c->done; s++)
        v[s] = c->cpu_s[(size_t)s * (size_t)(c->trials + 1) + (size_t)k];
    return median_of(v, (size_t)c->done);
}

static cJSON *array_of(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: optscale [--cells LIST] [--out FILE]\n"
               "  --cells LIST   comma-separated SPEC@TRIALS[xSEEDS] (default " DEFAULT_CELLS ");\n"
               "                 SPEC as for the simulator (A, B, C or G<n>, ':' network); each\n"
               "                 session runs TRIALS trials, then one suggest() measured with\n"
               "                 TRIALS observations; the first cell is the scaling baseline\n"
               "  --out FILE     write the results as JSON\n");
}

int main(int argc, char **argv)
{
    static const struct option LONG[] = {{"cells", required_argument, 0, 'c'},
                                         {"out", required_argument, 0, 'O'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *cells_arg = DEFAULT_CELLS, *out = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cells_arg = optarg;
            break;
        case 'O':
            out = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (benchargs_no_operands("optscale", argc, argv, optind, "") < 0) {
        usage(stderr);
        return 2;
    }
    if (benchargs_out_writable("optscale", out) < 0)
        return 2;
    openblas_set_num_threads(1);

    static Cell cells[MAX_CELLS];
    size_t n_cells = 0;
    char *list = strdup(cells_arg), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        Error err;
        if (n_cells == MAX_CELLS) {
            fprintf(stderr, "optscale: --cells: at most %d cells\n", MAX_CELLS);
            return 2;
        }
        if (parse_cell(tok, &cells[n_cells], &err) < 0) {
            fprintf(stderr, "optscale: %s\n", err.msg);
            return 2;
        }
        n_cells++;
    }
    free(list);
    if (!n_cells) {
        fprintf(stderr, "optscale: --cells: no cell given\n");
        return 2;
    }

    printf("bespoke suggest() scaling (OpenBLAS core: %s, 1 BLAS thread); times in ms, "
           "thread CPU and wall\n",
           openblas_get_corename());
    double load_start[3] = {NAN, NAN, NAN}, load_end[3] = {NAN, NAN, NAN};
    getloadavg(load_start, 3);
    double t_start = clock_now_s();
    for (size_t i = 0; i < n_cells; i++) {
        Cell *c = &cells[i];
        printf("  running %s: %zu machines, %d trials x %d seeds ...\n", c->spec, c->n_machines,
               c->trials, c->seeds);
        fflush(stdout);
        run_cell(c);
        if (c->error[0])
            printf("  %s: stopped: %s\n", c->spec, c->error);
    }
    double total_s = clock_now_s() - t_start;
    getloadavg(load_end, 3);

    /* Observations matched across cells: the smallest session of all. */
    int k_match = cells[0].trials;
    for (size_t i = 0; i < n_cells; i++)
        if (cells[i].trials < k_match)
            k_match = cells[i].trials;
    const Cell *base = &cells[0];
    double base_match = cpu_at(base, k_match);

    printf("\n%-18s %5s %4s | %9s %9s %9s %9s | %8s %8s | %9s %7s | %6s %6s %6s\n", "cell", "mach",
           "obs", "cpu med", "cpu max", "wall med", "wall max", "target", "cpu/tgt", "all cpu",
           "all max", "scale", "@match", "best/u");
    for (size_t i = 0; i < n_cells; i++) {
        const Cell *c = &cells[i];
        double scale = c->final_cpu_med / base->final_cpu_med;
        double scale_m = cpu_at(c, k_match) / base_match;
        printf("%-18s %5zu %4d | %9.1f %9.1f %9.1f %9.1f | %8.0f %8.3f | %9.1f %7.1f | %6.1f "
               "%6.1f %6.3f\n",
               c->spec, c->n_machines, c->trials, c->final_cpu_med * 1e3, c->final_cpu_max * 1e3,
               c->final_wall_med * 1e3, c->final_wall_max * 1e3, c->target_s * 1e3,
               c->final_cpu_med / c->target_s, c->all_cpu_med * 1e3, c->all_cpu_max * 1e3, scale,
               scale_m, c->best_med / c->uniform_s);
    }
    printf(
        "\nobs: observations when the measured suggest() ran (median/max over seeds); all: every\n"
        "suggest() of the sessions (0..obs observations); target: issue 3's limit for the size;\n"
        "scale: CPU median vs %s's; @match: the same at %d observations in both;\n"
        "best/u: best noiseless time found (median over seeds) / the uniform schedule's.\n",
        base->spec, k_match);
    for (size_t i = 0; i < n_cells; i++) {
        const Cell *c = &cells[i];
        printf("  %-18s best %.3f s, %s %.3f s", c->spec, c->best_med, c->uniform_name,
               c->uniform_s);
        if (isfinite(c->best_known_s))
            printf(", best-known %.3f s (best/best-known %.3f)", c->best_known_s,
                   c->best_med / c->best_known_s);
        printf("; %d failed trials; %.1f s\n", c->failed_trials, c->elapsed_s);
    }
    printf("load average (1 min) %.2f at the start, %.2f at the end, on %ld online cores\n",
           load_start[0], load_end[0], sysconf(_SC_NPROCESSORS_ONLN));
    int met_cpu = 0, met_wall = 0, judged = 0;
    for (size_t i = 0; i < n_cells; i++)
        if (isfinite(cells[i].target_s) && !cells[i].error[0]) {
            judged++;
            met_cpu += cells[i].final_cpu_med <= cells[i].target_s;
            met_wall += cells[i].final_wall_med <= cells[i].target_s;
        }
    printf("targets met by the median: %d/%d cells in thread CPU time, %d/%d in wall time; total "
           "%.1f s\n",
           met_cpu, judged, met_wall, judged, total_s);

    if (out) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "benchmark", "optscale");
        cJSON_AddStringToObject(root, "optimizer", "bespoke");
        cJSON_AddStringToObject(root, "openblas_core", openblas_get_corename());
        cJSON_AddStringToObject(root, "baseline", base->spec);
        cJSON_AddNumberToObject(root, "matched_observations", k_match);
        cJSON_AddNumberToObject(root, "total_s", total_s);
        add_num(root, "load_average_1min_start", load_start[0]);
        add_num(root, "load_average_1min_end", load_end[0]);
        cJSON *arr = cJSON_AddArrayToObject(root, "cells");
        for (size_t i = 0; i < n_cells; i++) {
            const Cell *c = &cells[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "spec", c->spec);
            cJSON_AddNumberToObject(o, "machines", (double)c->n_machines);
            cJSON_AddNumberToObject(o, "observations", c->trials);
            cJSON_AddNumberToObject(o, "seeds", c->seeds);
            if (c->error[0])
                cJSON_AddStringToObject(o, "error", c->error);
            add_num(o, "target_s", c->target_s);
            add_num(o, "suggest_cpu_median_s", c->final_cpu_med);
            add_num(o, "suggest_cpu_max_s", c->final_cpu_max);
            add_num(o, "suggest_wall_median_s", c->final_wall_med);
            add_num(o, "suggest_wall_max_s", c->final_wall_max);
            add_num(o, "cpu_ratio_to_target", c->final_cpu_med / c->target_s);
            add_num(o, "wall_ratio_to_target", c->final_wall_med / c->target_s);
            add_num(o, "all_cpu_median_s", c->all_cpu_med);
            add_num(o, "all_cpu_max_s", c->all_cpu_max);
            add_num(o, "all_wall_median_s", c->all_wall_med);
            add_num(o, "all_wall_max_s", c->all_wall_max);
            add_num(o, "scale_vs_baseline", c->final_cpu_med / base->final_cpu_med);
            add_num(o, "scale_vs_baseline_matched", cpu_at(c, k_match) / base_match);
            add_num(o, "best_noiseless_s", c->best_med);
            cJSON_AddStringToObject(o, "uniform", c->uniform_name);
            add_num(o, "uniform_noiseless_s", c->uniform_s);
            add_num(o, "best_over_uniform", c->best_med / c->uniform_s);
            add_num(o, "best_known_s", c->best_known_s);
            cJSON_AddNumberToObject(o, "failed_trials", c->failed_trials);
            cJSON_AddNumberToObject(o, "elapsed_s", c->elapsed_s);
            size_t n = (size_t)(c->trials + 1) * (size_t)c->done;
            cJSON_AddItemToObject(o, "suggest_cpu_s", array_of(c->cpu_s, n));
            cJSON_AddItemToObject(o, "suggest_wall_s", array_of(c->wall_s, n));
            cJSON_AddItemToArray(arr, o);
        }
        Error err;
        int failed = jsonfile_write(out, root, &err) < 0;
        cJSON_Delete(root);
        if (failed) {
            fprintf(stderr, "optscale: --out %s\n", err.msg);
            return 1;
        }
    }
    for (size_t i = 0; i < n_cells; i++) {
        free(cells[i].wall_s);
        free(cells[i].cpu_s);
        free(cells[i].best_s);
        simcluster_free(cells[i].sim);
    }
    int failed = 0;
    for (size_t i = 0; i < n_cells; i++)
        failed |= cells[i].error[0] != 0;
    return failed ? 1 : 0;
}
