/* `tunedeck schedule`: the cluster scheduler on a trace or Poisson arrivals, headless. */
#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/interrupts.h"
#include "cmd/paths.h"
#include "cmd/schedule_cli.h"
#include "core/base/exitcode.h"
#include "core/base/jsonprint.h"
#include "core/base/plural.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "core/sched/schedcluster.h"

#define CMD "schedule"
#define MAX_PINS 64
#define MAX_CHANGES 64

static const char USAGE[] =
    "usage: tunedeck schedule (--workload FILE | --arrival-mean S --jobs N) [--policy P]\n"
    "                         [--nodes N] [--gpus-per-node G] [--cluster FILE]\n"
    "                         [--interval S] [--resize-cost S] [--seed N] [--model M]\n"
    "                         [--json] [--events FILE] [--data DIR] [--pin JOB=GPUS]...\n"
    "                         [--drain NODE[@S]]... [--hold NODE=GPUS[@S]]...\n"
    "Simulates ring-allreduce jobs on nodes × GPUs (default 16 × 4, 60 s interval,\n"
    "30 s resize stall: the Pollux artifact's setting). --cluster reads a mixed cluster\n"
    "(node groups of GPU counts and types with relative speeds, see docs/formats.md) in\n"
    "place of --nodes and --gpus-per-node. --workload reads\n"
    "name,time,application,num_replicas,batch_size CSV; --arrival-mean draws N jobs\n"
    "of --model (default resnet110) with exponential inter-arrival times.\n"
    "--policy P picks the policy (default doubling, as with --live).\n"
    "--events writes every start, resize, stop and finish as JSON lines.\n"
    "--pin JOB=GPUS holds a job at a GPU count; the policy allocates around it.\n"
    "--drain NODE takes a node (node00, node01, ...) out of the cluster and --hold\n"
    "NODE=GPUS counts GPUs of it as someone else's, from the start or from simulated\n"
    "second S (@S); the GPU utilization counts them out while they are. A run in which\n"
    "no job can ever run again stops with an error that names the waiting jobs. --live\n"
    "runs the decisions on real jobs over SSH or Slurm (tunedeck schedule --live --help).\n";

typedef struct {
    SchedConfig cfg;
    const char *workload, *events, *model, *data, *cluster;
    int nodes_set, model_set, seed_set; /* --nodes or --gpus-per-node; --model; --seed given */
    double arrival_s;
    long jobs;
    const char *pins[MAX_PINS];
    int n_pins;
    const char *changes[MAX_CHANGES]; /* --drain NODE[@S] and --hold NODE=GPUS[@S] as given */
    int drains[MAX_CHANGES];          /* 1 for a --drain */
    int n_changes;
    int json;
} ScheduleArgs;

enum {
    O_WORKLOAD = 1,
    O_ARRIVAL,
    O_JOBS,
    O_POLICY,
    O_NODES,
    O_GPN,
    O_CLUSTER,
    O_INTERVAL,
    O_RESIZE,
    O_SEED,
    O_JSON,
    O_EVENTS,
    O_MODEL,
    O_DATA,
    O_PIN,
    O_DRAIN,
    O_HOLD,
    O_HELP
};

