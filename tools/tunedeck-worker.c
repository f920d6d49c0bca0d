/* tunedeck-worker: the reference trial workload (DESIGN §3) — synchronous parameter-server
 * SGD on a small dense network, reporting protocol v1 timings — and, with --job, a training
 * job for the scheduler that checkpoints on SIGTERM and resumes at another size. This file
 * reads the flags and hands over to the mode: tools/worker/trial.h, tools/worker/trainjob.h. */
#include <cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/decimal.h"
#include "core/base/exitcode.h"
#include "core/base/readsecret.h"
#include "core/base/secret.h"
#include "core/model/protocol.h"
#include "tools/worker/trainjob.h"
#include "tools/worker/trial.h"

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
    int job;
    const char *machine; /* --machine; else $TUNEDECK_MACHINE */
    const char *hosts;   /* accepted for the job template; workers run on this host */
    SlowdownSpec slow[MAX_SLOWDOWNS];
    TrialOptions trial;
    TrainJobOptions train;
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
    TrialOptions *t = &a->trial;
    TrainJobOptions *j = &a->train;
    t->connect_timeout_s = 30;
    t->slow = a->slow;
    j->model_mb = 1;
    j->batch = 256;
    j->learning_rate = 0.1;
    j->progress_s = 0.5;
    j->gpus = 0;
    const char *env_base = getenv("TUNEDECK_PS_PORT_BASE");
    t->port_base = DEFAULT_PORT_BASE;
    long v;
    if (env_base && *env_base) {
        if (parse_long("$TUNEDECK_PS_PORT_BASE", env_base, 1, 65000, &v) < 0)
            return EXIT_USAGE;
        t->port_base = (int)v;
        t->port_base_from = "$TUNEDECK_PS_PORT_BASE";
    } else {
        t->port_base_from = "the default port base";
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'A':
            t->all_local = 1;
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
            j->resume = optarg;
            break;
        case 'c':
            j->checkpoint = optarg;
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
            t->port_base = (int)v;
            t->port_base_from = "--port-base";
            break;
        case 'T':
            if (parse_double("--connect-timeout", optarg, 0.1, 86400, &t->connect_timeout_s) < 0)
                return EXIT_USAGE;
            break;
        case 'M':
            if (parse_double("--model-mb", optarg, 0.001, 4096, &j->model_mb) < 0)
                return EXIT_USAGE;
            break;
        case 'l':
            if (parse_double("--lr", optarg, 1e-9, 100, &j->learning_rate) < 0)
                return EXIT_USAGE;
            break;
        case 'P':
            if (parse_double("--progress-every", optarg, 0, 3600, &j->progress_s) < 0)
                return EXIT_USAGE;
            break;
        case 'S':
            if (parse_double("--step-sleep", optarg, 0, 60, &j->step_sleep_s) < 0)
                return EXIT_USAGE;
            break;
        case 'b':
            if (parse_long("--batch", optarg, 1, 10000000, &v) < 0)
                return EXIT_USAGE;
            j->batch = (int)v;
            break;
        case 'n':
            if (parse_long("--steps", optarg, 1, 1000000000000L, &v) < 0)
                return EXIT_USAGE;
            j->max_steps = (long)v;
            break;
        case 'g':
        case 'G':
            if (j->gpus) {
                fprintf(stderr, "tunedeck-worker: --gpus and --gpu-ids: expected one of them, "
                                "once\n");
                return EXIT_USAGE;
            }
            if ((c == 'g' ? parse_gpus : parse_gpu_ids)(optarg, &j->gpus) < 0)
                return EXIT_USAGE;
            break;
        case 's': {
            if (t->n_slow == MAX_SLOWDOWNS) {
                fprintf(stderr, "tunedeck-worker: --slowdown: at most %d\n", MAX_SLOWDOWNS);
                return EXIT_USAGE;
            }
            SlowdownSpec *sp = &a->slow[t->n_slow++];
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
    if (a->job && j->gpus < 1) {
        fprintf(stderr,
                "tunedeck-worker: --job: expected --gpus N (how many workers) or --gpu-ids LIST\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* A shard's refusals (which peer, why) go to standard error: the launchers show it as the
 * trial's log, and standard output stays protocol lines. */
static void log_refusal(void *userdata, const char *line)
{
    (void)userdata;
    fprintf(stderr, "tunedeck-worker: %s\n", line);
    fflush(stderr);
}

/* A trial's failure goes both ways: as a protocol error line for the launcher that reads
 * standard output, and to standard error for a person. */
static void print_error(const char *msg)
{
    TrialEvent ev = {.kind = EVENT_ERROR, .text = (char *)msg};
    char *line = protocol_format(&ev);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    fprintf(stderr, "tunedeck-worker: %s\n", msg);
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
        /* --connect-timeout serves both modes; parse_args keeps it with the trial's */
        a.train.connect_timeout_s = a.trial.connect_timeout_s;
        a.train.stop = &g_stop;
        a.train.log = log_refusal;
        if (trainjob_run(&a.train, &err) < 0) {
            fprintf(stderr, "tunedeck-worker: %s\n", err.msg);
            return exitcode_for(&err, EXIT_FAILED); /* a --resume file missing or bad: 3 */
        }
        return 0;
    }
    /* The schedule holds the trial's ps_secret: read past stdio (whose buffer nobody wipes),
     * and every block cJSON frees is wiped, even those of a parse that fails part-way. */
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = malloc, .free_fn = secret_wipe_free});
    if (secret_no_core_dumps(&err) < 0) {
        print_error(err.msg);
        return EXIT_FAILED;
    }
    size_t text_len = 0;
    char *text = readsecret_fd(STDIN_FILENO, 64u << 20, &text_len, &err);
    if (!text) {
        error_prefix(&err, "standard input: the schedule");
        print_error(err.msg);
        return EXIT_BAD_INPUT;
    }
    a.trial.machine = a.machine ? a.machine : getenv("TUNEDECK_MACHINE");
    a.trial.machine_from = a.machine ? "--machine" : "$TUNEDECK_MACHINE";
    a.trial.log = log_refusal;
    rc = trial_run(&a.trial, text, text_len, "standard input", &err);
    readsecret_free(text, text_len);
    if (rc < 0) {
        print_error(err.msg);
        return exitcode_for(&err, EXIT_FAILED);
    }
    return 0;
}
