/* `tunedeck schedule --live`: the scheduler in wall-clock time, its decisions enacted on real
 * jobs on the inventory's hosts over SSH, or as Slurm batch jobs (remote/live/schedlive.h);
 * its command line is schedule_live_args.c's. */
#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/live_end.h"
#include "cmd/paths.h"
#include "cmd/schedule_cli.h"
#include "cmd/schedule_live_args.h"
#include "cmd/schedule_live_status.h"
#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/exitcode.h"
#include "core/base/jfield.h"
#include "core/base/plural.h"
#include "core/model/cluster.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "remote/live/jobdir.h"
#include "remote/live/liverun_slurm.h"
#include "remote/live/schedlive.h"
#include "remote/ssh/hostpool.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig; /* the exit status is 128 + it, as if the signal had ended us */
}

static int fail(const char *msg)
{
    return schedule_fail("schedule --live", msg);
}

typedef struct {
    double t0;
    FILE *events;
} LogCtx;

static void log_line(void *ud, const char *line)
{
    LogCtx *c = ud;
    printf("[%7.2fs] %s\n", clock_now_s() - c->t0, line);
    fflush(stdout);
}

/* Everything a live run holds, freed by live_close. */
typedef struct {
    LiveArgs *a;
    Cluster *cl;
    const char **names;
    Catalogue *cat;
    SchedState *s;
    HostPool *pool;
    SlurmCtl *slurm;      /* a Slurm inventory's controller */
    LiveSlurm *live_slurm; /* its runs' backend */
    SchedLive *l;
    FILE *events;
    SchedNodeGroup *groups; /* the inventory's node sizes, for the model */
    unsigned char *folders_checked; /* per machine: its job folders passed before the run */
    LogCtx ctx;
    size_t ev_seen;
    LiveEnd end; /* --duration's */
} LiveRun;

static void set_field(cJSON *root, const char *key, const char *value)
{
    cJSON_DeleteItemFromObject(root, key);
    cJSON_AddStringToObject(root, key, value);
}

/* On Slurm the template before the controller is asked for its nodes, so a typo costs no
 * call: what Slurm refuses of it ({gpu_ids}) first, as liveslurm_open would, then the
 * checkpoint it writes. The loaded inventory is checked whole later (schedlive_check). */
static int slurm_template_refused(const cJSON *root, const char *source, LiveArgs *a, Error *err)
{
    const cJSON *jc = cJSON_GetObjectItem(root, "job_command");
    char ck[512];
    if (!cJSON_IsString(jc))
        return 0;
    if (liveslurm_check(jc->valuestring, 0, 0, err) < 0) {
        error_prefix(err, "%s", source);
        error_mark(err, ERROR_INPUT);
        return 1;
    }
    return schedlive_check_command(jc->valuestring, a->cluster_path ? a->cluster_path : "--slurm",
                                   &a->lo, ck, sizeof ck, err) < 0;
}

/* The inventory: a file, or the Slurm controller's nodes (--slurm, or a file that says
 * "backend": "slurm"), with --job-command over its job_command; on Slurm, the runs'
 * backend too. */
static int open_inventory(LiveRun *r, Error *err)
{
    LiveArgs *a = r->a;
    const char *source = a->cluster_path ? a->cluster_path : "--slurm";
    cJSON *root = a->cluster_path ? jfield_parse_file(a->cluster_path, err) : cJSON_CreateObject();
    if (!root)
        return error_mark(err, ERROR_INPUT);
    char warning[ERROR_MSG_MAX];
    if (a->cluster_path &&
        inventory_misspelt_warning(root, a->cluster_path, warning, sizeof warning))
        fprintf(stderr, "tunedeck schedule --live: %s\n", warning);
    if (!a->cluster_path) {
        set_field(root, "name", "slurm");
        set_field(root, "backend", "slurm");
    }
    if (a->partition)
        set_field(root, "partition", a->partition);
    if (a->login)
        set_field(root, "login", a->login);
    if (a->job_command)
        set_field(root, "job_command", a->job_command);
    const cJSON *b = cJSON_GetObjectItem(root, "backend");
    int plain = !cJSON_IsString(b) || strcmp(b->valuestring, "slurm") != 0;
    LiveSlurmOptions so = {.log = log_line, .userdata = &r->ctx};
    int rc = plain && (a->partition || a->login)
                 ? error_set(err, "--partition and --login are for Slurm (--slurm, or an "
                                  "inventory with \"backend\": \"slurm\")")
             : !plain && slurm_template_refused(root, source, a, err)
                 ? -1
                 : liveslurm_open(root, source, &so, &r->cl, &r->slurm, &r->live_slurm, err);
    cJSON_Delete(root);
    if (rc < 0 || !r->live_slurm)
        return rc;
    a->lo.backend = &LIVERUN_SLURM;
    a->lo.backend_ctx = r->live_slurm;
    double first_s, most_s; /* 0: the driver's default */
    liveslurm_ceiling_retry(r->live_slurm, &first_s, &most_s);
    if (first_s > 0)
        a->lo.ceiling_retry_s = first_s;
    if (most_s > 0)
        a->lo.ceiling_retry_max_s = most_s;
    return 0;
}