/* One option into a; returns 0, or the exit status (2) after saying what was wrong. */
static int parse_option(ScheduleArgs *a, int c, const char *arg)
{
    long v;
    switch (c) {
    case O_WORKLOAD:
        a->workload = arg;
        return 0;
    case O_ARRIVAL:
        return flags_double(CMD, "--arrival-mean", arg, 1e-3, 1e9, &a->arrival_s) ? 2 : 0;
    case O_JOBS:
        return flags_long(CMD, "--jobs", arg, 1, 1000000, &a->jobs) ? 2 : 0;
    case O_POLICY:
        a->cfg.policy = arg;
        return 0;
    case O_NODES:
        if (flags_long(CMD, "--nodes", arg, 1, 1 << 20, &v))
            return EXIT_USAGE;
        a->cfg.nodes = (int)v;
        a->nodes_set = 1;
        return 0;
    case O_GPN:
        if (flags_long(CMD, "--gpus-per-node", arg, 1, 64, &v))
            return EXIT_USAGE;
        a->cfg.gpus_per_node = (int)v;
        a->nodes_set = 1;
        return 0;
    case O_CLUSTER:
        a->cluster = arg;
        return 0;
    case O_INTERVAL:
        return flags_double(CMD, "--interval", arg, 1e-3, 1e7, &a->cfg.interval_s) ? 2 : 0;
    case O_RESIZE:
        return flags_double(CMD, "--resize-cost", arg, 0, 1e7, &a->cfg.resize_cost_s) ? 2 : 0;
    case O_SEED:
        if (flags_long(CMD, "--seed", arg, 0, 1L << 62, &v))
            return EXIT_USAGE;
        a->cfg.seed = (uint64_t)v;
        a->seed_set = 1;
        return 0;
    case O_JSON:
        a->json = 1;
        return 0;
    case O_EVENTS:
        a->events = arg;
        return 0;
    case O_MODEL:
        a->model = arg;
        a->model_set = 1;
        return 0;
    case O_DATA:
        a->data = arg;
        return 0;
    case O_PIN:
        if (a->n_pins == MAX_PINS || !strchr(arg, '=')) {
            char msg[300];
            snprintf(msg, sizeof msg, "--pin: expected JOB=GPUS (at most %d), found '%s'", MAX_PINS,
                     arg);
            return schedule_fail(CMD, msg);
        }
        a->pins[a->n_pins++] = arg;
        return 0;
    case O_DRAIN:
    case O_HOLD:
        if (a->n_changes == MAX_CHANGES) {
            char msg[100];
            snprintf(msg, sizeof msg, "at most %d --drain and --hold in all", MAX_CHANGES);
            return schedule_fail(CMD, msg);
        }
        a->drains[a->n_changes] = c == O_DRAIN;
        a->changes[a->n_changes++] = arg;
        return 0;
    }
    return EXIT_USAGE;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, ScheduleArgs *a)
{
    static const struct option LONG[] = {{"workload", required_argument, 0, O_WORKLOAD},
                                         {"arrival-mean", required_argument, 0, O_ARRIVAL},
                                         {"jobs", required_argument, 0, O_JOBS},
                                         {"policy", required_argument, 0, O_POLICY},
                                         {"nodes", required_argument, 0, O_NODES},
                                         {"gpus-per-node", required_argument, 0, O_GPN},
                                         {"cluster", required_argument, 0, O_CLUSTER},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"resize-cost", required_argument, 0, O_RESIZE},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"json", no_argument, 0, O_JSON},
                                         {"events", required_argument, 0, O_EVENTS},
                                         {"model", required_argument, 0, O_MODEL},
                                         {"data", required_argument, 0, O_DATA},
                                         {"pin", required_argument, 0, O_PIN},
                                         {"drain", required_argument, 0, O_DRAIN},
                                         {"hold", required_argument, 0, O_HOLD},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    *a = (ScheduleArgs){.model = "resnet110"};
    sched_config_default(&a->cfg);
    /* The same default as schedule --live: one command, one default (DESIGN.md names none;
       requiring it here alone surprised an operator who had just run --live without it). */
    a->cfg.policy = "doubling";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = flags_getopt(CMD, argc, argv, LONG, NULL)) != -1) {
        if (c == O_HELP || c == 'h') {
            schedule_usage(stdout, USAGE);
            return 0;
        }
        if (c == FLAGS_REFUSED)
            return EXIT_USAGE; /* flags_getopt said why */
        int rc = parse_option(a, c, optarg);
        if (rc)
            return rc;
    }
    if (optind != argc) {
        char msg[300];
        snprintf(msg, sizeof msg, "unexpected argument '%s'", argv[optind]);
        return schedule_fail(CMD, msg);
    }
    if (!a->workload == !(a->arrival_s > 0))
        return schedule_fail(
            CMD, "expected exactly one of --workload FILE and --arrival-mean S --jobs N");
    if (a->arrival_s > 0 && a->jobs < 1)
        return schedule_fail(CMD, "--arrival-mean needs --jobs N");
    /* Options the other way of giving jobs or nodes would silently drop. */
    if (a->workload && (a->jobs || a->model_set))
        return schedule_fail(CMD, "--jobs and --model: expected --arrival-mean with them (a "
                                  "--workload names its jobs and their applications)");
    /* The seed draws only the Poisson arrivals: with a --workload it was taken and did
     * nothing, so two runs "with different seeds" were the same run. */
    if (a->workload && a->seed_set)
        return schedule_fail(CMD, "--seed: expected --arrival-mean with it (it draws the Poisson "
                                  "arrivals; a --workload's runs are the same for every seed)");
    const char *inputs[] = {a->workload ? a->workload : "", a->cluster ? a->cluster : "", NULL};
    if (schedule_events_over_input(a->events, inputs))
        return schedule_fail(CMD, "--events: expected a file other than the --workload or "
                                  "--cluster it reads (it would be written over)");
    if (a->cluster && a->nodes_set)
        return schedule_fail(CMD, "--nodes and --gpus-per-node: expected no --cluster with "
                                  "them (the --cluster file gives the nodes)");
    return -1;
}

