/* bench/schedscale: how `tunedeck schedule --policy doubling` scales with the jobs of a trace,
 * with each job's speeds kept between decisions (now) against recomputed at every decision
 * (before; sched_speed_per_decision), both measured in this run on the same traces. A trace
 * of N jobs overlays the Pollux artifact's eight 1x workloads (data/pollux-osdi21) over the
 * same 8 hours on its 16 x 4 GPUs, so the queue grows with N, as in a review's 3,000-job run.
 * Prints CPU seconds, the before/now ratio, and each one's time per job against the smallest
 * trace's (1.0 = linear). Both runs must log the same events and JCT, or it fails.
 * Usage: schedscale [--out FILE.json] [--quick]  (--quick: 300 and 1,000 jobs, no 3,000) */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args/benchargs.h"
#include "bench/args/benchdata.h"
#include "core/base/clock.h"
#include "core/base/jsonfile.h"
#include "core/sched/sched.h"
#include "core/sched/workload.h"

#define WORKLOADS 8
static const int SIZES[] = {300, 1000, 3000};
#define NSIZES (int)(sizeof SIZES / sizeof SIZES[0])

typedef struct {
    SchedJobSpec spec;
    size_t k; /* order in the overlay, for a stable sort */
} Row;

static int row_cmp(const void *pa, const void *pb)
{
    const Row *a = pa, *b = pb;
    if (a->spec.submit_s != b->spec.submit_s)
        return a->spec.submit_s < b->spec.submit_s ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

typedef struct {
    double cpu_s, avg_jct_s;
    size_t events;
} Run;

/* One run of the first n rows of the overlay; -1 after saying why. */
static int run_trace(const Catalogue *cat, const Row *rows, int n, int per_decision, Run *out)
{
    SchedConfig cfg;
    sched_config_default(&cfg);
    cfg.policy = "doubling";
    Error e;
    double t0 = clock_cpu_s();
    SchedState *s = sched_new(&cfg, cat, &e);
    if (!s) {
        fprintf(stderr, "schedscale: %s\n", e.msg);
        return -1;
    }
    sched_speed_per_decision(s, per_decision);
    for (int i = 0; i < n; i++)
        if (sched_submit(s, &rows[i].spec, &e) < 0) {
            fprintf(stderr, "schedscale: job %d: %s\n", i, e.msg);
            sched_free(s);
            return -1;
        }
    if (sched_run(s, 1e8, &e) < 0) {
        fprintf(stderr, "schedscale: %d jobs: %s\n", n, e.msg);
        sched_free(s);
        return -1;
    }
    SchedSummary sum;
    sched_summary(s, &sum);
    *out = (Run){clock_cpu_s() - t0, sum.avg_jct_s, sched_event_count(s)};
    sched_free(s);
    return 0;
}

/* The overlay of the eight workloads, sorted by submission; names made unique. The rows
 * point into w[] (loaded here; the caller frees them with workload_free) and names. */
static Row *overlay(const Catalogue *cat, const char *data, int n, char (*names)[32],
                    SchedJobSpec **w, size_t *wn)
{
    Row *rows = calloc((size_t)n, sizeof *rows);
    int ok = rows != NULL;
    for (int i = 0; ok && i < WORKLOADS; i++) {
        char path[4096];
        Error e;
        snprintf(path, sizeof path, "%s/workloads/workload-%d.csv", data, i + 1);
        if (workload_load(path, cat, &w[i], &wn[i], &e) < 0 || wn[i] == 0) {
            fprintf(stderr, "schedscale: %s\n", wn[i] ? e.msg : path);
            ok = 0;
        }
    }
    for (int k = 0; ok && k < n; k++) {
        int f = (int)((size_t)k / wn[0] % WORKLOADS);
        const SchedJobSpec *src = &w[f][(size_t)k % wn[f]];
        snprintf(names[k], 32, "%s-%d", src->model, k);
        rows[k] = (Row){*src, (size_t)k};
        rows[k].spec.name = names[k];
    }
    if (ok)
        qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    else
        free(rows), rows = NULL;
    return rows;
}

int main(int argc, char **argv)
{
    const char *out;
    int quick;
    if (benchargs_out_quick("schedscale", argc, argv, &out, &quick) < 0)
        return 2;
    char data[4096];
    Catalogue *cat = benchdata_catalogue("schedscale", data, sizeof data);
    if (!cat)
        return 1;
    int sizes = quick ? NSIZES - 1 : NSIZES, most = SIZES[sizes - 1];
    char(*names)[32] = malloc((size_t)most * sizeof *names);
    SchedJobSpec *w[WORKLOADS] = {0};
    size_t wn[WORKLOADS] = {0};
    Row *rows = names ? overlay(cat, data, most, names, w, wn) : NULL;
    if (!rows) {
        for (int i = 0; i < WORKLOADS; i++)
            workload_free(w[i], wn[i]);
        free(names);
        catalogue_free(cat);
        return 1;
    }
    printf("schedule --policy doubling on the eight Pollux 1x workloads overlaid (16 x 4 GPUs)\n"
           "CPU s; per-job scaling = (s per job) / (s per job at %d jobs), 1.0 = linear\n",
           SIZES[0]);
    printf("%6s %10s %10s %11s %15s %15s\n", "jobs", "before_s", "now_s", "before/now",
           "before_scaling", "now_scaling");
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "traces");
    double base_old = 0, base_new = 0;
    int rc = 0;
    for (int z = 0; z < sizes && rc == 0; z++) {
        Run old, now;
        if (run_trace(cat, rows, SIZES[z], 1, &old) < 0 ||
            run_trace(cat, rows, SIZES[z], 0, &now) < 0) {
            rc = 1;
            break;
        }
        if (old.events != now.events || old.avg_jct_s != now.avg_jct_s) {
            fprintf(stderr,
                    "schedscale: %d jobs: kept speeds decided differently (%zu events, "
                    "avg JCT %.17g s; recomputed: %zu, %.17g s)\n",
                    SIZES[z], now.events, now.avg_jct_s, old.events, old.avg_jct_s);
            rc = 1;
            break;
        }
        double po = old.cpu_s / SIZES[z], pn = now.cpu_s / SIZES[z];
        if (z == 0)
            base_old = po, base_new = pn;
        printf("%6d %10.2f %10.2f %11.1f %15.2f %15.2f\n", SIZES[z], old.cpu_s, now.cpu_s,
               old.cpu_s / now.cpu_s, po / base_old, pn / base_new);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "jobs", SIZES[z]);
        cJSON_AddNumberToObject(o, "before_cpu_s", old.cpu_s);
        cJSON_AddNumberToObject(o, "now_cpu_s", now.cpu_s);
        cJSON_AddNumberToObject(o, "before_over_now", old.cpu_s / now.cpu_s);
        cJSON_AddNumberToObject(o, "before_per_job_scaling", po / base_old);
        cJSON_AddNumberToObject(o, "now_per_job_scaling", pn / base_new);
        cJSON_AddNumberToObject(o, "avg_jct_s", now.avg_jct_s);
        cJSON_AddItemToArray(arr, o);
    }
    Error err;
    if (rc == 0 && out && jsonfile_write(out, root, &err) < 0) {
        fprintf(stderr, "schedscale: --out %s\n", err.msg);
        rc = 1;
    }
    cJSON_Delete(root);
    free(rows), free(names);
    for (int i = 0; i < WORKLOADS; i++)
        workload_free(w[i], wn[i]);
    catalogue_free(cat);
    return rc;
}