/* The inventory, the model with its workload, the --events file and the hosts' pool (none
 * on Slurm). */
static int live_open(LiveRun *r)
{
    LiveArgs *a = r->a;
    Error err;
    if (open_inventory(r, &err) < 0)
        return schedule_fail_error("schedule --live", &err);
    Cluster *cl = r->cl;
    r->names = calloc(cl->n_machines + 1, sizeof *r->names);
    if (!r->names)
        return fail("out of memory");
    a->cfg.nodes = (int)cl->n_machines;
    if (schedlive_node_groups(cl, (int)a->gpn, &r->groups, &a->cfg.n_groups, &err) < 0)
        return fail(err.msg);
    a->cfg.groups = r->groups;
    for (size_t m = 0; m < cl->n_machines; m++)
        r->names[m] = cl->machines[m].name;
    a->cfg.node_names = r->names;
    if (!(r->cat = catalogue_load(a->data ? a->data : paths_catalogue(), &err)) ||
        !(r->s = sched_new(&a->cfg, r->cat, &err)) ||
        sched_load_workload(r->s, a->workload, &err) < 0)
        return schedule_fail_error("schedule --live", &err);
    if (a->events_path && !(r->events = fopen(a->events_path, "w"))) {
        fprintf(stderr, "tunedeck schedule --live: --events: cannot write '%s': %s\n",
                a->events_path, strerror(errno));
        return EXIT_USAGE;
    }
    /* A line goes out as it is made: fully buffered, a run killed outright (SIGKILL) lost
     * every decision and progress record of its last 4 KiB, and cut the file mid-line. */
    if (r->events)
        setvbuf(r->events, NULL, _IOLBF, 0);
    if (r->live_slurm)
        return 0;
    HostPoolOptions po = {.accept_new_host_keys = a->accept,
                          .ssh_config = getenv("TUNEDECK_SSH_CONFIG")};
    if (!(r->pool = hostpool_new(&po, &err)) || hostpool_add_cluster(r->pool, cl, &err) < 0)
        return schedule_fail_error("schedule --live", &err);
    return 0;
}

/* Connects every host once; one that does not answer in time is drained. Returns how many
 * are up. */
static int connect_hosts(LiveRun *r)
{
    const Cluster *cl = r->cl;
    for (size_t m = 0; m < cl->n_machines; m++)
        hostpool_connect(r->pool, m, 0);
    double ct = cl->ssh.connect_timeout_s > 0 ? cl->ssh.connect_timeout_s : 5;
    hostpool_run_until_settled(r->pool, clock_now_ms() + (int64_t)(ct * 1000) + 500);
    int up = 0;
    for (size_t m = 0; m < cl->n_machines; m++) {
        HostInfo hi;
        hostpool_info(r->pool, m, &hi);
        if (hi.state == HOST_READY) {
            up++;
            continue;
        }
        printf("%s: down (%s): drained, no job goes there\n", hi.name,
               hi.last_error[0] ? hi.last_error : hostpool_state_name(hi.state));
        sched_drain_node_by(r->s, (int)m, SCHED_DRAIN_BACKEND, 1, NULL);
    }
    return up;
}