static int apply_pins(SchedState *s, const ScheduleArgs *a)
{
    for (int i = 0; i < a->n_pins; i++) {
        char name[256], msg[600];
        const char *eq = strchr(a->pins[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - a->pins[i]), a->pins[i]);
        int job = sched_job_find(s, name);
        long gpus;
        Error err;
        if (job < 0) {
            snprintf(msg, sizeof msg, "--pin: no job named '%s' in the workload", name);
            return schedule_fail(CMD, msg);
        }
        /* A pin of 0 is the core's "no pin" (the console's unpin): on the command line it
         * was accepted and then did nothing, so an operator meaning "hold it off" was
         * silently ignored. A second pin of one job silently replaced the first. */
        if (flags_long(CMD, "--pin", eq + 1, 1, 1 << 30, &gpus) < 0)
            return EXIT_USAGE;
        for (int k = 0; k < i; k++)
            if (strncmp(a->pins[k], a->pins[i], (size_t)(eq - a->pins[i]) + 1) == 0) {
                snprintf(msg, sizeof msg, "--pin: job '%s' pinned twice (%s, then %s): "
                         "expected one pin per job", name, a->pins[k], a->pins[i]);
                return schedule_fail(CMD, msg);
            }
        if (sched_pin(s, (size_t)job, (int)gpus, &err) < 0) {
            snprintf(msg, sizeof msg, "--pin %s: %s", a->pins[i], err.msg);
            return schedule_fail(CMD, msg);
        }
    }
    return 0;
}

/* A --drain or --hold, resolved against the state's node names. */
typedef struct {
    int node, gpus; /* gpus < 0: drain */
    double at_s;
} NodeChange;

static int change_cmp(const void *pa, const void *pb)
{
    const NodeChange *a = pa, *b = pb;
    return (a->at_s > b->at_s) - (a->at_s < b->at_s);
}

/* "NODE[@S]" (drain) or "NODE=GPUS[@S]" (hold) into *c; returns 0 or the exit status. */
static int parse_change(const SchedState *s, const char *text, int drain, NodeChange *c)
{
    const char *flag = drain ? "--drain" : "--hold";
    char node[256], msg[700];
    size_t name_len = strcspn(text, drain ? "@" : "=@");
    snprintf(node, sizeof node, "%.*s", (int)name_len, text);
    const char *rest = text + name_len;
    *c = (NodeChange){-1, -1, 0};
    for (int i = 0; i < sched_node_count(s); i++)
        if (strcmp(sched_node_name(s, i), node) == 0)
            c->node = i;
    if (c->node < 0) {
        snprintf(msg, sizeof msg, "%s '%s': expected a node of the cluster (%s..%s), found '%s'",
                 flag, text, sched_node_name(s, 0), sched_node_name(s, sched_node_count(s) - 1),
                 node);
        return schedule_fail(CMD, msg);
    }
    char num[64], label[300]; /* the whole argument: with several --hold, which one */
    snprintf(label, sizeof label, "%s '%s'", flag, text);
    if (!drain) {
        if (*rest != '=') {
            snprintf(msg, sizeof msg, "%s '%s': expected NODE=GPUS[@S]", flag, text);
            return schedule_fail(CMD, msg);
        }
        size_t n = strcspn(rest + 1, "@");
        snprintf(num, sizeof num, "%.*s", (int)n, rest + 1);
        long g;
        if (flags_long(CMD, label, num, 0, sched_node_gpu_count(s, c->node), &g) < 0)
            return EXIT_USAGE;
        c->gpus = (int)g;
        rest += 1 + n;
    }
    if (*rest == '@' && flags_double(CMD, label, rest + 1, 0, 1e9, &c->at_s) < 0)
        return EXIT_USAGE;
    return 0;
}

/* Two changes of one node at one time (`--hold node00=2 --hold node00=3`, or a drain and a
 * hold): one silently replaced the other, and which one was left to qsort, whose order of
 * equal times is not the command line's. Refused, as a second pin of a job is. */
