/* `tunedeck schedule --live`: the scheduler in wall-clock time, its decisions enacted on real
 * jobs on the inventory's hosts over SSH (remote/live/schedlive.h). */
#include <cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "core/sched/catalogue.h"
#include "core/base/clock.h"
#include "core/model/cluster.h"
#include "core/sched/sched.h"
#include "remote/ssh/hostpool.h"
#include "remote/live/schedlive.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck schedule --live --cluster FILE --workload FILE [--policy P]\n"
            "           [--interval S] [--time-scale X] [--resize-cost S] [--duration S]\n"
            "           [--events FILE] [--job-dir DIR] [--checkpoint-file NAME]\n"
            "           [--gpus-per-node G] [--status-every S] [--seed N] [--data DIR]\n"
            "           [--real-progress] [--accept-new-host-keys]\n"
            "Runs the scheduler live: node i is machine i of the inventory, time runs at\n"
            "--time-scale simulated seconds per wall second (default 1), the policy (default\n"
            "doubling) decides every --interval simulated seconds (default 60), and every\n"
            "start, resize, stop and finish is enacted on a real job started from the\n"
            "inventory's job_command ({gpus} {hosts} {resume}) in DIR/NAME on the placement's\n"
            "first machine (DIR: --job-dir, default tunedeck-jobs). A resize checkpoints\n"
            "(SIGTERM), stops and restarts the job from its checkpoint. GPUs per node come\n"
            "from the inventory's GPU devices. A job that dies unasked is restarted from its\n"
            "checkpoint once. The run ends when the model's jobs are done, after --duration\n"
            "wall seconds or on Ctrl-C: every job is checkpointed and stopped. --events\n"
            "writes the decisions and the jobs' real progress as JSON lines. Exit 1 when a\n"
            "job failed. --real-progress feeds each job's epoch from its progress lines to\n"
            "the model, so a job finishes when the real one reaches its epoch count.\n"
            "policies:");
    for (const char *const *p = sched_policy_names(); *p; p++)
        fprintf(out, " %s", *p);
    fprintf(out, "\n");
}

static int fail(const char *msg)
{
    fprintf(stderr, "tunedeck schedule --live: %s\n", msg);
    return 2;
}

typedef struct {
    double t0;
    FILE *events;
} LogCtx;

static void log_line(void *ud, const char *line)
{
    LogCtx *c = ud;
    printf("[%6.1fs] %s\n", clock_now_s() - c->t0, line);
    fflush(stdout);
}

/* One progress record of the --events stream; cJSON quotes the job name, which comes from
 * the workload file and may hold any character. */
static void write_progress(FILE *out, double wall_s, double time_s, const SchedLiveJob *j)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "wall_s", wall_s);
    cJSON_AddNumberToObject(o, "time_s", time_s);
    cJSON_AddStringToObject(o, "event", "progress");
    cJSON_AddStringToObject(o, "job", j->name);
    cJSON_AddBoolToObject(o, "running", j->running);
    cJSON_AddNumberToObject(o, "gpus", j->gpus);
    cJSON_AddNumberToObject(o, "step", (double)j->step);
    cJSON_AddNumberToObject(o, "epoch", j->epoch);
    cJSON_AddNumberToObject(o, "loss", j->loss);
    cJSON_AddNumberToObject(o, "examples_per_s", j->examples_per_s);
    cJSON_AddNumberToObject(o, "model_progress", j->model_progress);
    char *text = cJSON_PrintUnformatted(o);
    if (text)
        fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(o);
}

static void status_lines(SchedLive *l, LogCtx *c, int to_stdout)
{
    for (size_t i = 0; i < schedlive_job_count(l); i++) {
        SchedLiveJob j;
        schedlive_job(l, i, &j);
        if (to_stdout && (j.running || j.step >= 0))
            printf("[%6.1fs]   %-12s %-10s model %5.1f%% | real %s %d GPUs step %ld epoch %.2f "
                   "loss %.4f %.0f ex/s\n",
                   clock_now_s() - c->t0, j.name, j.model, 100 * j.model_progress,
                   j.running ? "running" : "stopped", j.gpus, j.step, j.epoch, j.loss,
                   j.examples_per_s);
        if (c->events && j.step >= 0)
            write_progress(c->events, clock_now_s() - c->t0, schedlive_sim_time(l), &j);
    }
    fflush(stdout);
}