/* Every job's folder on every host that answered, checked before any job starts (on Slurm
 * the backend's check_folders did it in schedlive_check): a folder on the way that another
 * user can write refuses the run (exit 3), as on Slurm. A host down now is checked by the
 * driver once it answers, before any job goes there. */
static int check_host_folders(LiveRun *r, Error *err)
{
    size_t n = sched_job_count(r->s);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return error_no_memory(err, "job folder check");
    for (size_t i = 0; i < n; i++) {
        SchedJobInfo info;
        sched_job_info(r->s, i, &info);
        names[i] = info.name;
    }
    double ct = r->cl->ssh.connect_timeout_s > 0 ? r->cl->ssh.connect_timeout_s : 5;
    r->folders_checked = calloc(r->cl->n_machines + 1, 1);
    int rc = r->folders_checked ? jobdir_check_hosts(r->pool,
                                                     r->a->lo.job_dir ? r->a->lo.job_dir
                                                                      : "tunedeck-jobs",
                                                     names, n, ct + 10, r->folders_checked, err)
                                : error_no_memory(err, "job folder check");
    free(names);
    /* the hosts down now are checked by the driver once they answer */
    r->a->lo.folders_checked = r->folders_checked;
    return rc;
}

/* A source after the driver: wakes at the end of --duration; after every step writes the
 * model's new events and stops every job once the run is over. */
static size_t watch_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    const LiveRun *r = ctx;
    live_end_deadline(&r->end, deadline_ms);
    return 0;
}

static void watch_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    LiveRun *r = ctx;
    for (; r->events && r->ev_seen < sched_event_count(r->s); r->ev_seen++) {
        char *line = sched_event_json(r->s, sched_event(r->s, r->ev_seen));
        fprintf(r->events, "%s\n", line);
        free(line);
    }
    if (interrupted || sched_finished(r->s) || live_end_due(&r->end, now_ms))
        schedlive_stop_all(r->l);
}

/* On Slurm: the jobs that are not ours, with the GPUs they hold (the GPUs the scheduler's
 * model does not know are taken: a job placed there waits in Slurm's queue). */
static void foreign_lines(LiveRun *r)
{
    enum { SHOWN = 8 };
    LiveSlurmForeign f[SHOWN];
    size_t n = liveslurm_foreign(r->live_slurm, f, SHOWN);
    for (size_t i = 0; i < n && i < SHOWN; i++)
        printf("[%7.2fs]   other job %s (%s, %s) on %s\n", clock_now_s() - r->ctx.t0, f[i].id,
               f[i].user, f[i].name, f[i].where[0] ? f[i].where : "no GPU");
    if (n > SHOWN)
        printf("[%7.2fs]   and %zu other job%s\n", clock_now_s() - r->ctx.t0, n - SHOWN,
               plural_s((long long)(n - SHOWN)));
}

static void status_tick(void *ctx, int64_t now_ms)
{
    (void)now_ms;
    LiveRun *r = ctx;
    schedule_live_status(r->l, r->ctx.t0, r->ctx.events, 1);
    if (r->live_slurm)
        foreign_lines(r);
}

static int run_over(void *ctx)
{
    return schedlive_done(((LiveRun *)ctx)->l);
}

/* Runs the model against the wall clock until every job stopped (Ctrl-C ends it early). */
static void drive(LiveRun *r)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    live_end_init(&r->end, r->ctx.t0, r->a->duration);
    EvLoop *loop = evloop_new();
    if (!loop || schedlive_attach(r->l, loop) < 0 ||
        evloop_add(loop, watch_pollfds, watch_step, r) < 0 ||
        (r->a->status_every > 0 &&
         evloop_wake_every(loop, (int64_t)(r->a->status_every * 1000), status_tick, r) < 0)) {
        fprintf(stderr, "tunedeck schedule --live: out of memory\n");
        schedlive_stop_all(r->l);
    } else {
        evloop_run(loop, run_over, r, -1);
    }
    evloop_free(loop);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