static int refuse_same_time(const ScheduleArgs *a, const NodeChange *ch)
{
    for (int i = 0; i < a->n_changes; i++)
        for (int k = 0; k < i; k++)
            if (ch[k].node == ch[i].node && ch[k].at_s == ch[i].at_s) {
                char msg[900];
                snprintf(msg, sizeof msg,
                         "%s '%s': the node is changed twice at %g s (%s '%s', then this one): "
                         "expected one --drain or --hold of a node at a time",
                         a->drains[i] ? "--drain" : "--hold", a->changes[i], ch[i].at_s,
                         a->drains[k] ? "--drain" : "--hold", a->changes[k]);
                return schedule_fail(CMD, msg);
            }
    return 0;
}

/* SIGINT or SIGTERM during the simulation: a 100,000-job trace runs for minutes, and the
 * signal used to end it at once, leaving the --events file, opened (emptied) before the run,
 * empty. Now the run stops at the next chunk of decisions, the events so far are written and
 * tunedeck then ends by the signal. A signal ignored at start stays ignored. */
static volatile sig_atomic_t interrupted_by;

static void on_interrupt(int sig)
{
    interrupted_by = sig;
}

/* sched_run to max_s in chunks of 100 decisions, stopping early once a signal is noted. The
 * decisions are the same as one sched_run's: it steps by the interval either way, and its
 * stuck guard reads the state, not the call. */
static int run_until(SchedState *s, double max_s, double interval_s, Error *err)
{
    double chunk_s = 100 * interval_s;
    while (!interrupted_by && !sched_finished(s) && sched_now(s) < max_s)
        if (sched_run(s, fmin(max_s, sched_now(s) + chunk_s), err) < 0)
            return -1;
    return 0;
}

/* The simulated time a run stops at. Jobs that still progress there (a --cluster GPU speed of
 * 1e-300, a trace of years) are not stuck, so the stuck guard does not end the run. */
#define SIM_LIMIT_S 1e9

/* Runs the simulation to its end, draining and holding as the arguments ask, in time order:
 * each change takes effect at the first decision at or after its time. */
static int run_with_changes(SchedState *s, NodeChange *ch, int n, double interval_s, Error *err)
{
    qsort(ch, (size_t)n, sizeof *ch, change_cmp);
    for (int i = 0; i < n; i++) {
        if (run_until(s, ch[i].at_s, interval_s, err) < 0)
            return -1;
        if (interrupted_by)
            break;
        if ((ch[i].gpus < 0 ? sched_drain_node(s, ch[i].node, 1, err)
                            : sched_hold_gpus(s, ch[i].node, ch[i].gpus, err)) < 0)
            return -1;
    }
    return run_until(s, SIM_LIMIT_S, interval_s, err);
}

/* The state with its jobs and pins, on the cluster the arguments describe. */
static SchedState *build_state(ScheduleArgs *a, const Catalogue *cat, int *rc)
{
    Error err;
    SchedCluster *cl = NULL;
    *rc = EXIT_USAGE;
    if (a->cluster) {
        if (!(cl = schedcluster_load(a->cluster, &err)))
            return *rc = schedule_fail_error(CMD, &err), NULL;
        schedcluster_apply(cl, &a->cfg);
    }
    SchedState *s = sched_new(&a->cfg, cat, &err);
    schedcluster_free(cl); /* the state copied what it needs */
    a->cfg.groups = NULL;
    a->cfg.n_groups = 0;
    if (!s)
        return schedule_fail(CMD, err.msg), NULL;
    if ((a->workload ? sched_load_workload(s, a->workload, &err)
                     : sched_add_poisson(s, a->model, a->arrival_s, (int)a->jobs, &err)) < 0) {
        *rc = schedule_fail_error(CMD, &err);
        sched_free(s);
        return NULL;
    }
    if (apply_pins(s, a) != 0) {
        sched_free(s);
        return NULL;
    }
    *rc = 0;
    return s;
}

/* The --events file is opened before the run: a path that cannot be written was found only
 * after the whole simulation, which was then thrown away, its summary never printed. */
static FILE *open_events(const char *path, int *rc)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        char msg[4200];
        snprintf(msg, sizeof msg, "--events: cannot write '%s': %s", path, strerror(errno));
        *rc = schedule_fail(CMD, msg);
    }
    return f;
}

/* Writes and closes f. A failure (a full disk) is said, with exit 1, and the summary of the
 * run is still printed: it was measured. */
