/* tunedeck-worker: the reference trial workload (DESIGN §3) — synchronous parameter-server
 * SGD on a small dense network, reporting protocol v1 timings — and, with --job, a training
 * job for the scheduler that checkpoints on SIGTERM and resumes at another size. */
#include <cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/decimal.h"
#include "core/base/exitcode.h"
#include "core/base/jdupkey.h"
#include "core/base/readall.h"
#include "core/base/secret.h"
#include "core/model/protocol.h"
#include "core/model/schedule_cluster.h"
#include "tools/worker/checkpoint.h"
#include "tools/worker/psnet.h"
#include "tools/worker/sgd_local.h"
#include "tools/worker/sgdplan.h"

void openblas_set_num_threads(int n); /* cblas.h stays out of this file (DESIGN §7) */
char *openblas_get_corename(void);

enum { DEFAULT_PORT_BASE = 29400, MAX_SLOWDOWNS = 64 };

static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct {
    char name[200]; /* "" = every device; "m" = machine m; "m/dev" = one device */
    double factor;
} SlowdownSpec;

typedef struct {
    int all_local, job;
    const char *machine;
    int port_base;
    double connect_timeout_s;
    SlowdownSpec slow[MAX_SLOWDOWNS];
    size_t n_slow;
    /* job mode */
    int gpus;
    const char *hosts, *resume, *checkpoint;
    double model_mb, learning_rate, progress_s, step_sleep_s;
    int batch;
    long max_steps;
} Args;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck-worker [--all-local | --machine NAME] [--port-base N]\n"
            "                       [--slowdown [MACHINE[/DEVICE]=]F]... [--connect-timeout S]\n"
            "       tunedeck-worker --job --gpus N|--gpu-ids LIST [--hosts LIST] [--resume FILE]\n"
            "                       [--checkpoint FILE] [--model-mb X] [--batch N] [--lr X]\n"
            "                       [--progress-every S] [--steps N] [--step-sleep S]\n"
            "\n"
            "Trial mode reads a protocol v1 schedule on standard input and runs synchronous\n"
            "parameter-server SGD on it, printing iteration lines and a done line.\n"
            "  (default)          play the machine named by $TUNEDECK_MACHINE (or --machine):\n"
            "                     its PS shard listens on port BASE + its index in the schedule's\n"
            "                     machines; workers reach shard machines at their \"host\";\n"
            "                     the schedule's \"ps_secret\" (tunedeck adds one per trial)\n"
            "                     is what every peer of a shard must prove it holds\n"
            "  --all-local        play every machine of the schedule as processes on this host\n"
            "  --port-base N      BASE (default $TUNEDECK_PS_PORT_BASE, else %d)\n"
            "  --slowdown SPEC    stretch device times F-fold (F >= 1): F alone for every device,\n"
            "                     MACHINE=F for one machine, MACHINE/DEVICE=F for one device\n"
            "  --connect-timeout S  wait this long for peers (default 30)\n"
            "Job mode trains until SIGTERM, printing progress lines; on SIGTERM it writes a\n"
            "checkpoint and exits 0. --resume FILE continues from one at any --gpus.\n"
            "  --gpus N           how many workers (the job template's {gpus})\n"
            "  --gpu-ids LIST     or: a comma list of GPU indices, one worker each (the job\n"
            "                     template's {gpu_ids}; a single index is one worker)\n"
            "  --hosts LIST       accepted for the job template; workers run on this host\n"
            "  --resume FILE      start from this checkpoint (empty: start fresh)\n"
            "  --checkpoint FILE  where SIGTERM writes (default: the --resume file, else\n"
            "                     tunedeck-worker.ckpt)\n"
            "  --model-mb X (default 1), --batch N (default 256), --lr X (default 0.1),\n"
            "  --progress-every S (default 0.5), --steps N: stop by itself after N steps\n"
            "  --step-sleep S     pause S seconds after each step (default 0: flat out)\n"
            "--blas-core prints the OpenBLAS kernel in use.\n",
            DEFAULT_PORT_BASE);
}

