/* `tunedeck tune`: a headless tuning session on the simulator or a real cluster; prints a
 * table, or with --json exactly one result object on standard output. */
#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "core/simcluster.h"
#include "remote/hostpool.h"
#include "remote/tuner.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck tune (--sim SETTING:NETWORK[:BATCH] | --cluster FILE --job FILE)\n"
            "                     [--launcher NAME] [--trial-cmd CMD] [--optimizer NAME]\n"
            "                     [--budget N] [--seed N] [--trial-timeout S] [--json]\n"
            "                     [--accept-new-host-keys]\n"
            "\n"
            "  --sim SPEC         tune on the embedded simulated cluster (%s)\n"
            "  --cluster FILE     a cluster inventory (JSON); with --job FILE, a job file\n"
            "  --launcher NAME    how trials run: %s (default: sim with --sim, else the\n"
            "                     inventory's trial.launch, else local)\n"
            "  --trial-cmd CMD    the trial command, run through /bin/sh -c; it reads the\n"
            "                     schedule on stdin and prints protocol v1 lines\n"
            "  --optimizer NAME   %s (default bespoke)\n"
            "  --budget N         trials to run (default 10)\n"
            "  --seed N           seed for the optimizer and the simulator (default 1)\n"
            "  --trial-timeout S  a trial running longer fails (default 600)\n"
            "  --json             print one JSON result object on stdout\n"
            "  --accept-new-host-keys  per-host/single: add unknown host keys to known_hosts\n"
            "                     (a changed key is always refused)\n",
            simcluster_settings_help(), launcher_names(), optimizer_names());
}

typedef struct {
    const char *sim, *cluster, *job, *launcher, *trial_cmd, *optimizer;
    long budget, seed;
    double timeout_s;
    int json, accept_keys;
} TuneArgs;