static int write_events(const SchedState *s, FILE *f, const char *path)
{
    for (size_t i = 0; i < sched_event_count(s); i++) {
        char *line = sched_event_json(s, sched_event(s, i));
        if (line)
            fprintf(f, "%s\n", line);
        free(line);
    }
    int failed = ferror(f), e = errno;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        fprintf(stderr, "tunedeck %s: --events: write to '%s' failed: %s\n", CMD, path,
                strerror(e));
        return EXIT_FAILED;
    }
    return 0;
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
    cJSON_AddNumberToObject(o, "gpu_s_lost_to_starts", m->gpu_s_lost_to_starts);
    cJSON_AddNumberToObject(o, "decision_ms_median", m->decision_ms_median);
    char *text = jsonprint_text(o, 0);
    puts(text);
    free(text);
    cJSON_Delete(o);
}

static void print_summary(const char *policy, const SchedSummary *m, int json)
{
    if (json) {
        print_json(policy, m);
        return;
    }
    printf("policy %s: %zu job%s, average JCT %.0f s (p50 %.0f, p99 %.0f), makespan "
           "%.0f s,\nGPU utilization %.1f%%, %.2f resizes per job, %.0f GPU-s lost to "
           "resizes (%.0f more to first starts), decision %.3f ms median\n",
           policy, m->jobs, plural_s((long long)m->jobs), m->avg_jct_s, m->p50_jct_s, m->p99_jct_s,
           m->makespan_s, 100 * m->gpu_utilization, m->resizes_per_job, m->gpu_s_lost_to_resizes,
           m->gpu_s_lost_to_starts, m->decision_ms_median);
}

int cmd_schedule(int argc, char **argv)
{
    ScheduleArgs a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    Error err;
    Catalogue *cat = catalogue_load(a.data ? a.data : paths_catalogue(), &err);
    if (!cat)
        return schedule_fail_error(CMD, &err);
    Interrupts old_sigs;
    interrupts_catch(&old_sigs, on_interrupt);
    SchedState *s = build_state(&a, cat, &rc);
    NodeChange changes[MAX_CHANGES];
    for (int i = 0; s && rc == 0 && i < a.n_changes; i++)
        rc = parse_change(s, a.changes[i], a.drains[i], &changes[i]);
    if (s && rc == 0)
        rc = refuse_same_time(&a, changes);
    FILE *events = s && rc == 0 && a.events ? open_events(a.events, &rc) : NULL;
    int stopped = 0;
    if (s && rc == 0 && run_with_changes(s, changes, a.n_changes, a.cfg.interval_s, &err) < 0) {
        schedule_fail(CMD, err.msg);
        stopped = 1; /* the run failed (it could not end): its events so far are still kept */
    }
    int events_failed = events && write_events(s, events, a.events) != 0;
    if (stopped && rc == 0)
        rc = EXIT_FAILED;
    if (s && rc == 0 && interrupted_by) {
        SchedSummary so_far;
        sched_summary(s, &so_far);
        fprintf(stderr,
                "tunedeck %s: interrupted at t=%.0f s, %zu of %zu job%s finished, no "
                "summary%s%s\n",
                CMD, sched_now(s), so_far.done, so_far.jobs, plural_s((long long)so_far.jobs),
                a.events ? "; the events so far are in " : "", a.events ? a.events : "");
        sched_free(s);
        catalogue_free(cat);
        int sig = interrupted_by;
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    /* A run stopped at SIM_LIMIT_S with jobs unfinished printed its summary as a whole run's,
     * exit 0: "160 jobs, average JCT 0 s, makespan 0 s" over no finished job. */
    if (s && rc == 0 && !sched_finished(s)) {
        SchedSummary so_far;
        sched_summary(s, &so_far);
        fprintf(
            stderr,
            "tunedeck %s: stopped at the simulated-time limit (t=%.0f s, at most %.0f "
            "s): %zu of %zu job%s finished, no summary (it would be of part of the trace)%s%s\n",
            CMD, sched_now(s), SIM_LIMIT_S, so_far.done, so_far.jobs,
            plural_s((long long)so_far.jobs), a.events ? "; the events so far are in " : "",
            a.events ? a.events : "");
        rc = EXIT_FAILED;
    }
    if (s && rc == 0) {
        SchedSummary m;
        sched_summary(s, &m);
        print_summary(a.cfg.policy, &m, a.json);
        rc = events_failed ? EXIT_FAILED : 0;
    }
    sched_free(s);
    catalogue_free(cat);
    return rc;
}