static int parse_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    if (decimal_double(s, lo, hi, out) < 0) {
        fprintf(stderr, "tunedeck-worker: %s: expected a number from %g to %g, found '%s'\n", flag,
                lo, hi, s);
        return -1;
    }
    return 0;
}

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    if (decimal_long(s, lo, hi, out) < 0) {
        fprintf(stderr, "tunedeck-worker: %s: expected an integer from %ld to %ld, found '%s'\n",
                flag, lo, hi, s);
        return -1;
    }
    return 0;
}

/* Walks a comma list (one element without a comma too), asking element_ok of each element;
 * the first it refuses is named by the flag, its position and its text. Returns the count
 * of elements, or -1. */
static int check_list(const char *flag, const char *s, int (*element_ok)(const char *, size_t),
                      const char *expected)
{
    int n = 0;
    for (const char *p = s;; p++) {
        size_t len = strcspn(p, ",");
        n++;
        if (!element_ok(p, len)) {
            fprintf(stderr,
                    "tunedeck-worker: %s: element %d of '%s' is '%.*s': expected %s, separated "
                    "by commas\n",
                    flag, n, s, (int)len, p, expected);
            return -1;
        }
        p += len;
        if (!*p)
            return n;
    }
}

static int is_gpu_index(const char *p, size_t len)
{
    if (len < 1 || len > 5 || strspn(p, "0123456789") < len)
        return 0;
    return atoi(p) <= 65535; /* atoi stops at the comma */
}

static int is_host_name(const char *p, size_t len)
{
    return len > 0 && strcspn(p, " \t\n") >= len;
}

/* --gpus N: a count (the template's {gpus}). A list there was once read as indices and a
 * single index as a count ({gpu_ids} '3' ran 3 workers, '0' was refused), so indices have
 * their own flag and a comma in --gpus is refused, pointing at it. */