static int parse_args(int argc, char **argv, TuneArgs *a)
{
    static const struct option LONG[] = {
        {"sim", required_argument, 0, 'S'},       {"cluster", required_argument, 0, 'c'},
        {"job", required_argument, 0, 'j'},       {"launcher", required_argument, 0, 'l'},
        {"trial-cmd", required_argument, 0, 't'}, {"optimizer", required_argument, 0, 'o'},
        {"budget", required_argument, 0, 'b'},    {"seed", required_argument, 0, 's'},
        {"trial-timeout", required_argument, 0, 'T'}, {"json", no_argument, 0, 'J'},
        {"accept-new-host-keys", no_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->budget = 10;
    a->seed = 1;
    a->timeout_s = 600;
    a->optimizer = optimizer_find("bespoke") ? "bespoke" : "random";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'S': a->sim = optarg; break;
        case 'c': a->cluster = optarg; break;
        case 'j': a->job = optarg; break;
        case 'l': a->launcher = optarg; break;
        case 't': a->trial_cmd = optarg; break;
        case 'o': a->optimizer = optarg; break;
        case 'J': a->json = 1; break;
        case 'A': a->accept_keys = 1; break;
        case 'b':
            if (flags_long("tune", "--budget", optarg, 1, 100000, &a->budget) < 0)
                return 2;
            break;
        case 's':
            if (flags_long("tune", "--seed", optarg, 0, 1L << 62, &a->seed) < 0)
                return 2;
            break;
        case 'T':
            if (flags_double("tune", "--trial-timeout", optarg, 0.001, 1e7, &a->timeout_s) < 0)
                return 2;
            break;
        case 'h': usage(stdout); return 1;
        default:
            fprintf(stderr, "tunedeck tune: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck tune: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    if (!a->sim == !a->cluster) {
        fprintf(stderr, "tunedeck tune: expected either --sim SPEC or --cluster FILE --job FILE\n");
        return 2;
    }
    if (a->cluster && !a->job) {
        fprintf(stderr, "tunedeck tune: --cluster: expected a --job FILE with it\n");
        return 2;
    }
    if (a->sim && a->job) {
        fprintf(stderr, "tunedeck tune: --job: the simulator brings its own job; drop --job "
                        "or use --cluster\n");
        return 2;
    }
    return 0;
}

static cJSON *trial_json(const TrialRecord *r)
{
    cJSON *j = cJSON_CreateObject();
    const Observation *o = r->obs;
    cJSON_AddNumberToObject(j, "trial", r->trial);
    if (o && o->status == TRIAL_OK)
        cJSON_AddNumberToObject(j, "time_s", o->time_s);
    else
        cJSON_AddNullToObject(j, "time_s");
    cJSON_AddStringToObject(j, "status", o ? trial_status_name(o->status) : "running");
    if (o && o->reason[0])
        cJSON_AddStringToObject(j, "reason", o->reason);
    cJSON_AddNumberToObject(j, "suggest_ms", r->suggest_ms);
    if (r->suggestion.has_prediction) {
        cJSON_AddNumberToObject(j, "predicted_s", r->suggestion.mean_s);
        cJSON_AddNumberToObject(j, "predicted_p10_s", r->suggestion.p10_s);
        cJSON_AddNumberToObject(j, "predicted_p90_s", r->suggestion.p90_s);
    }
    if (r->overridden)
        cJSON_AddBoolToObject(j, "overridden", 1);
    cJSON_AddItemToObject(j, "schedule", schedule_to_json(r->suggestion.schedule));
    return j;
}

static void print_json(const Tuner *t, const TuneArgs *a)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "optimizer", tuner_optimizer_name(t));
    cJSON_AddNumberToObject(root, "budget", (double)a->budget);
    cJSON_AddNumberToObject(root, "seed", (double)a->seed);
    const TrialRecord *best = tuner_best(t);
    if (best) {
        cJSON_AddNumberToObject(root, "best_time_s", best->obs->time_s);
        cJSON_AddItemToObject(root, "best_schedule", schedule_to_json(best->suggestion.schedule));
    } else {
        cJSON_AddNullToObject(root, "best_time_s");
        cJSON_AddNullToObject(root, "best_schedule");
    }
    cJSON *trials = cJSON_AddArrayToObject(root, "trials");
    for (size_t i = 0; i < tuner_n_trials(t); i++)
        cJSON_AddItemToArray(trials, trial_json(tuner_trial(t, i)));
    char *text = cJSON_Print(root);
    puts(text);
    free(text);
    cJSON_Delete(root);
}

static void print_table(const Tuner *t)
{
    printf("%5s  %-11s %9s %9s %9s %3s %3s %9s  %s\n", "trial", "status", "time_s", "best_s",
           "predicted", "W", "PS", "suggest", "note");
    double best = INFINITY;
    for (size_t i = 0; i < tuner_n_trials(t); i++) {
        const TrialRecord *r = tuner_trial(t, i);
        const Observation *o = r->obs;
        const Schedule *s = r->suggestion.schedule;
        int ok = o && o->status == TRIAL_OK;
        if (ok && o->time_s < best)
            best = o->time_s;
        char time_buf[32] = "-", best_buf[32] = "-", pred_buf[32] = "-";
        if (ok)
            snprintf(time_buf, sizeof time_buf, "%.3f", o->time_s);
        if (isfinite(best))
            snprintf(best_buf, sizeof best_buf, "%.3f", best);
        if (r->suggestion.has_prediction)
            snprintf(pred_buf, sizeof pred_buf, "%.3f", r->suggestion.mean_s);
        printf("%5d  %-11s %9s %9s %9s %3d %3d %7.1fms  %s\n", r->trial,
               o ? trial_status_name(o->status) : "running", time_buf, best_buf, pred_buf,
               schedule_count_workers(s), schedule_count_ps(s), r->suggest_ms,
               o && o->reason[0] ? o->reason : "");
    }
    const TrialRecord *b = tuner_best(t);
    if (b)
        printf("best: trial %d, %.3f s per iteration\n", b->trial, b->obs->time_s);
}

