/* Scheduler benchmark: our simulator and policies against the published Pollux-artifact
 * averages (Tiresias, Optimus+Oracle, Pollux) on the same workloads, the seed's Table 3
 * experiment beside the seed's figures, and decision time as the cluster grows.
 * Ratios are ours / published (lower is better for us); every figure is measured in this
 * run. Usage: scheduler [--out FILE.json] [--quick] */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"

char *openblas_get_corename(void);

/* data/README.md: published average JCT (s) over the eight workloads of each load. */
static const struct {
    const char *dir, *label;
    double tiresias, optimus, pollux; /* 0 = not published */
} LOADS[] = {
    {"workloads", "1x", 4038, 5682, 2751},
    {"workloads-0.5", "0.5x", 2092, 2395, 1534},
    {"workloads-1.5", "1.5x", 0, 0, 0},
    {"workloads-2.0", "2x", 10040, 9721, 5289},
};
static const char *const POLICIES[] = {"tiresias", "optimus", "doubling-seed", "doubling"};

/* The seed's Table 3: average JCT in hours on 64 GPUs. */
static const struct {
    const char *label;
    double mean_s;
    int jobs;
} SEED_LOADS[] = {{"extreme", 250, 206}, {"moderate", 500, 114}, {"none", 1000, 44}};
static const struct {
    const char *policy;
    double hours[3];
} SEED_TABLE3[] = {
    {"precompute", {7.63, 2.63, 1.40}},    {"exploratory", {20.42, 2.92, 1.47}},
    {"doubling-seed", {7.63, 2.63, 1.40}}, {"fixed-8", {22.76, 6.20, 1.40}},
    {"fixed-4", {12.90, 3.50, 2.21}},      {"fixed-2", {11.49, 4.58, 3.78}},
    {"fixed-1", {10.10, 6.32, 6.37}},
};

static int run_one(const Catalogue *cat, SchedConfig *cfg, const char *workload, double arrival_s,
                   int jobs, SchedSummary *out)
{
    Error e;
    SchedState *s = sched_new(cfg, cat, &e);
    if (!s ||
        (workload ? sched_load_workload(s, workload, &e)
                  : sched_add_poisson(s, "resnet110", arrival_s, jobs, &e)) < 0 ||
        sched_run(s, 1e8, &e) < 0) {
        fprintf(stderr, "scheduler bench: %s\n", e.msg);
        sched_free(s);
        return -1;
    }
    sched_summary(s, out);
    sched_free(s);
    return 0;
}

static cJSON *pollux_loads(const Catalogue *cat, const char *data, int quick)
{
    cJSON *arr = cJSON_CreateArray();
    printf(
        "\n-- Pollux workloads (16 nodes x 4 GPUs, 60 s interval, 30 s resize): average JCT, s\n");
    printf("%-5s %-13s %8s %9s %9s %9s\n", "load", "policy", "avg_jct", "/Tiresias", "/Optimus",
           "/Pollux");
    for (size_t l = 0; l < sizeof LOADS / sizeof LOADS[0]; l++) {
        for (size_t p = 0; p < sizeof POLICIES / sizeof POLICIES[0]; p++) {
            double sum = 0, resizes = 0;
            int n = 0;
            for (int w = 1; w <= 8; w++) {
                if (quick && w > 2)
                    break;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s/workload-%d.csv", data, LOADS[l].dir, w);
                SchedConfig cfg;
                sched_config_default(&cfg);
                cfg.policy = POLICIES[p];
                SchedSummary m;
                if (run_one(cat, &cfg, path, 0, 0, &m) < 0)
                    return arr;
                sum += m.avg_jct_s;
                resizes += m.resizes_per_job;
                n++;
            }
            double avg = sum / n;
            char r1[16] = "n/a", r2[16] = "n/a", r3[16] = "n/a";
            if (LOADS[l].tiresias) {
                snprintf(r1, sizeof r1, "%.3f", avg / LOADS[l].tiresias);
                snprintf(r2, sizeof r2, "%.3f", avg / LOADS[l].optimus);
                snprintf(r3, sizeof r3, "%.3f", avg / LOADS[l].pollux);
            }
            printf("%-5s %-13s %8.0f %9s %9s %9s   (%.2f resizes/job)\n", LOADS[l].label,
                   POLICIES[p], avg, r1, r2, r3, resizes / n);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "load", LOADS[l].label);
            cJSON_AddStringToObject(o, "policy", POLICIES[p]);
            cJSON_AddNumberToObject(o, "workloads", n);
            cJSON_AddNumberToObject(o, "avg_jct_s", avg);
            if (LOADS[l].tiresias) {
                cJSON_AddNumberToObject(o, "ratio_published_tiresias", avg / LOADS[l].tiresias);
                cJSON_AddNumberToObject(o, "ratio_published_optimus", avg / LOADS[l].optimus);
                cJSON_AddNumberToObject(o, "ratio_published_pollux", avg / LOADS[l].pollux);
            }
            cJSON_AddItemToArray(arr, o);
        }
    }
    return arr;
}