static int parse_gpus(const char *s, int *out)
{
    long v;
    if (strchr(s, ',')) {
        fprintf(stderr,
                "tunedeck-worker: --gpus: expected a count of workers (1 to 256), found the list "
                "'%s': GPU indices go to --gpu-ids\n",
                s);
        return -1;
    }
    if (parse_long("--gpus", s, 1, 256, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* --gpu-ids LIST: GPU indices, as the job template's {gpu_ids} gives them (one index too):
 * one worker each. */
static int parse_gpu_ids(const char *s, int *out)
{
    int n = check_list("--gpu-ids", s, is_gpu_index, "GPU indices (whole numbers 0-65535)");
    if (n < 0)
        return -1;
    if (n > 256) {
        fprintf(stderr, "tunedeck-worker: --gpu-ids: expected 1 to 256 GPUs, found %d\n", n);
        return -1;
    }
    *out = n;
    return 0;
}

static int parse_args(int argc, char **argv, Args *a)
{
    static const struct option LONG[] = {{"all-local", no_argument, 0, 'A'},
                                         {"machine", required_argument, 0, 'm'},
                                         {"port-base", required_argument, 0, 'p'},
                                         {"slowdown", required_argument, 0, 's'},
                                         {"connect-timeout", required_argument, 0, 'T'},
                                         {"job", no_argument, 0, 'J'},
                                         {"gpus", required_argument, 0, 'g'},
                                         {"gpu-ids", required_argument, 0, 'G'},
                                         {"hosts", required_argument, 0, 'H'},
                                         {"resume", required_argument, 0, 'r'},
                                         {"checkpoint", required_argument, 0, 'c'},
                                         {"model-mb", required_argument, 0, 'M'},
                                         {"batch", required_argument, 0, 'b'},
                                         {"lr", required_argument, 0, 'l'},
                                         {"progress-every", required_argument, 0, 'P'},
                                         {"steps", required_argument, 0, 'n'},
                                         {"step-sleep", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},
                                         {"blas-core", no_argument, 0, 'B'},
                                         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->connect_timeout_s = 30;
    a->model_mb = 1;
    a->batch = 256;
    a->learning_rate = 0.1;
    a->progress_s = 0.5;
    a->gpus = 0;
    const char *env_base = getenv("TUNEDECK_PS_PORT_BASE");
    a->port_base = DEFAULT_PORT_BASE;
    long v;
    if (env_base && *env_base) {
        if (parse_long("$TUNEDECK_PS_PORT_BASE", env_base, 1, 65000, &v) < 0)
            return EXIT_USAGE;
        a->port_base = (int)v;
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'A':
            a->all_local = 1;
            break;
        case 'J':
            a->job = 1;
            break;
        case 'm':
            a->machine = optarg;
            break;
        case 'H':
            if (check_list("--hosts", optarg, is_host_name, "host names") < 0)
                return EXIT_USAGE;
            a->hosts = optarg;
            break;
        case 'r':
            a->resume = optarg;
            break;
        case 'c':
            a->checkpoint = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        case 'B':
            printf("%s\n", openblas_get_corename());
            return 1;
        case 'p':
            if (parse_long("--port-base", optarg, 1, 65000, &v) < 0)
                return EXIT_USAGE;
            a->port_base = (int)v;
            break;
        case 'T':
            if (parse_double("--connect-timeout", optarg, 0.1, 86400, &a->connect_timeout_s) < 0)
                return EXIT_USAGE;
            break;
        case 'M':
            if (parse_double("--model-mb", optarg, 0.001, 4096, &a->model_mb) < 0)
                return EXIT_USAGE;
            break;
        case 'l':
            if (parse_double("--lr", optarg, 1e-9, 100, &a->learning_rate) < 0)
                return EXIT_USAGE;
            break;
        case 'P':
            if (parse_double("--progress-every", optarg, 0, 3600, &a->progress_s) < 0)
                return EXIT_USAGE;
            break;
        case 'S':
            if (parse_double("--step-sleep", optarg, 0, 60, &a->step_sleep_s) < 0)
                return EXIT_USAGE;
            break;
        case 'b':
            if (parse_long("--batch", optarg, 1, 10000000, &v) < 0)
                return EXIT_USAGE;
            a->batch = (int)v;
            break;
        case 'n':
            if (parse_long("--steps", optarg, 1, 1000000000000L, &v) < 0)
                return EXIT_USAGE;
            a->max_steps = (long)v;
            break;
        case 'g':
        case 'G':
            if (a->gpus) {
                fprintf(stderr, "tunedeck-worker: --gpus and --gpu-ids: expected one of them, "
                                "once\n");
                return EXIT_USAGE;
            }
            if ((c == 'g' ? parse_gpus : parse_gpu_ids)(optarg, &a->gpus) < 0)
                return EXIT_USAGE;
            break;
        case 's': {
            if (a->n_slow == MAX_SLOWDOWNS) {
                fprintf(stderr, "tunedeck-worker: --slowdown: at most %d\n", MAX_SLOWDOWNS);
                return EXIT_USAGE;
            }
            SlowdownSpec *sp = &a->slow[a->n_slow++];
            const char *eq = strrchr(optarg, '=');
            const char *num = eq ? eq + 1 : optarg;
            snprintf(sp->name, sizeof sp->name, "%.*s", eq ? (int)(eq - optarg) : 0, optarg);
            if (parse_double("--slowdown", num, 1, 1000, &sp->factor) < 0)
                return EXIT_USAGE;
            break;
        }
        default:
            fprintf(stderr, "tunedeck-worker: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck-worker: unexpected argument '%s' (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (a->job && a->gpus < 1) {
        fprintf(stderr,
                "tunedeck-worker: --job: expected --gpus N (how many workers) or --gpu-ids LIST\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* Every device's factor from the --slowdown specs; an unknown machine or device is an error. */
static double *resolve_slowdown(const Args *a, const Cluster *c, Error *err)
{
    double *f = malloc((c->n_devices ? c->n_devices : 1) * sizeof *f);
    if (!f) {
        error_set(err, "out of memory");
        return NULL;
    }
    for (size_t d = 0; d < c->n_devices; d++)
        f[d] = 1;
    for (size_t i = 0; i < a->n_slow; i++) {
        const SlowdownSpec *sp = &a->slow[i];
        char machine[200];
        snprintf(machine, sizeof machine, "%s", sp->name);
        char *slash = strchr(machine, '/');
        if (slash)
            *slash++ = 0;
        int hit = 0;
        for (size_t m = 0; m < c->n_machines; m++) {
            if (machine[0] && strcmp(c->machines[m].name, machine) != 0)
                continue;
            const MachineType *t = &c->types[c->machines[m].type];
            for (size_t d = 0; d < t->n_devices; d++)
                if (!slash || strcmp(t->devices[d].id, slash) == 0) {
                    f[c->machines[m].first_device + d] = sp->factor;
                    hit = 1;
                }
        }
        if (!hit) {
            free(f);
            error_set(err, "--slowdown %s=%g: expected a machine%s of the schedule, found none",
                      sp->name, sp->factor, slash ? " and device" : "");
            return NULL;
        }
    }
    return f;
}

/* A shard's refusals (which peer, why) go to standard error: the launchers show it as the
 * trial's log, and standard output stays protocol lines. */
static void log_refusal(void *userdata, const char *line)
{
    (void)userdata;
    fprintf(stderr, "tunedeck-worker: %s\n", line);
    fflush(stderr);
}

/* The job's secret (tools/worker/psauth.h): the schedule's "ps_secret", which tunedeck's
 * launchers add to every trial's input. Without one, --all-local makes its own (its machines
 * are its own children), while one machine of a per-host trial cannot: its peers on other
 * hosts would never agree with it, so it refuses rather than run unauthenticated. */
static int trial_secret(const cJSON *root, const char *source, int all_local,
                        unsigned char secret[SECRET_BYTES], Error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "ps_secret");
    if (j && !cJSON_IsString(j)) {
        error_set(err, "%s: field 'ps_secret': expected a string of %d hex digits", source,
                  SECRET_HEX_CHARS);
        return error_mark(err, ERROR_INPUT);
    }
    if (j) {
        if (secret_from_hex(j->valuestring, secret, err) < 0) {
            error_prefix(err, "%s: field 'ps_secret'", source);
            return error_mark(err, ERROR_INPUT);
        }
        return 0;
    }
    if (all_local)
        return secret_random(secret, SECRET_BYTES, err);
    error_set(err,
              "%s: field 'ps_secret': expected the job's secret, which tunedeck adds to every "
              "trial's schedule: %d hex digits, the same for every machine of the trial, that "
              "its parameter servers ask every peer to prove (a schedule written by hand needs "
              "one, e.g. from: od -An -tx1 -N%d /dev/urandom | tr -d ' \\n')",
              source, SECRET_HEX_CHARS, SECRET_BYTES);
    return error_mark(err, ERROR_INPUT);
}

static void print_error(const char *msg)
{
    TrialEvent ev = {.kind = EVENT_ERROR, .text = (char *)msg};
    char *line = protocol_format(&ev);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    fprintf(stderr, "tunedeck-worker: %s\n", msg);
}

/* ---- per-host trial: one machine of the schedule ---- */

typedef struct {
    const char *machine;
    int warmup;
    double sum;
    int count;
} OwnTimes;

static void print_own_iteration(void *ud, const SgdIteration *it)
{
    OwnTimes *t = ud;
    int iter = (int)it->step - 1;
    char *line = sgd_iteration_format(it, t->machine, iter);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    if (iter >= t->warmup) {
        t->sum += it->time_s;
        t->count++;
    }
}

static int run_one_machine(const Args *a, const char *name, const SgdPlan *plan, const Schedule *s,
                           const double *slow, const unsigned char *secret, Error *err)
{
    const Cluster *c = s->cluster;
    long mi = cluster_find_machine(c, name);
    if (mi < 0)
        return error_set(err,
                         "$TUNEDECK_MACHINE: expected a machine of the schedule, found "
                         "'%s'",
                         name);
    size_t ns = plan->n_shards;
    char(*hosts)[256] = calloc(ns, sizeof *hosts);
    int *ports = calloc(ns, sizeof *ports);
    if (!hosts || !ports) {
        free(hosts);
        free(ports);
        return error_set(err, "out of memory");
    }
    for (size_t k = 0; k < ns; k++) {
        size_t m = plan->shard_machine[k];
        snprintf(hosts[k], sizeof hosts[k], "%s", c->machines[m].host);
        ports[k] = a->port_base + (int)m;
    }
    int listen_fd = -1, rc = -1;
    if (plan->machine_shard[mi] >= 0) {
        listen_fd = psnet_listen(NULL, a->port_base + (int)mi, NULL, err);
        if (listen_fd < 0)
            goto out;
    } else if (plan->machine_rank[mi] < 0) {
        rc = 0; /* neither worker nor PS in this schedule: nothing to do */
        goto out;
    }
    OwnTimes own = {.machine = c->machines[mi].name, .warmup = s->job.warmup};
    SgdMachineConfig mc = {.plan = plan,
                           .schedule = s,
                           .machine = (size_t)mi,
                           .ps_listen_fd = listen_fd,
                           .ps_host = hosts,
                           .ps_port = ports,
                           .slowdown = slow + c->machines[mi].first_device,
                           .steps = (uint64_t)s->job.iterations,
                           .connect_timeout_s = a->connect_timeout_s,
                           .secret = secret,
                           .log = log_refusal,
                           .on_iteration = print_own_iteration,
                           .userdata = &own};
    rc = sgd_machine_run(&mc, err);
    if (rc == 0 && own.count > 0) {
        TrialEvent done = {.kind = EVENT_DONE, .time_s = own.sum / own.count};
        char *line = protocol_format(&done);
        printf("%s\n", line);
        free(line);
        fflush(stdout);
    }
out:
    if (listen_fd >= 0)
        close(listen_fd);
    free(hosts);
    free(ports);
    return rc;
}

static int run_trial(const Args *a, const char *text, const char *source, Error *err)
{
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        error_set(err, "%s: expected a protocol v1 schedule object, found malformed JSON", source);
        return error_mark(err, ERROR_INPUT);
    }
    if (jdupkey_check(root, err) < 0) { /* the first copy is not surely the one meant */
        error_prefix(err, "%s", source);
        cJSON_Delete(root);
        return error_mark(err, ERROR_INPUT);
    }
    int rc = -1;
    Cluster *c = schedule_cluster_from_json(root, source, err);
    Schedule *s = c ? schedule_from_json(root, c, source, err) : NULL;
    double *slow = NULL;
    unsigned char secret[SECRET_BYTES];
    SgdPlan plan;
    memset(&plan, 0, sizeof plan);
    if (!s || schedule_validate(s, err) < 0) {
        error_mark(err, ERROR_INPUT); /* the schedule on standard input */
        goto out;
    }
    const char *machine = a->machine ? a->machine : getenv("TUNEDECK_MACHINE");
    if (trial_secret(root, source, a->all_local || !machine || !machine[0], secret, err) < 0)
        goto out;
    if (sgdplan_build(s, &plan, err) < 0 || !(slow = resolve_slowdown(a, c, err)))
        goto out;
    if (a->all_local) {
        SgdLocalConfig lc = {.base = {.plan = &plan,
                                      .schedule = s,
                                      .steps = (uint64_t)s->job.iterations,
                                      .connect_timeout_s = a->connect_timeout_s,
                                      .secret = secret,
                                      .log = log_refusal},
                             .slowdown = slow,
                             .iteration_lines = 1,
                             .print_done = 1};
        rc = sgd_local_run(&lc, stdout, err);
    } else if (machine && machine[0]) {
        rc = run_one_machine(a, machine, &plan, s, slow, secret, err);
    } else {
        error_set(err, "expected $TUNEDECK_MACHINE (or --machine NAME) to say which machine "
                       "this is, or --all-local to play every machine here");
    }
out:
    explicit_bzero(secret, sizeof secret);
    sgdplan_clear(&plan);
    free(slow);
    schedule_free(s);
    cluster_free(c);
    /* the parsed "ps_secret" is a copy of the secret: wipe it before the heap reuses it */
    cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "ps_secret");
    if (cJSON_IsString(ps) && ps->valuestring)
        explicit_bzero(ps->valuestring, strlen(ps->valuestring));
    cJSON_Delete(root);
    return rc;
}

/* ---- job mode ---- */

typedef struct {
    const Args *args;
    const SgdPlan *plan;
    uint64_t first_step, examples_base;
    double last_print_s;
    uint64_t last_print_examples;
    const char *checkpoint;
} JobCtx;

static uint64_t job_examples(const JobCtx *j, uint64_t step)
{
    return j->examples_base + (step - j->first_step) * (uint64_t)j->plan->batch;
}

static void print_progress(JobCtx *j, uint64_t step, double loss)
{
    double now = clock_now_s();
    uint64_t ex = job_examples(j, step);
    double rate =
        now > j->last_print_s ? (double)(ex - j->last_print_examples) / (now - j->last_print_s) : 0;
    TrialEvent ev = {.kind = EVENT_PROGRESS,
                     .step = (long)step,
                     .epoch = (double)ex / (double)j->plan->n_examples,
                     .loss = loss,
                     .examples_per_s = rate};
    char *line = protocol_format(&ev);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    j->last_print_s = now;
    j->last_print_examples = ex;
}

/* Runs in the PS process: progress lines, and the checkpoint when a stop is asked for. */
static int job_step(void *ud, uint64_t step, double loss, uint32_t examples, const double *p)
{
    (void)examples;
    JobCtx *j = ud;
    int stop =
        g_stop || (j->args->max_steps && step >= j->first_step + (uint64_t)j->args->max_steps);
    if (stop || step == j->first_step + 1 || clock_now_s() - j->last_print_s >= j->args->progress_s)
        print_progress(j, step, loss);
    if (!stop) {
        /* The workers wait for this step's parameters meanwhile: the whole job idles, a
         * stand-in job that needs no whole core. In slices of at most 50 ms, each after a
         * look at the stop flag: the SIGTERM may be taken by another thread, whose handler
         * does not cut this thread's sleep short. */
        for (double left = j->args->step_sleep_s; left > 0 && !g_stop; left -= 0.05) {
            double slice = left < 0.05 ? left : 0.05;
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = (long)(slice * 1e9)}, NULL);
        }
        return 0;
    }
    Checkpoint ck = {.net = j->plan->net,
                     .step = step,
                     .examples = job_examples(j, step),
                     .data_seed = j->plan->data_seed,
                     .loss = loss,
                     .workers = (uint32_t)j->plan->n_workers,
                     .params = (double *)p};
    Error err;
    if (checkpoint_save(j->checkpoint, &ck, &err) < 0)
        fprintf(stderr, "tunedeck-worker: %s\n", err.msg);
    else
        fprintf(stderr, "tunedeck-worker: checkpoint %s written at step %llu (%u workers)\n",
                j->checkpoint, (unsigned long long)step, ck.workers);
    return 1;
}

static int run_job(const Args *a, Error *err)
{
    /* The job is a schedule like any trial's: one PS process and N single-device workers. */
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "protocol", 1);
    cJSON_AddNumberToObject(root, "iterations", 2);
    cJSON_AddNumberToObject(root, "warmup", 0);
    cJSON *job = cJSON_AddObjectToObject(root, "job");
    cJSON_AddStringToObject(job, "name", "tunedeck-worker-job");
    cJSON_AddNumberToObject(job, "model_mb", a->model_mb);
    cJSON_AddNumberToObject(job, "batch", a->batch);
    cJSON_AddNumberToObject(job, "learning_rate", a->learning_rate);
    cJSON *machines = cJSON_AddArrayToObject(root, "machines");
    int per = a->batch / a->gpus, extra = a->batch % a->gpus;
    for (int w = -1; w < a->gpus; w++) {
        cJSON *m = cJSON_CreateObject();
        char name[32];
        snprintf(name, sizeof name, w < 0 ? "job-ps" : "job-w%d", w);
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddStringToObject(m, "host", "127.0.0.1");
        cJSON_AddStringToObject(m, "type", w < 0 ? "job-ps" : "job-worker");
        cJSON_AddBoolToObject(m, "worker", w >= 0);
        cJSON_AddBoolToObject(m, "ps", w < 0);
        cJSON *devs = cJSON_AddArrayToObject(m, "devices");
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "id", "cpu");
        cJSON_AddNumberToObject(d, "inputs", w < 0 ? 0 : per + (w < extra));
        cJSON_AddItemToArray(devs, d);
        cJSON_AddItemToArray(machines, m);
    }
    Checkpoint ck;
    memset(&ck, 0, sizeof ck);
    int rc = -1;
    /* Every process of a job is a child of this one: a secret made here reaches them all by
     * fork and never leaves this host's memory. */
    unsigned char secret[SECRET_BYTES];
    Cluster *c = schedule_cluster_from_json(root, "job", err);
    Schedule *s = c ? schedule_from_json(root, c, "job", err) : NULL;
    SgdPlan plan;
    memset(&plan, 0, sizeof plan);
    if (!s || schedule_validate(s, err) < 0 || sgdplan_build(s, &plan, err) < 0 ||
        secret_random(secret, sizeof secret, err) < 0)
        goto out;
    const char *resume = a->resume && a->resume[0] ? a->resume : NULL;
    if (resume) {
        if (checkpoint_load(resume, &ck, err) < 0)
            goto out;
        int same = ck.net.n_layers == plan.net.n_layers;
        for (size_t l = 0; same && l <= plan.net.n_layers; l++)
            same = ck.net.sizes[l] == plan.net.sizes[l];
        if (!same) {
            error_set(err,
                      "%s: the checkpoint's network (%zu parameters) is not the one "
                      "--model-mb %g makes (%zu parameters)",
                      resume, ck.net.n_params, a->model_mb, plan.net.n_params);
            goto out;
        }
        fprintf(stderr,
                "tunedeck-worker: resuming %s at step %llu on %d workers (it was "
                "written by %u)\n",
                resume, (unsigned long long)ck.step, a->gpus, ck.workers);
    }
    JobCtx j = {.args = a,
                .plan = &plan,
                .first_step = ck.step,
                .examples_base = ck.examples,
                .last_print_s = clock_now_s(),
                .last_print_examples = ck.examples,
                .checkpoint = a->checkpoint ? a->checkpoint
                              : resume      ? resume
                                            : "tunedeck-worker.ckpt"};
    SgdLocalConfig lc = {.base = {.plan = &plan,
                                  .schedule = s,
                                  .init_params = ck.params,
                                  .first_step = ck.step,
                                  .examples_base = ck.examples,
                                  .connect_timeout_s = a->connect_timeout_s,
                                  .secret = secret,
                                  .log = log_refusal,
                                  .on_step = job_step,
                                  .step_userdata = &j},
                         .stop = &g_stop};
    rc = sgd_local_run(&lc, stdout, err);
out:
    explicit_bzero(secret, sizeof secret);
    checkpoint_clear(&ck);
    sgdplan_clear(&plan);
    schedule_free(s);
    cluster_free(c);
    cJSON_Delete(root);
    return rc;
}

int main(int argc, char **argv)
{
    Args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    openblas_set_num_threads(1); /* devices are threads of their own */
    signal(SIGPIPE, SIG_IGN);
    Error err = {0};
    if (a.job) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        if (run_job(&a, &err) < 0) {
            fprintf(stderr, "tunedeck-worker: %s\n", err.msg);
            return 1;
        }
        return 0;
    }
    size_t text_len = 0;
    char *text = readall_stream(stdin, 64u << 20, &text_len, &err);
    if (!text) {
        error_prefix(&err, "standard input: the schedule");
        print_error(err.msg);
        return EXIT_BAD_INPUT;
    }
    rc = run_trial(&a, text, "standard input", &err);
    explicit_bzero(text, text_len); /* it holds the trial's ps_secret */
    free(text);
    if (rc < 0) {
        print_error(err.msg);
        return exitcode_for(&err, EXIT_FAILED);
    }
    return 0;
}