/* The closing table; exit 1 when a job failed, 128 + the signal when one stopped the run. */
static int report(LiveRun *r)
{
    printf("live run over after %.1f s wall, %.0f s simulated%s\n", clock_now_s() - r->ctx.t0,
           sched_now(r->s), interrupted ? " (interrupted)" : "");
    int failed = schedule_live_table(r->l);
    schedule_live_status(r->l, r->ctx.t0, r->ctx.events, 0);
    if (r->slurm) {
        long calls = slurm_ctl_calls(r->slurm), rounds = liveslurm_rounds(r->live_slurm),
             node_rounds = liveslurm_node_rounds(r->live_slurm);
        printf("slurm: %ld controller call%s (%ld scontrol round%s), %ld of them node-state "
               "round%s (sinfo)\n",
               calls, plural_s(calls), rounds, plural_s(rounds), node_rounds,
               plural_s(node_rounds));
    }
    return interrupted ? EXIT_SIGNAL_BASE + (int)interrupted : failed ? EXIT_FAILED : EXIT_OK;
}

/* Frees the run; -1 when the --events file could not be written whole (a full disk): the
 * run's end said nothing of it and exited 0 over a cut file. */
static int live_close(LiveRun *r)
{
    int events_failed = 0;
    if (r->events) {
        events_failed = ferror(r->events) != 0;
        events_failed |= fclose(r->events) != 0;
        if (events_failed)
            fprintf(stderr, "tunedeck schedule --live: --events: write to '%s' failed: %s\n",
                    r->a->events_path, strerror(errno));
    }
    schedlive_free(r->l);
    liveslurm_free(r->live_slurm);
    slurm_ctl_free(r->slurm);
    hostpool_free(r->pool);
    sched_free(r->s);
    catalogue_free(r->cat);
    free(r->names);
    free(r->groups);
    free(r->folders_checked);
    cluster_free(r->cl);
    return events_failed ? -1 : 0;
}

int cmd_schedule_live(int argc, char **argv)
{
    LiveArgs a;
    int rc = schedule_live_args_parse(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    LiveRun r = {.a = &a};
    a.lo.workload = a.workload; /* a job name it refuses is the workload's */
    a.lo.inventory = a.cluster_path ? a.cluster_path : a.slurm ? "--slurm" : NULL;
    a.lo.job_command_flag = a.job_command != NULL;
    rc = live_open(&r);
    if (rc == 0) {
        r.ctx = (LogCtx){.t0 = clock_now_s(), .events = r.events};
        Error err;
        a.lo.log = log_line;
        a.lo.userdata = &r.ctx;
        char ck[512];
        /* everything checkable here before any host is connected: a typo costs none, and a
         * refused run prints no banner of a run that never starts */
        int ok = schedlive_check(r.s, r.cl, &a.lo, ck, sizeof ck, &err) == 0;
        if (ok) {
            int gpus = 0;
            for (int m = 0; m < sched_node_count(r.s); m++)
                gpus += sched_node_gpu_count(r.s, m);
            size_t jobs = sched_job_count(r.s);
            printf("live: %zu machine%s, %d GPU%s, policy %s, interval %g s, time x%g, %zu "
                   "job%s\n",
                   r.cl->n_machines, plural_s((long long)r.cl->n_machines), gpus, plural_s(gpus),
                   a.cfg.policy, a.cfg.interval_s, a.lo.time_scale > 0 ? a.lo.time_scale : 1, jobs,
                   plural_s((long long)jobs));
            if (r.slurm)
                printf("slurm: %zu node%s from the controller (%s), runs as batch jobs\n",
                       r.cl->n_machines, plural_s((long long)r.cl->n_machines),
                       slurm_ctl_where(r.slurm));
        }
        if (!ok) {
            rc = schedule_fail_error("schedule --live", &err);
        } else if (!r.slurm && !connect_hosts(&r)) {
            fail("no host is reachable");
            rc = EXIT_REMOTE;
        } else if (!r.slurm && check_host_folders(&r, &err) < 0) {
            rc = schedule_fail_error("schedule --live", &err);
        } else if (!(r.l = schedlive_new(r.s, r.cl, r.pool, &a.lo, &err)))
            rc = schedule_fail_error("schedule --live", &err);
    }
    if (rc == 0) {
        drive(&r);
        rc = report(&r);
    }
    if (live_close(&r) < 0 && rc == 0)
        rc = EXIT_FAILED;
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