int cmd_schedule_live(int argc, char **argv)
{
    enum {
        O_CLUSTER = 1,
        O_WORKLOAD,
        O_POLICY,
        O_INTERVAL,
        O_SCALE,
        O_RESIZE,
        O_DURATION,
        O_EVENTS,
        O_JOBDIR,
        O_CKPT,
        O_GPN,
        O_STATUS,
        O_SEED,
        O_DATA,
        O_ACCEPT,
        O_REAL,
        O_LIVE,
        O_HELP
    };
    static const struct option LONG[] = {{"cluster", required_argument, 0, O_CLUSTER},
                                         {"workload", required_argument, 0, O_WORKLOAD},
                                         {"policy", required_argument, 0, O_POLICY},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"time-scale", required_argument, 0, O_SCALE},
                                         {"resize-cost", required_argument, 0, O_RESIZE},
                                         {"duration", required_argument, 0, O_DURATION},
                                         {"events", required_argument, 0, O_EVENTS},
                                         {"job-dir", required_argument, 0, O_JOBDIR},
                                         {"checkpoint-file", required_argument, 0, O_CKPT},
                                         {"gpus-per-node", required_argument, 0, O_GPN},
                                         {"status-every", required_argument, 0, O_STATUS},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"data", required_argument, 0, O_DATA},
                                         {"accept-new-host-keys", no_argument, 0, O_ACCEPT},
                                         {"real-progress", no_argument, 0, O_REAL},
                                         {"live", no_argument, 0, O_LIVE},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    SchedConfig cfg;
    sched_config_default(&cfg);
    cfg.policy = "doubling";
    SchedLiveOptions lo = {0};
    const char *cluster_path = NULL, *workload = NULL, *events_path = NULL, *data = NULL;
    double duration = 0, status_every = 5;
    long v, gpn = 0;
    int accept = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        int bad = 0;
        const char *cmd = "schedule --live";
        switch (c) {
        case O_CLUSTER:
            cluster_path = optarg;
            break;
        case O_WORKLOAD:
            workload = optarg;
            break;
        case O_POLICY:
            cfg.policy = optarg;
            break;
        case O_INTERVAL:
            bad = flags_double(cmd, "--interval", optarg, 1e-3, 1e7, &cfg.interval_s);
            break;
        case O_SCALE:
            bad = flags_double(cmd, "--time-scale", optarg, 1e-3, 1e6, &lo.time_scale);
            break;
        case O_RESIZE:
            bad = flags_double(cmd, "--resize-cost", optarg, 0, 1e7, &cfg.resize_cost_s);
            break;
        case O_DURATION:
            bad = flags_double(cmd, "--duration", optarg, 1e-3, 1e9, &duration);
            break;
        case O_EVENTS:
            events_path = optarg;
            break;
        case O_JOBDIR:
            lo.job_dir = optarg;
            break;
        case O_CKPT:
            lo.checkpoint = optarg;
            break;
        case O_GPN:
            bad = flags_long(cmd, "--gpus-per-node", optarg, 1, 64, &gpn);
            break;
        case O_STATUS:
            bad = flags_double(cmd, "--status-every", optarg, 0, 1e6, &status_every);
            break;
        case O_SEED:
            bad = flags_long(cmd, "--seed", optarg, 0, 1L << 62, &v);
            cfg.seed = (uint64_t)v;
            break;
        case O_DATA:
            data = optarg;
            break;
        case O_ACCEPT:
            accept = 1;
            break;
        case O_REAL:
            lo.real_progress = 1;
            break;
        case O_LIVE:
            break; /* `tunedeck schedule --live` */
        case O_HELP:
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
        if (bad)
            return 2;
    }
    if (optind < argc)
        return fail("unexpected argument (see --help)");
    if (!cluster_path || !workload)
        return fail("expected --cluster FILE and --workload FILE (see --help)");

    Error err;
    Cluster *cl = cluster_load(cluster_path, &err);
    if (!cl)
        return fail(err.msg);
    int rc = 2;
    Catalogue *cat = NULL;
    SchedState *s = NULL;
    HostPool *pool = NULL;
    SchedLive *l = NULL;
    FILE *events = NULL;
    const char **names = calloc(cl->n_machines + 1, sizeof *names);
    cfg.nodes = (int)cl->n_machines;
    cfg.gpus_per_node = gpn ? (int)gpn : schedlive_gpus_per_node(cl, &err);
    if (cfg.gpus_per_node < 0) {
        fail(err.msg);
        goto out;
    }
    for (size_t m = 0; m < cl->n_machines; m++)
        names[m] = cl->machines[m].name;
    cfg.node_names = names;
    if (!(cat = catalogue_load(data, &err)) || !(s = sched_new(&cfg, cat, &err)) ||
        sched_load_workload(s, workload, &err) < 0) {
        fail(err.msg);
        goto out;
    }
    if (events_path && !(events = fopen(events_path, "w"))) {
        fprintf(stderr, "tunedeck schedule --live: %s: cannot write\n", events_path);
        goto out;
    }
    HostPoolOptions po = {.accept_new_host_keys = accept};
    if (!(pool = hostpool_new(&po, &err)) || hostpool_add_cluster(pool, cl, &err) < 0) {
        fail(err.msg);
        goto out;
    }
    LogCtx ctx = {.t0 = clock_now_s(), .events = events};
    printf("live: %zu machines x %d GPUs, policy %s, interval %.0f s, time x%g, %zu jobs\n",
           cl->n_machines, cfg.gpus_per_node, cfg.policy, cfg.interval_s,
           lo.time_scale > 0 ? lo.time_scale : 1, sched_job_count(s));
    for (size_t m = 0; m < cl->n_machines; m++)
        hostpool_connect(pool, m, 0);
    double ct = cl->ssh.connect_timeout_s > 0 ? cl->ssh.connect_timeout_s : 5;
    hostpool_run_until_settled(pool, clock_now_ms() + (int64_t)(ct * 1000) + 500);
    int up = 0;
    for (size_t m = 0; m < cl->n_machines; m++) {
        HostInfo hi;
        hostpool_info(pool, m, &hi);
        if (hi.state == HOST_READY) {
            up++;
            continue;
        }
        printf("%s: down (%s): drained, no job goes there\n", hi.name,
               hi.last_error[0] ? hi.last_error : hostpool_state_name(hi.state));
        sched_drain_node(s, (int)m, 1, NULL);
    }
    if (!up) {
        fail("no host is reachable");
        goto out;
    }
    lo.log = log_line;
    lo.userdata = &ctx;
    lo.workload = workload;
    if (!(l = schedlive_new(s, cl, pool, &lo, &err))) {
        fail(err.msg);
        goto out;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    size_t ev_seen = 0;
    double next_status = clock_now_s() + status_every;
    struct pollfd fds[1024];
    while (!schedlive_done(l)) {
        int64_t dl = 0;
        size_t n = schedlive_pollfds(l, fds, 1024, &dl);
        int64_t left = dl - clock_now_ms();
        int prc = poll(fds, n, left < 0 ? 0 : (int)left);
        schedlive_step(l, fds, prc > 0 ? n : 0, clock_now_ms());
        for (; events && ev_seen < sched_event_count(s); ev_seen++) {
            char *line = sched_event_json(s, sched_event(s, ev_seen));
            fprintf(events, "%s\n", line);
            free(line);
        }
        double now = clock_now_s();
        if (status_every > 0 && now >= next_status) {
            status_lines(l, &ctx, 1);
            next_status = now + status_every;
        }
        if (interrupted || sched_finished(s) || (duration > 0 && now - ctx.t0 >= duration))
            schedlive_stop_all(l);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);

    printf("live run over after %.1f s wall, %.0f s simulated%s\n", clock_now_s() - ctx.t0,
           sched_now(s), interrupted ? " (interrupted)" : "");
    printf("%-12s %-10s %8s %6s %5s %7s %6s %10s %8s %10s %10s  %s\n", "job", "model", "model%",
           "runs", "resz", "deaths", "failed", "steps", "epoch", "last_loss", "ex/s",
           "last status");
    int failed = 0;
    for (size_t i = 0; i < schedlive_job_count(l); i++) {
        SchedLiveJob j;
        schedlive_job(l, i, &j);
        failed |= j.failed;
        printf("%-12s %-10s %7.1f%% %6d %5d %7d %6s %10ld %8.2f %10.4f %10.0f  %s\n", j.name,
               j.model, 100 * j.model_progress, j.runs, j.resizes, j.deaths,
               j.failed ? "yes" : "no", j.step, j.epoch, j.loss, j.examples_per_s,
               j.status[0] ? j.status : "-");
    }
    status_lines(l, &ctx, 0);
    rc = failed ? 1 : 0;
out:
    if (events)
        fclose(events);
    schedlive_free(l);
    hostpool_free(pool);
    sched_free(s);
    catalogue_free(cat);
    free(names);
    cluster_free(cl);
    return rc;
}

/* `tunedeck schedule`: the simulator, or with --live the live mode. */
int cmd_schedule_or_live(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--live") == 0)
            return cmd_schedule_live(argc, argv);
    return cmd_schedule(argc, argv);
}