int cmd_tune(int argc, char **argv)
{
    TuneArgs a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    Error err;
    SimCluster *sim = NULL;
    Cluster *owned_cluster = NULL;
    JobSpec job;
    memset(&job, 0, sizeof job);
    const Cluster *cluster;
    const JobSpec *jobp;
    if (a.sim) {
        sim = simcluster_new(a.sim, &err);
        if (!sim) {
            fprintf(stderr, "tunedeck tune: %s\n", err.msg);
            return 2;
        }
        cluster = simcluster_cluster(sim);
        jobp = simcluster_job(sim);
    } else {
        owned_cluster = cluster_load(a.cluster, &err);
        if (!owned_cluster) {
            fprintf(stderr, "tunedeck tune: %s\n", err.msg);
            return 2;
        }
        if (job_load(a.job, &job, &err) < 0) {
            fprintf(stderr, "tunedeck tune: %s\n", err.msg);
            cluster_free(owned_cluster);
            return 2;
        }
        cluster = owned_cluster;
        jobp = &job;
    }
    const char *lname = a.launcher ? a.launcher
                        : a.sim    ? "sim"
                        : cluster->trial.launch[0] ? cluster->trial.launch
                                                   : "local";
    const char *cmd = a.trial_cmd ? a.trial_cmd : cluster->trial.command;
    const LauncherKind *lk = launcher_find(lname);
    rc = 2;
    Tuner *t = NULL;
    HostPool *pool = NULL;
    if (!lk) {
        fprintf(stderr, "tunedeck tune: --launcher: unknown launcher '%s': expected one of %s\n",
                lname, launcher_names());
        goto out;
    }
    if (strcmp(lname, "sim") == 0 && !sim) {
        fprintf(stderr, "tunedeck tune: --launcher sim: expected --sim SPEC to say which "
                        "simulated cluster answers\n");
        goto out;
    }
    if (strcmp(lname, "sim") != 0 && (!cmd || !cmd[0])) {
        fprintf(stderr, "tunedeck tune: --trial-cmd: the %s launcher needs a trial command "
                        "(or trial.command in the inventory)\n",
                lname);
        goto out;
    }
    if (strcmp(lname, "per-host") == 0 || strcmp(lname, "single") == 0) {
        HostPoolOptions po = {.accept_new_host_keys = a.accept_keys,
                              .ssh_config = getenv("TUNEDECK_SSH_CONFIG")};
        pool = hostpool_new(&po, &err);
        if (!pool || hostpool_add_cluster(pool, cluster, &err) < 0) {
            fprintf(stderr, "tunedeck tune: --cluster: %s\n", err.msg);
            goto out;
        }
    }
    TunerConfig cfg = {
        .cluster = cluster,
        .job = jobp,
        .optimizer = a.optimizer,
        .seed = (uint64_t)a.seed,
        .budget = (int)a.budget,
        .launcher = lk,
        .launch = {.command = cmd, .timeout_s = a.timeout_s, .sim = sim,
                   .seed = (uint64_t)a.seed, .remote = pool},
    };
    t = tuner_new(&cfg, &err);
    if (!t) {
        fprintf(stderr, "tunedeck tune: --optimizer: %s\n", err.msg);
        goto out;
    }
    if (tuner_run_blocking(t, &err) < 0)
        fprintf(stderr, "tunedeck tune: the session stopped early: %s\n", err.msg);
    if (a.json)
        print_json(t, &a);
    else
        print_table(t);
    rc = tuner_best(t) ? 0 : 1;
    if (rc)
        fprintf(stderr, "tunedeck tune: no trial succeeded\n");
out:
    tuner_free(t);
    hostpool_free(pool);
    simcluster_free(sim);
    cluster_free(owned_cluster);
    job_clear(&job);
    return rc;
}
