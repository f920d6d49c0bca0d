/* `tunedeck schedule`: the cluster scheduler on a trace or Poisson arrivals, headless. */
#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/paths.h"
#include "core/base/exitcode.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck schedule (--workload FILE | --arrival-mean S --jobs N) --policy P\n"
            "                         [--nodes N] [--gpus-per-node G] [--interval S]\n"
            "                         [--resize-cost S] [--seed N] [--model M] [--json]\n"
            "                         [--events FILE] [--data DIR] [--pin JOB=GPUS]...\n"
            "Simulates ring-allreduce jobs on nodes × GPUs (default 16 × 4, 60 s interval,\n"
            "30 s resize stall: the Pollux artifact's setting). --workload reads\n"
            "name,time,application,num_replicas,batch_size CSV; --arrival-mean draws N jobs\n"
            "of --model (default resnet110) with exponential inter-arrival times.\n"
            "--events writes every start, resize, stop and finish as JSON lines.\n"
            "--pin JOB=GPUS holds a job at a GPU count; the policy allocates around it.\n"
            "policies:");
    for (const char *const *p = sched_policy_names(); *p; p++)
        fprintf(out, " %s", *p);
    fprintf(out, " (also: precompute, exploratory)\n");
}

static int fail(const char *msg)
{
    fprintf(stderr, "tunedeck schedule: %s\n", msg);
    return EXIT_USAGE;
}

/* A failure with its Error: a bad input file gets its own status. */
static int fail_error(const Error *err)
{
    fail(err->msg);
    return exitcode_for(err, EXIT_USAGE);
}

static void print_json(const char *policy, const SchedSummary *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "policy", policy);
    cJSON_AddNumberToObject(o, "jobs", (double)m->jobs);
    cJSON_AddNumberToObject(o, "avg_jct_s", m->avg_jct_s);
    cJSON_AddNumberToObject(o, "p50_jct_s", m->p50_jct_s);
    cJSON_AddNumberToObject(o, "p99_jct_s", m->p99_jct_s);
    cJSON_AddNumberToObject(o, "makespan_s", m->makespan_s);
    cJSON_AddNumberToObject(o, "gpu_utilization", m->gpu_utilization);
    cJSON_AddNumberToObject(o, "resizes_per_job", m->resizes_per_job);
    cJSON_AddNumberToObject(o, "gpu_s_lost_to_resizes", m->gpu_s_lost_to_resizes);
    cJSON_AddNumberToObject(o, "decision_ms_median", m->decision_ms_median);
    char *text = cJSON_PrintUnformatted(o);
    puts(text);
    free(text);
    cJSON_Delete(o);
}

