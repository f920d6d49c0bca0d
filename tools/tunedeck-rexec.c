/* tunedeck-rexec: runs one command on every host of an inventory through the host pool —
 * the remote layer on its own, for tests and the benchmark. Every argument after `--` is
 * single-quoted before it reaches the remote shell. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/base/termsafe.h"
#include "core/base/clock.h"
#include "core/base/decimal.h"
#include "core/base/exitcode.h"
#include "core/base/evloop.h"
#include "core/base/readall.h"
#include "core/base/secret.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tunedeck-rexec --cluster FILE [--accept-new-host-keys] [--only NAME]\n"
                 "                      [--stdin FILE] [--repeat N] [--interval S] [--quiet]\n"
                 "                      [--stats] [--keep] (--sh COMMAND | -- ARG...)\n"
                 "  --keep   keep sessions up between rounds (heartbeats, reconnect with backoff)\n"
                 "  --heartbeat S  keep-alive period (default 5; 3 missed: the host is down)\n"
                 "  --accept-fingerprint FP  accept an unknown host key only if it is FP\n"
                 "  prints 'NAME out: LINE', 'NAME err: LINE', then 'NAME exit N' or\n"
                 "  'NAME ssh-failed: WHY' per host and run; exit 0 when every command exited 0,\n"
                 "  4 when a host could not be reached, 1 when a command failed\n");
}

typedef struct {
    int quiet;
    long lines;
    HostPool *pool;
} Ctx;

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1000 + (double)ts.tv_nsec / 1e6;
}

/* The pool as a source of the loop, its steps timed for --stats. */
typedef struct {
    HostPool *pool;
    double t0;
    double max_step_ms, max_step_cpu_ms;
    double connected_s; /* when every host was first ready; < 0 not yet */
} Timed;

static size_t timed_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    Timed *t = ctx;
    return hostpool_pollfds(t->pool, fds, cap, deadline_ms);
}

static void timed_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    Timed *t = ctx;
    double s0 = clock_now_s(), c0 = thread_cpu_ms();
    hostpool_step(t->pool, fds, n, now_ms);
    double step_ms = (clock_now_s() - s0) * 1000, step_cpu_ms = thread_cpu_ms() - c0;
    if (step_cpu_ms > t->max_step_cpu_ms)
        t->max_step_cpu_ms = step_cpu_ms;
    if (step_ms > t->max_step_ms)
        t->max_step_ms = step_ms;
    if (t->connected_s < 0) {
        size_t ready = 0, n_hosts = hostpool_size(t->pool);
        for (size_t i = 0; i < n_hosts; i++) {
            HostInfo hi;
            hostpool_info(t->pool, i, &hi);
            ready += hi.state == HOST_READY;
        }
        if (ready == n_hosts)
            t->connected_s = clock_now_s() - t->t0;
    }
}

static int all_done(RemoteExec *const *xs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (xs[i] && !rexec_done(xs[i]))
            return 0;
    return 1;
}

static void on_line(void *ud, RemoteExec *x, StreamKind s, const char *line, int cut)
{
    Ctx *c = ud;
    c->lines++;
    if (c->quiet)
        return;
    HostInfo hi;
    hostpool_info(c->pool, rexec_host(x), &hi);
    const char *kind = s == STREAM_STDOUT ? "out" : "err";
    size_t len = strlen(line);
    /* Remote output reaches this terminal: never its controls. Long lines are summarised:
     * their length and both ends. */
    char head[512], tail[128];
    if (len > 200) {
        termsafe_n(head, sizeof head, line, 60);
        termsafe(tail, sizeof tail, line + len - 20);
        printf("%s %s: [%zu bytes%s] %s...%s\n", hi.name, kind, len, cut ? ", cut" : "", head,
               tail);
    } else {
        char safe[2048];
        termsafe(safe, sizeof safe, line);
        printf("%s %s: %s\n", hi.name, kind, safe);
    }
}