static cJSON *seed_table3(const Catalogue *cat)
{
    cJSON *arr = cJSON_CreateArray();
    printf("\n-- The seed's Table 3 (8 nodes x 8 GPUs, ResNet-110, Poisson arrivals): average "
           "JCT, hours (seed's in brackets)\n");
    printf("%-14s", "policy");
    for (int l = 0; l < 3; l++)
        printf(" %9s %-7s", SEED_LOADS[l].label, "");
    printf("\n");
    double fixed8[3] = {0}, pre[3] = {0};
    for (size_t p = 0; p < sizeof SEED_TABLE3 / sizeof SEED_TABLE3[0]; p++) {
        printf("%-14s", SEED_TABLE3[p].policy);
        for (int l = 0; l < 3; l++) {
            SchedConfig cfg;
            sched_config_default(&cfg);
            cfg.nodes = 8;
            cfg.gpus_per_node = 8;
            cfg.policy = SEED_TABLE3[p].policy;
            SchedSummary m;
            if (run_one(cat, &cfg, NULL, SEED_LOADS[l].mean_s, SEED_LOADS[l].jobs, &m) < 0)
                return arr;
            double h = m.avg_jct_s / 3600;
            printf(" %9.2f (%5.2f)", h, SEED_TABLE3[p].hours[l]);
            if (p == 0)
                pre[l] = h;
            if (strcmp(SEED_TABLE3[p].policy, "fixed-8") == 0)
                fixed8[l] = h;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "policy", SEED_TABLE3[p].policy);
            cJSON_AddStringToObject(o, "contention", SEED_LOADS[l].label);
            cJSON_AddNumberToObject(o, "avg_jct_h", h);
            cJSON_AddNumberToObject(o, "seed_avg_jct_h", SEED_TABLE3[p].hours[l]);
            cJSON_AddItemToArray(arr, o);
        }
        printf("\n");
    }
    printf("fixed-8 / precompute: %.2f, %.2f, %.2f (seed: %.2f, %.2f, %.2f)\n", fixed8[0] / pre[0],
           fixed8[1] / pre[1], fixed8[2] / pre[2], 22.76 / 7.63, 6.20 / 2.63, 1.40 / 1.40);
    return arr;
}

/* Decision time with many jobs active: N GPUs, N/4 jobs of mixed models at time 0. */
static cJSON *scaling(const Catalogue *cat, int quick)
{
    cJSON *arr = cJSON_CreateArray();
    const char *models[] = {"cifar10", "imagenet", "deepspeech2", "bert", "yolov3", "ncf"};
    const char *pols[] = {"doubling", "optimus", "tiresias"};
    int sizes[] = {64, 512, 4096, 16384};
    printf("\n-- Decision time per interval, CPU ms (median of the 7 decisions of 7 intervals; "
           "the first places every job), jobs = GPUs / 4\n");
    printf("%8s %6s %12s %12s %12s %16s\n", "GPUs", "jobs", "doubling_ms", "optimus_ms",
           "tiresias_ms", "doubling/optimus");
    for (int k = 0; k < 4; k++) {
        if (quick && sizes[k] > 4096)
            break;
        double ms[3];
        for (int p = 0; p < 3; p++) {
            SchedConfig cfg;
            sched_config_default(&cfg);
            cfg.nodes = sizes[k] / 4;
            cfg.policy = pols[p];
            Error e;
            SchedState *s = sched_new(&cfg, cat, &e);
            int jobs = sizes[k] / 4;
            for (int j = 0; s && j < jobs; j++) {
                char name[32];
                snprintf(name, sizeof name, "j%d", j);
                const char *m = models[(j * 7) % 6];
                sched_submit(s, &(SchedJobSpec){name, m, 0, 1 + j % 8, 0}, NULL);
            }
            /* The first decision places everything at once; the steady state follows. */
            if (!s || sched_advance(s, 7 * cfg.interval_s, &e) < 0) {
                fprintf(stderr, "scheduler bench: %s\n", e.msg);
                sched_free(s);
                return arr;
            }
            SchedSummary m;
            sched_summary(s, &m);
            ms[p] = m.decision_ms_median;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "gpus", sizes[k]);
            cJSON_AddNumberToObject(o, "jobs", jobs);
            cJSON_AddStringToObject(o, "policy", pols[p]);
            cJSON_AddNumberToObject(o, "decision_ms_median", m.decision_ms_median);
            cJSON_AddNumberToObject(o, "decision_ms_max", m.decision_ms_max);
            cJSON_AddItemToArray(arr, o);
            sched_free(s);
        }
        printf("%8d %6d %12.3f %12.3f %12.3f %16.2f\n", sizes[k], sizes[k] / 4, ms[0], ms[1], ms[2],
               ms[0] / ms[1]);
    }
    return arr;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: scheduler [--out FILE.json] [--quick]\n");
            return 2;
        }
    }
    char data[4096];
    const char *home = getenv("TUNEDECK_HOME");
    snprintf(data, sizeof data, "%s/" CATALOGUE_SUBDIR, home && *home ? home : TUNEDECK_SOURCE_DIR);
    Error e;
    Catalogue *cat = catalogue_load(data, &e);
    if (!cat) {
        fprintf(stderr, "scheduler bench: %s\n", e.msg);
        return 1;
    }
    printf("scheduler benchmark (OpenBLAS core: %s)%s\n", openblas_get_corename(),
           quick ? " [quick: 2 workloads per load]" : "");
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "openblas_core", openblas_get_corename());
    cJSON_AddItemToObject(root, "pollux", pollux_loads(cat, data, quick));
    cJSON_AddItemToObject(root, "seed_table3", seed_table3(cat));
    cJSON_AddItemToObject(root, "scaling", scaling(cat, quick));
    if (out) {
        FILE *f = fopen(out, "w");
        char *text = cJSON_Print(root);
        if (!f || !text || fputs(text, f) < 0) {
            fprintf(stderr, "scheduler bench: cannot write %s\n", out);
            return 1;
        }
        fclose(f);
        free(text);
    }
    cJSON_Delete(root);
    catalogue_free(cat);
    return 0;
}