int cmd_schedule(int argc, char **argv)
{
    enum {
        O_WORKLOAD = 1,
        O_ARRIVAL,
        O_JOBS,
        O_POLICY,
        O_NODES,
        O_GPN,
        O_INTERVAL,
        O_RESIZE,
        O_SEED,
        O_JSON,
        O_EVENTS,
        O_MODEL,
        O_DATA,
        O_PIN,
        O_HELP
    };
    static const struct option LONG[] = {{"workload", required_argument, 0, O_WORKLOAD},
                                         {"arrival-mean", required_argument, 0, O_ARRIVAL},
                                         {"jobs", required_argument, 0, O_JOBS},
                                         {"policy", required_argument, 0, O_POLICY},
                                         {"nodes", required_argument, 0, O_NODES},
                                         {"gpus-per-node", required_argument, 0, O_GPN},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"resize-cost", required_argument, 0, O_RESIZE},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"json", no_argument, 0, O_JSON},
                                         {"events", required_argument, 0, O_EVENTS},
                                         {"model", required_argument, 0, O_MODEL},
                                         {"data", required_argument, 0, O_DATA},
                                         {"pin", required_argument, 0, O_PIN},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    SchedConfig cfg;
    sched_config_default(&cfg);
    cfg.policy = NULL;
    const char *workload = NULL, *events = NULL, *model = "resnet110", *data = NULL;
    double arrival = 0;
    const char *pins[64];
    int npins = 0;
    long jobs = 0, v;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case O_WORKLOAD:
            workload = optarg;
            break;
        case O_ARRIVAL:
            bad = flags_double("schedule", "--arrival-mean", optarg, 1e-3, 1e9, &arrival);
            break;
        case O_JOBS:
            bad = flags_long("schedule", "--jobs", optarg, 1, 1000000, &jobs);
            break;
        case O_POLICY:
            cfg.policy = optarg;
            break;
        case O_NODES:
            bad = flags_long("schedule", "--nodes", optarg, 1, 1 << 20, &v);
            cfg.nodes = (int)v;
            break;
        case O_GPN:
            bad = flags_long("schedule", "--gpus-per-node", optarg, 1, 64, &v);
            cfg.gpus_per_node = (int)v;
            break;
        case O_INTERVAL:
            bad = flags_double("schedule", "--interval", optarg, 1e-3, 1e7, &cfg.interval_s);
            break;
        case O_RESIZE:
            bad = flags_double("schedule", "--resize-cost", optarg, 0, 1e7, &cfg.resize_cost_s);
            break;
        case O_SEED:
            bad = flags_long("schedule", "--seed", optarg, 0, 1L << 62, &v);
            cfg.seed = (uint64_t)v;
            break;
        case O_JSON:
            json = 1;
            break;
        case O_EVENTS:
            events = optarg;
            break;
        case O_MODEL:
            model = optarg;
            break;
        case O_DATA:
            data = optarg;
            break;
        case O_PIN:
            if (npins == 64 || !strchr(optarg, '=')) {
                fprintf(stderr,
                        "tunedeck schedule: --pin: expected JOB=GPUS (at most 64), "
                        "found '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            pins[npins++] = optarg;
            break;
        case O_HELP:
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (optind != argc) {
        fprintf(stderr, "tunedeck schedule: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!cfg.policy)
        return fail("--policy: expected a policy name (see --help)");
    if (!workload == !(arrival > 0))
        return fail("expected exactly one of --workload FILE and --arrival-mean S --jobs N");
    if (arrival > 0 && jobs < 1)
        return fail("--arrival-mean needs --jobs N");
    Error err;
    Catalogue *cat = catalogue_load(data ? data : paths_catalogue(), &err);
    if (!cat)
        return fail_error(&err);
    SchedState *s = sched_new(&cfg, cat, &err);
    int rc = 0;
    if (!s)
        rc = fail(err.msg);
    else if (workload ? sched_load_workload(s, workload, &err)
                      : sched_add_poisson(s, model, arrival, (int)jobs, &err))
        rc = fail_error(&err);
    for (int i = 0; rc == 0 && i < npins; i++) {
        char name[256];
        const char *eq = strchr(pins[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - pins[i]), pins[i]);
        int job = sched_job_find(s, name);
        long gpus;
        if (job < 0) {
            fprintf(stderr, "tunedeck schedule: --pin: no job named '%s' in the workload\n", name);
            rc = EXIT_USAGE;
        } else if (flags_long("schedule", "--pin", eq + 1, 0, 1 << 30, &gpus) < 0) {
            rc = EXIT_USAGE;
        } else if (sched_pin(s, (size_t)job, (int)gpus, &err) < 0) {
            fprintf(stderr, "tunedeck schedule: --pin %s: %s\n", pins[i], err.msg);
            rc = EXIT_USAGE;
        }
    }
    if (rc == 0 && sched_run(s, 1e9, &err) < 0)
        rc = fail(err.msg);
    if (rc == 0 && events) {
        FILE *f = fopen(events, "w");
        if (!f) {
            fprintf(stderr, "tunedeck schedule: --events: cannot write '%s'\n", events);
            rc = EXIT_USAGE;
        }
        for (size_t i = 0; f && i < sched_event_count(s); i++) {
            char *line = sched_event_json(s, sched_event(s, i));
            if (line)
                fprintf(f, "%s\n", line);
            free(line);
        }
        if (f && fclose(f) != 0) {
            fprintf(stderr, "tunedeck schedule: --events: write to '%s' failed\n", events);
            rc = EXIT_USAGE;
        }
    }
    if (rc == 0) {
        SchedSummary m;
        sched_summary(s, &m);
        if (json)
            print_json(cfg.policy, &m);
        else
            printf("policy %s: %zu jobs, average JCT %.0f s (p50 %.0f, p99 %.0f), makespan "
                   "%.0f s,\nGPU utilization %.1f%%, %.2f resizes per job, %.0f GPU-s lost to "
                   "resizes, decision %.3f ms median\n",
                   cfg.policy, m.jobs, m.avg_jct_s, m.p50_jct_s, m.p99_jct_s, m.makespan_s,
                   100 * m.gpu_utilization, m.resizes_per_job, m.gpu_s_lost_to_resizes,
                   m.decision_ms_median);
    }
    sched_free(s);
    catalogue_free(cat);
    return rc;
}