int main(int argc, char **argv)
{
    static const struct option LONG[] = {{"cluster", required_argument, 0, 'c'},
                                         {"accept-new-host-keys", no_argument, 0, 'A'},
                                         {"only", required_argument, 0, 'o'},
                                         {"stdin", required_argument, 0, 'i'},
                                         {"repeat", required_argument, 0, 'r'},
                                         {"interval", required_argument, 0, 'I'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"stats", no_argument, 0, 's'},
                                         {"keep", no_argument, 0, 'k'},
                                         {"heartbeat", required_argument, 0, 'H'},
                                         {"accept-fingerprint", required_argument, 0, 'F'},
                                         {"sh", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    Error nodump_err; /* it loads the same keys as tunedeck (secret.h) */
    if (secret_no_core_dumps_unless(getenv("TUNEDECK_DUMPABLE"), &nodump_err) < 0)
        fprintf(stderr, "tunedeck-rexec: %s\n", nodump_err.msg);
    const char *accept_fp = NULL;
    const char *cluster_path = NULL, *only = NULL, *stdin_path = NULL, *sh = NULL;
    int accept = 0, stats = 0, keep = 0;
    long repeat = 1;
    double interval_s = 0, heartbeat_s = 0;
    Ctx ctx = {0};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'c':
            cluster_path = optarg;
            break;
        case 'A':
            accept = 1;
            break;
        case 'o':
            only = optarg;
            break;
        case 'i':
            stdin_path = optarg;
            break;
        case 'q':
            ctx.quiet = 1;
            break;
        case 's':
            stats = 1;
            break;
        case 'k':
            keep = 1;
            break;
        case 'F':
            accept_fp = optarg;
            break;
        case 'H':
            if (decimal_double(optarg, 0.01, 3600, &heartbeat_s) < 0) {
                fprintf(stderr,
                        "tunedeck-rexec: --heartbeat: expected seconds in [0.01, 3600], "
                        "found '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'S':
            sh = optarg;
            break;
        case 'r':
            if (decimal_long(optarg, 1, LONG_MAX, &repeat) < 0) {
                fprintf(stderr, "tunedeck-rexec: --repeat: expected a count >= 1, found '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'I':
            if (decimal_double(optarg, 0, 3600, &interval_s) < 0) {
                fprintf(stderr,
                        "tunedeck-rexec: --interval: expected seconds in [0, 3600], "
                        "found '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "tunedeck-rexec: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (!cluster_path || (!sh && optind >= argc)) {
        fprintf(stderr, "tunedeck-rexec: expected --cluster FILE and --sh COMMAND or -- ARG... "
                        "(try --help)\n");
        return EXIT_USAGE;
    }
    Error err;
    Cluster *cl = cluster_load(cluster_path, &err);
    if (!cl) {
        fprintf(stderr, "tunedeck-rexec: %s\n", err.msg);
        return exitcode_for(&err, EXIT_USAGE);
    }
    char *command =
        sh ? strdup(sh) : shquote_argv((const char *const *)argv + optind, (size_t)(argc - optind));
    char *input = NULL;
    size_t input_len = 0;
    if (stdin_path) {
        input = readall_file(stdin_path, 64u << 20, &input_len, &err);
        if (!input) {
            fprintf(stderr, "tunedeck-rexec: --stdin: %s\n", err.msg);
            return EXIT_BAD_INPUT;
        }
    }
    HostPoolOptions po = {.accept_new_host_keys = accept,
                          .heartbeat_s = heartbeat_s,
                          .ssh_config = getenv("TUNEDECK_SSH_CONFIG")};
    HostPool *p = hostpool_new(&po, &err);
    if (!p || hostpool_add_cluster(p, cl, &err) < 0) {
        fprintf(stderr, "tunedeck-rexec: %s\n", err.msg);
        return EXIT_USAGE;
    }
    ctx.pool = p;
    size_t n = hostpool_size(p);
    for (size_t i = 0; accept_fp && i < n; i++)
        if (hostpool_accept_host_key(p, i, accept_fp, &err) < 0) {
            fprintf(stderr, "tunedeck-rexec: --accept-fingerprint: %s\n", err.msg);
            return EXIT_USAGE;
        }
    for (size_t i = 0; keep && i < n; i++)
        hostpool_connect(p, i, 1);
    char *last_ok = calloc(n, 1);
    RemoteExec **xs = calloc(n, sizeof *xs);
    int failures = 0, ssh_failures = 0;
    double first_round_s = 0;
    double t0 = clock_now_s();
    Timed tm = {.pool = p, .t0 = t0, .connected_s = -1};
    EvLoop *loop = evloop_new();
    if (!last_ok || !xs || !loop || evloop_add(loop, timed_pollfds, timed_step, &tm) < 0) {
        fprintf(stderr, "tunedeck-rexec: out of memory\n");
        return EXIT_USAGE;
    }
    for (long round = 0; round < repeat; round++) {
        double round_start = clock_now_s();
        for (size_t i = 0; i < n; i++) {
            HostInfo hi;
            hostpool_info(p, i, &hi);
            if (only && strcmp(hi.name, only) != 0)
                continue;
            ExecOptions eo = {.on_line = on_line, .userdata = &ctx};
            xs[i] = hostpool_exec(p, i, command, input, input_len, &eo, &err);
        }
        while (!all_done(xs, n))
            evloop_run_once(loop, 1000); /* wakes at least every second */
        for (size_t i = 0; i < n; i++) {
            if (!xs[i])
                continue;
            HostInfo hi;
            hostpool_info(p, i, &hi);
            ExecOutcome o = rexec_outcome(xs[i]);
            last_ok[i] = o == EXEC_EXITED && rexec_exit_status(xs[i]) == 0;
            if (round == 0 && hi.warning[0]) {
                char warning[600];
                termsafe(warning, sizeof warning, hi.warning);
                fprintf(stderr, "%s warning: %s\n", hi.name, warning);
            }
            if (o == EXEC_EXITED) {
                if (!ctx.quiet)
                    printf("%s exit %d\n", hi.name, rexec_exit_status(xs[i]));
                failures += rexec_exit_status(xs[i]) != 0;
            } else {
                /* whole: a failed login's last words come after the agent's, maybe long */
                char *why = termsafe_dup(rexec_error(xs[i]));
                printf("%s %s: %s\n", hi.name, o == EXEC_SSH_FAILED ? "ssh-failed" : "failed",
                       why ? why : "(out of memory)");
                free(why);
                failures++;
                ssh_failures += o == EXEC_SSH_FAILED;
            }
            rexec_free(xs[i]);
            xs[i] = NULL;
        }
        if (round == 0)
            first_round_s = clock_now_s() - t0;
        double next = round_start + interval_s;
        if (round + 1 < repeat) /* the sessions stay served (keep-alives) meanwhile */
            evloop_run(loop, NULL, NULL, (int64_t)(next * 1000));
    }
    if (stats) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                     ru.ru_stime.tv_usec / 1e6;
        fprintf(stderr,
                "stats: hosts %zu connected_s %.3f first_round_s %.3f total_s %.3f cpu_s %.3f "
                "max_step_ms %.2f max_step_cpu_ms %.2f lines %ld\n",
                n, tm.connected_s, first_round_s, clock_now_s() - t0, cpu, tm.max_step_ms,
                tm.max_step_cpu_ms, ctx.lines);
        for (size_t i = 0; i < n; i++) {
            HostInfo hi;
            hostpool_info(p, i, &hi);
            printf("host %s connects %d drops %d\nlast-round %s %s\n", hi.name, hi.connects,
                   hi.drops, hi.name, last_ok[i] ? "ok" : "failed");
        }
    }
    free(last_ok);
    free(xs);
    evloop_free(loop);
    free(command);
    free(input);
    hostpool_free(p);
    cluster_free(cl);
    return ssh_failures ? EXIT_REMOTE : failures ? EXIT_FAILED : EXIT_OK;
}
