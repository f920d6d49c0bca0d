/* bench/optimizer: every registered optimizer and Optuna's generic samplers, run in one
 * process on the same simulated clusters with the same seeds; best-so-far curves as ratios
 * to the simulator's best-known noiseless time, trials to within 10%, and suggest() time. */
#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/opt/flatsched.h"
#include "core/base/linebuf.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"

/* From OpenBLAS; not through cblas.h, whose declarations clash with GSL's (DESIGN §7). */
extern char *openblas_get_corename(void);

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

enum { MAX_CONTENDERS = 32, MAX_CELLS = 32, MAX_SEEDS = 100 };
static const int CHECKPOINTS[] = {5, 10, 20, 30};
enum { N_CHECKPOINTS = 4 };
static const double WITHIN = 1.10;        /* "within 10% of best-known" */
static const double PEER_TIMEOUT_S = 120; /* one answer from the Python peer */
/* The default keeps `make bench` near 3 minutes on 2 cores; --cells all is the grid. */
#define DEFAULT_CELLS "A:googlenet,B:googlenet,C:googlenet,C:alexnet,B:speechnet"
#define ALL_CELLS                                                                                  \
    "A:googlenet,A:alexnet,A:speechnet,B:googlenet,B:alexnet,B:speechnet,C:googlenet,"             \
    "C:alexnet,C:speechnet"

/* ---- the generic peers: a Python process (bench/generic_peer.py) answering ask/tell ---- */

typedef struct {
    pid_t pid;
    int to_fd, from_fd;
    LineBuf buf;
    char version[32];
    char sampler_note[3][256]; /* "ok" or why the sampler is missing, per PEER_SAMPLERS */
} Peer;

enum { N_PEER_SAMPLERS = 3 };
static const char *const PEER_SAMPLERS[N_PEER_SAMPLERS] = {"tpe", "cmaes", "gp-ei"};
static const char *const PEER_NAMES[N_PEER_SAMPLERS] = {"optuna-tpe", "optuna-cmaes",
                                                        "generic-gp-ei"};

static int peer_read_line(Peer *p, char **line, Error *err)
{
    double deadline = clock_now_s() + PEER_TIMEOUT_S;
    for (;;) {
        int trunc;
        if ((*line = linebuf_pop(&p->buf, &trunc)))
            return 0;
        double left = deadline - clock_now_s();
        if (left <= 0)
            return error_set(err, "generic peer: no answer within %.0f s", PEER_TIMEOUT_S);
        struct pollfd pfd = {.fd = p->from_fd, .events = POLLIN};
        int rc = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        char chunk[4096];
        ssize_t n = read(p->from_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error_set(err, "generic peer: the Python process ended (see its stderr)");
        linebuf_append(&p->buf, chunk, (size_t)n);
    }
}

/* Sends one request (NULL: just read) and returns its parsed answer. */
static cJSON *peer_call(Peer *p, const char *request, Error *err)
{
    if (request) {
        size_t len = strlen(request), sent = 0;
        while (sent < len) {
            ssize_t n = write(p->to_fd, request + sent, len - sent);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                error_set(err, "generic peer: write: %s", strerror(errno));
                return NULL;
            }
            sent += (size_t)n;
        }
    }
    char *line;
    if (peer_read_line(p, &line, err) < 0)
        return NULL;
    cJSON *j = cJSON_Parse(line);
    if (!j || !cJSON_IsObject(j)) {
        error_set(err, "generic peer: expected a JSON object, found '%.80s'", line);
        cJSON_Delete(j);
        free(line);
        return NULL;
    }
    free(line);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(e)) {
        error_set(err, "generic peer: %s", e->valuestring);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static void peer_stop(Peer *p)
{
    if (p->pid <= 0)
        return;
    close(p->to_fd); /* end of input: the script exits */
    for (int i = 0; i < 100; i++) {
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
            p->pid = 0;
            break;
        }
        usleep(20000);
    }
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    close(p->from_fd);
    linebuf_clear(&p->buf);
}

static int peer_start(Peer *p, const char *python, const char *script, Error *err)
{
    memset(p, 0, sizeof *p);
    if (access(python, X_OK) != 0)
        return error_set(err, "%s: not an executable (%s)", python, strerror(errno));
    if (access(script, R_OK) != 0)
        return error_set(err, "%s: cannot read the peer script (%s)", script, strerror(errno));
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0)
        return error_set(err, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return error_set(err, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        /* One BLAS thread: numpy's spinning workers would steal the core the C side uses. */
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        execl(python, python, script, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->pid = pid;
    p->to_fd = in[1];
    p->from_fd = out[0];
    linebuf_init(&p->buf, 1 << 20);
    cJSON *hello = peer_call(p, NULL, err);
    if (!hello) {
        peer_stop(p);
        return -1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hello, "optuna");
    snprintf(p->version, sizeof p->version, "%s",
             cJSON_IsString(v) ? v->valuestring : "not importable");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(hello, "samplers");
    for (int i = 0; i < N_PEER_SAMPLERS; i++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, PEER_SAMPLERS[i]);
        snprintf(p->sampler_note[i], sizeof p->sampler_note[i], "%s",
                 cJSON_IsString(n) ? n->valuestring : "not offered by the peer script");
    }
    cJSON_Delete(hello);
    return 0;
}

/* ---- contenders, cells, runs ---- */

typedef struct {
    char name[64];
    int peer_sampler; /* -1: a registered optimizer; else index into PEER_SAMPLERS */
    int skipped;
    char reason[300];
} Contender;

typedef struct {
    int ran;
    char error[300];    /* why it did not run or stopped early */
    double *observed_s; /* NAN when the trial failed */
    double *noiseless_s;
    double *ratio;           /* best noiseless time among ok trials so far / best-known */
    double *incumbent_ratio; /* noiseless time of the fastest-measured trial / best-known */
    double *suggest_ms;
    int failed;
} Run;

typedef struct {
    double ratio_at[N_CHECKPOINTS];
    double trials_to_within; /* median; > trials means most seeds never got there */
    int censored;            /* seeds that never got within */
    double suggest_ms_median, suggest_ms_max;
    double last_suggest_ms; /* median over seeds of the last trial's suggest(): the most data */
    int runs;
} Summary;

typedef struct {
    char spec[64];
    SimCluster *sim;
    double best_known_s;
    Run *runs;        /* [contender][seed] */
    Summary *summary; /* [contender] */
} Cell;

typedef struct {
    Contender contenders[MAX_CONTENDERS];
    size_t n_contenders;
    Cell cells[MAX_CELLS];
    size_t n_cells;
    int n_seeds, trials;
    int eval_sim_trial;
    char tunedeck[1024];
    const char *ref;
    Peer peer;
    int peer_up;
    char peer_note[300];
} Bench;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static Observation *evaluate(Bench *b, Cell *cell, const Schedule *s, uint64_t seed, Error *err)
{
    LaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_s = 600;
    cfg.seed = seed;
    if (!b->eval_sim_trial) {
        cfg.sim = cell->sim;
        return launcher_run_blocking(launcher_find("sim"), &cfg, s, err);
    }
    /* The real subcommand: same simulator, same seed, the trial number from the schedule. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' sim-trial '%s' --seed %llu", b->tunedeck, cell->spec,
             (unsigned long long)seed);
    cfg.command = cmd;
    return launcher_run_blocking(launcher_find("local"), &cfg, s, err);
}

/* One suggestion from a contender: a registered optimizer or the Optuna peer. */
static Schedule *ask(Bench *b, const Contender *k, Optimizer *opt, const Cell *cell, Error *err)
{
    if (opt) {
        Suggestion sg;
        if (optimizer_suggest(opt, &sg, err) < 0) {
            suggestion_clear(&sg);
            return NULL;
        }
        Schedule *s = sg.schedule;
        sg.schedule = NULL;
        suggestion_clear(&sg);
        return s;
    }
    (void)k;
    const Cluster *c = simcluster_cluster(cell->sim);
    cJSON *a = peer_call(&b->peer, "{\"op\":\"ask\"}\n", err);
    if (!a)
        return NULL;
    const cJSON *roles = cJSON_GetObjectItemCaseSensitive(a, "roles");
    const cJSON *weights = cJSON_GetObjectItemCaseSensitive(a, "weights");
    if (cJSON_GetArraySize(roles) != (int)c->n_machines ||
        cJSON_GetArraySize(weights) != (int)c->n_devices) {
        error_set(err, "generic peer: ask: expected %zu roles and %zu weights", c->n_machines,
                  c->n_devices);
        cJSON_Delete(a);
        return NULL;
    }
    int *r = calloc(c->n_machines, sizeof *r);
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    for (size_t m = 0; m < c->n_machines; m++)
        r[m] = cJSON_GetArrayItem(roles, (int)m)->valueint;
    for (size_t d = 0; d < c->n_devices; d++)
        w[d] = cJSON_GetArrayItem(weights, (int)d)->valuedouble;
    cJSON_Delete(a);
    Schedule *s = schedule_new(c, simcluster_job(cell->sim));
    if (flatsched_decode(r, w, s, err) < 0) {
        schedule_free(s);
        s = NULL;
    }
    free(r);
    free(w);
    return s;
}

static int peer_new_study(Bench *b, const Contender *k, const Cell *cell, uint64_t seed, Error *err)
{
    const Cluster *c = simcluster_cluster(cell->sim);
    char req[256];
    snprintf(req, sizeof req,
             "{\"op\":\"new\",\"sampler\":\"%s\",\"seed\":%llu,\"roles\":%zu,\"weights\":%zu}\n",
             PEER_SAMPLERS[k->peer_sampler], (unsigned long long)seed, c->n_machines, c->n_devices);
    cJSON *a = peer_call(&b->peer, req, err);
    cJSON_Delete(a);
    return a ? 0 : -1;
}

static void run_alloc(Run *r, int trials)
{
    r->observed_s = calloc((size_t)trials, sizeof(double));
    r->noiseless_s = calloc((size_t)trials, sizeof(double));
    r->ratio = calloc((size_t)trials, sizeof(double));
    r->incumbent_ratio = calloc((size_t)trials, sizeof(double));
    r->suggest_ms = calloc((size_t)trials, sizeof(double));
    for (int t = 0; t < trials; t++) {
        r->observed_s[t] = r->noiseless_s[t] = NAN;
        r->ratio[t] = r->incumbent_ratio[t] = INFINITY;
        r->suggest_ms[t] = NAN;
    }
}

static void run_free(Run *r)
{
    free(r->observed_s);
    free(r->noiseless_s);
    free(r->ratio);
    free(r->incumbent_ratio);
    free(r->suggest_ms);
}

/* One tuning session of `trials` trials: ask, run on the simulator, tell. Mirrors the
 * tuner (remote/launch/tuner.c): trial numbers from 1, the seed for the optimizer and the noise. */
static void run_session(Bench *b, Cell *cell, const Contender *k, uint64_t seed, Run *r)
{
    Error err;
    run_alloc(r, b->trials);
    const Cluster *c = simcluster_cluster(cell->sim);
    Optimizer *opt = NULL;
    if (k->peer_sampler < 0) {
        opt = optimizer_new(k->name, c, simcluster_job(cell->sim), seed, &err);
        if (!opt) {
            snprintf(r->error, sizeof r->error, "%s", err.msg);
            return;
        }
    } else if (peer_new_study(b, k, cell, seed, &err) < 0) {
        snprintf(r->error, sizeof r->error, "%s", err.msg);
        return;
    }
    r->ran = 1;
    double best_obs = INFINITY, incumbent = INFINITY, best_true = INFINITY, worst_ok = 0;
    for (int t = 1; t <= b->trials; t++) {
        double t0 = clock_now_s();
        Schedule *s = ask(b, k, opt, cell, &err);
        double ms = (clock_now_s() - t0) * 1000.0;
        if (!s) {
            snprintf(r->error, sizeof r->error, "trial %d: %s", t, err.msg);
            for (int u = t; u <= b->trials; u++) {
                r->ratio[u - 1] = best_true / cell->best_known_s;
                r->incumbent_ratio[u - 1] = incumbent / cell->best_known_s;
            }
            break;
        }
        s->trial = t;
        r->suggest_ms[t - 1] = ms;
        Observation *o = evaluate(b, cell, s, seed, &err);
        if (!o) {
            o = observation_new(s);
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s", err.msg);
        }
        int ok = o->status == TRIAL_OK;
        double noiseless = simcluster_noiseless_time(cell->sim, s);
        r->noiseless_s[t - 1] = noiseless;
        r->observed_s[t - 1] = ok ? o->time_s : NAN;
        r->failed += !ok;
        if (ok && o->time_s > worst_ok)
            worst_ok = o->time_s;
        /* Best-so-far is judged by the true (noiseless) time of the schedules tried, so a
         * lucky noisy measurement earns nothing; the incumbent (what measured fastest, what
         * an operator would deploy) is kept too. */
        if (ok && noiseless < best_true)
            best_true = noiseless;
        if (ok && o->time_s < best_obs) {
            best_obs = o->time_s;
            incumbent = noiseless;
        }
        r->ratio[t - 1] = best_true / cell->best_known_s;
        r->incumbent_ratio[t - 1] = incumbent / cell->best_known_s;
        if (opt)
            optimizer_observe(opt, o);
        else {
            /* A failed trial is told as twice the worst time seen: generic samplers rank. */
            char req[128];
            snprintf(req, sizeof req, "{\"op\":\"tell\",\"value\":%.17g}\n",
                     ok             ? o->time_s
                     : worst_ok > 0 ? 2 * worst_ok
                                    : 100.0);
            cJSON *a = peer_call(&b->peer, req, &err);
            cJSON_Delete(a);
            if (!a) {
                snprintf(r->error, sizeof r->error, "trial %d: %s", t, err.msg);
                for (int u = t + 1; u <= b->trials; u++) {
                    r->ratio[u - 1] = r->ratio[t - 1];
                    r->incumbent_ratio[u - 1] = r->incumbent_ratio[t - 1];
                }
                observation_free(o);
                schedule_free(s);
                break;
            }
        }
        observation_free(o);
        schedule_free(s);
    }
    optimizer_free(opt);
}

static void summarize(const Bench *b, Cell *cell, size_t ki)
{
    Summary *sm = &cell->summary[ki];
    memset(sm, 0, sizeof *sm);
    double *v = calloc((size_t)(b->n_seeds * b->trials) + 1, sizeof *v);
    size_t n = 0;
    for (int ci = 0; ci < N_CHECKPOINTS; ci++) {
        n = 0;
        for (int s = 0; s < b->n_seeds; s++) {
            const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
            if (r->ran && CHECKPOINTS[ci] <= b->trials)
                v[n++] = r->ratio[CHECKPOINTS[ci] - 1];
        }
        sm->ratio_at[ci] = n ? median(v, n) : NAN;
    }
    n = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (!r->ran)
            continue;
        int first = b->trials + 1;
        for (int t = 0; t < b->trials; t++)
            if (r->ratio[t] <= WITHIN) {
                first = t + 1;
                break;
            }
        sm->censored += first > b->trials;
        v[n++] = first;
        sm->runs++;
    }
    sm->trials_to_within = n ? median(v, n) : NAN;
    n = 0;
    sm->suggest_ms_max = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        for (int t = 0; r->ran && t < b->trials; t++)
            if (!isnan(r->suggest_ms[t])) {
                v[n++] = r->suggest_ms[t];
                if (r->suggest_ms[t] > sm->suggest_ms_max)
                    sm->suggest_ms_max = r->suggest_ms[t];
            }
    }
    sm->suggest_ms_median = n ? median(v, n) : NAN;
    n = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (r->ran && !isnan(r->suggest_ms[b->trials - 1]))
            v[n++] = r->suggest_ms[b->trials - 1];
    }
    sm->last_suggest_ms = n ? median(v, n) : NAN;
    free(v);
}

/* ---- output ---- */

static void fmt_ratio(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (isinf(v))
        snprintf(buf, cap, "none");
    else
        snprintf(buf, cap, "%.3f", v);
}

static void fmt_trials(char *buf, size_t cap, double v, int trials)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (v > trials)
        snprintf(buf, cap, ">%d", trials);
    else
        snprintf(buf, cap, "%g", v);
}

static void print_cell(const Bench *b, const Cell *cell)
{
    printf("\n%s  best-known %.4f s/iteration  (%d seeds, %d trials; median over seeds)\n",
           cell->spec, cell->best_known_s, b->n_seeds, b->trials);
    printf("  %-16s", "optimizer");
    for (int ci = 0; ci < N_CHECKPOINTS; ci++)
        if (CHECKPOINTS[ci] <= b->trials)
            printf("  @%-5d", CHECKPOINTS[ci]);
    printf("  %9s  %10s  %8s  %s\n", "to<=1.10", "suggest_ms", "last_ms", "note");
    for (size_t ki = 0; ki < b->n_contenders; ki++) {
        const Contender *k = &b->contenders[ki];
        const Summary *sm = &cell->summary[ki];
        printf("  %-16s", k->name);
        if (k->skipped || !sm->runs) {
            const Run *r0 = &cell->runs[ki * (size_t)b->n_seeds];
            printf("  skipped: %s\n", k->skipped ? k->reason : r0->error);
            continue;
        }
        char buf[32];
        for (int ci = 0; ci < N_CHECKPOINTS; ci++)
            if (CHECKPOINTS[ci] <= b->trials) {
                fmt_ratio(buf, sizeof buf, sm->ratio_at[ci]);
                printf("  %-6s", buf);
            }
        fmt_trials(buf, sizeof buf, sm->trials_to_within, b->trials);
        printf("  %9s  %10.2f  %8.2f", buf, sm->suggest_ms_median, sm->last_suggest_ms);
        const char *note = "";
        for (int s = 0; s < b->n_seeds; s++) {
            const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
            if (r->error[0])
                note = r->error;
        }
        printf("  %s\n", note);
    }
}

static int checkpoint_index(int trials, int at)
{
    for (int ci = 0; ci < N_CHECKPOINTS; ci++)
        if (CHECKPOINTS[ci] == at && at <= trials)
            return ci;
    return -1;
}

/* Geometric mean over cells where both ran; returns the number of cells used. */
typedef struct {
    int cells, ref_better_10_vs_30, peer_never, ref_never;
    double trials_ratio, ref_at10, peer_at10, peer_at30, ref_at30, at10_vs_30;
} Comparison;

static Comparison compare(const Bench *b, size_t ref, size_t peer)
{
    Comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    int c10 = checkpoint_index(b->trials, 10), c30 = checkpoint_index(b->trials, 30);
    int cl = c30 >= 0 ? c30 : c10;
    double lt = 0, lr10 = 0, lp10 = 0, lp30 = 0, lr30 = 0, lx = 0;
    for (size_t i = 0; i < b->n_cells; i++) {
        const Summary *R = &b->cells[i].summary[ref], *P = &b->cells[i].summary[peer];
        if (!R->runs || !P->runs)
            continue;
        cmp.cells++;
        lt += log(P->trials_to_within / R->trials_to_within);
        cmp.peer_never += P->trials_to_within > b->trials;
        cmp.ref_never += R->trials_to_within > b->trials;
        if (c10 >= 0) {
            lr10 += log(R->ratio_at[c10]);
            lp10 += log(P->ratio_at[c10]);
        }
        if (cl >= 0) {
            lp30 += log(P->ratio_at[cl]);
            lr30 += log(R->ratio_at[cl]);
            if (c10 >= 0) {
                lx += log(P->ratio_at[cl] / R->ratio_at[c10]);
                cmp.ref_better_10_vs_30 += R->ratio_at[c10] < P->ratio_at[cl];
            }
        }
    }
    if (cmp.cells) {
        cmp.trials_ratio = exp(lt / cmp.cells);
        cmp.ref_at10 = exp(lr10 / cmp.cells);
        cmp.peer_at10 = exp(lp10 / cmp.cells);
        cmp.peer_at30 = exp(lp30 / cmp.cells);
        cmp.ref_at30 = exp(lr30 / cmp.cells);
        cmp.at10_vs_30 = exp(lx / cmp.cells);
    }
    return cmp;
}

static size_t find_contender(const Bench *b, const char *name)
{
    for (size_t i = 0; i < b->n_contenders; i++)
        if (strcmp(b->contenders[i].name, name) == 0)
            return i;
    return (size_t)-1;
}

static void print_comparisons(const Bench *b, size_t ref)
{
    int last = b->trials >= 30 ? 30 : b->trials;
    printf("\nratios (geometric mean over cells of the per-cell medians; >1 favours %s):\n",
           b->contenders[ref].name);
    for (size_t p = 0; p < b->n_contenders; p++) {
        if (p == ref || b->contenders[p].skipped)
            continue;
        Comparison c = compare(b, ref, p);
        if (!c.cells)
            continue;
        printf("  %s vs %s: %s%.2fx fewer trials to within 10%% of best-known",
               b->contenders[ref].name, b->contenders[p].name, c.peer_never ? ">=" : "",
               c.trials_ratio);
        if (c.peer_never || c.ref_never)
            printf(" (never within in %d/%d cells for %s, %d for %s: counted as %d)", c.peer_never,
                   c.cells, b->contenders[p].name, c.ref_never, b->contenders[ref].name,
                   b->trials + 1);
        printf("\n");
        if (b->trials >= 10)
            printf("      best after 10 trials: %.3f vs %.3f of best-known (%.2fx); %s@10 vs "
                   "%s@%d: %.2fx, better in %d/%d cells\n",
                   c.ref_at10, c.peer_at10, c.peer_at10 / c.ref_at10, b->contenders[ref].name,
                   b->contenders[p].name, last, c.at10_vs_30, c.ref_better_10_vs_30, c.cells);
    }
}

/* The targets for the reference optimizer, counted over cells (medians over seeds). */
typedef struct {
    int cells, within110_at10, within105_at30, c_cells, c_beats_all_by_15;
    int beats_peers_at10[MAX_CONTENDERS]; /* cells where ref@10 < peer@last */
} Targets;

static int is_generic(const Contender *k)
{
    return k->peer_sampler >= 0 || strcmp(k->name, "random") == 0 || strcmp(k->name, "gp") == 0;
}

static Targets targets(const Bench *b, size_t ref)
{
    Targets t;
    memset(&t, 0, sizeof t);
    int c10 = checkpoint_index(b->trials, 10), c30 = checkpoint_index(b->trials, 30);
    if (c10 < 0 || c30 < 0)
        return t;
    for (size_t i = 0; i < b->n_cells; i++) {
        const Summary *R = &b->cells[i].summary[ref];
        if (!R->runs)
            continue;
        t.cells++;
        t.within110_at10 += R->ratio_at[c10] <= 1.10;
        t.within105_at30 += R->ratio_at[c30] <= 1.05;
        int setting_c = b->cells[i].spec[0] == 'C' || b->cells[i].spec[0] == 'c';
        int all15 = 1;
        for (size_t p = 0; p < b->n_contenders; p++) {
            const Summary *P = &b->cells[i].summary[p];
            if (p == ref || !P->runs || !is_generic(&b->contenders[p]))
                continue;
            t.beats_peers_at10[p] += R->ratio_at[c10] < P->ratio_at[c30];
            all15 &= P->ratio_at[c30] >= 1.5 * R->ratio_at[c10];
        }
        t.c_cells += setting_c;
        t.c_beats_all_by_15 += setting_c && all15;
    }
    return t;
}

static void print_targets(const Bench *b, size_t ref)
{
    Targets t = targets(b, ref);
    if (!t.cells)
        return;
    const char *r = b->contenders[ref].name;
    printf("\ntargets for %s (issue 3; medians over seeds):\n", r);
    printf("  within 1.10x of best-known by trial 10: %d/%d cells\n", t.within110_at10, t.cells);
    printf("  within 1.05x of best-known by trial 30: %d/%d cells\n", t.within105_at30, t.cells);
    for (size_t p = 0; p < b->n_contenders; p++)
        if (p != ref && !b->contenders[p].skipped && is_generic(&b->contenders[p]))
            printf("  %s@10 better than %s@30: %d/%d cells\n", r, b->contenders[p].name,
                   t.beats_peers_at10[p], t.cells);
    if (t.c_cells)
        printf("  setting C: %s@10 at least 1.5x better than every generic peer@30: %d/%d "
               "cells\n",
               r, t.c_beats_all_by_15, t.c_cells);
}

static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *array_of(const double *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, num_or_null(v[i]));
    return a;
}

static cJSON *bench_json(const Bench *b, size_t ref, double wall_s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "benchmark", "optimizer");
    cJSON_AddStringToObject(root, "openblas_core", openblas_get_corename());
    cJSON_AddNumberToObject(root, "trials", b->trials);
    cJSON_AddNumberToObject(root, "seeds", b->n_seeds);
    cJSON_AddStringToObject(root, "eval", b->eval_sim_trial ? "sim-trial" : "inproc");
    cJSON_AddNumberToObject(root, "within", WITHIN);
    cJSON_AddNumberToObject(root, "wall_s", wall_s);
    cJSON_AddStringToObject(root, "optuna", b->peer_up ? b->peer.version : b->peer_note);
    if (ref != (size_t)-1)
        cJSON_AddStringToObject(root, "reference", b->contenders[ref].name);
    cJSON *names = cJSON_AddArrayToObject(root, "optimizers");
    cJSON *skipped = cJSON_AddArrayToObject(root, "skipped");
    for (size_t k = 0; k < b->n_contenders; k++) {
        const Contender *c = &b->contenders[k];
        cJSON_AddItemToArray(names, cJSON_CreateString(c->name));
        if (c->skipped) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "name", c->name);
            cJSON_AddStringToObject(s, "reason", c->reason);
            cJSON_AddItemToArray(skipped, s);
        }
    }
    cJSON *cells = cJSON_AddArrayToObject(root, "cells");
    for (size_t i = 0; i < b->n_cells; i++) {
        const Cell *cell = &b->cells[i];
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddStringToObject(cj, "spec", cell->spec);
        cJSON_AddItemToObject(cj, "best_known_s", num_or_null(cell->best_known_s));
        cJSON *res = cJSON_AddArrayToObject(cj, "results");
        for (size_t k = 0; k < b->n_contenders; k++) {
            const Summary *sm = &cell->summary[k];
            cJSON *rj = cJSON_CreateObject();
            cJSON_AddStringToObject(rj, "optimizer", b->contenders[k].name);
            cJSON_AddBoolToObject(rj, "ran", sm->runs > 0);
            cJSON *at = cJSON_AddObjectToObject(rj, "median_ratio_at");
            for (int ci = 0; ci < N_CHECKPOINTS; ci++)
                if (CHECKPOINTS[ci] <= b->trials) {
                    char key[16];
                    snprintf(key, sizeof key, "%d", CHECKPOINTS[ci]);
                    cJSON_AddItemToObject(at, key, num_or_null(sm->ratio_at[ci]));
                }
            cJSON_AddItemToObject(rj, "median_trials_to_within", num_or_null(sm->trials_to_within));
            cJSON_AddNumberToObject(rj, "seeds_never_within", sm->censored);
            cJSON_AddItemToObject(rj, "median_suggest_ms", num_or_null(sm->suggest_ms_median));
            cJSON_AddItemToObject(rj, "max_suggest_ms", num_or_null(sm->suggest_ms_max));
            cJSON_AddItemToObject(rj, "median_last_suggest_ms", num_or_null(sm->last_suggest_ms));
            cJSON *runs = cJSON_AddArrayToObject(rj, "runs");
            for (int s = 0; s < b->n_seeds; s++) {
                const Run *r = &cell->runs[k * (size_t)b->n_seeds + (size_t)s];
                cJSON *run = cJSON_CreateObject();
                cJSON_AddNumberToObject(run, "seed", s + 1);
                if (r->error[0])
                    cJSON_AddStringToObject(run, "error", r->error);
                if (r->ran) {
                    cJSON_AddNumberToObject(run, "failed_trials", r->failed);
                    cJSON_AddItemToObject(run, "best_ratio", array_of(r->ratio, b->trials));
                    cJSON_AddItemToObject(run, "incumbent_ratio",
                                          array_of(r->incumbent_ratio, b->trials));
                    cJSON_AddItemToObject(run, "observed_s", array_of(r->observed_s, b->trials));
                    cJSON_AddItemToObject(run, "noiseless_s", array_of(r->noiseless_s, b->trials));
                    cJSON_AddItemToObject(run, "suggest_ms", array_of(r->suggest_ms, b->trials));
                }
                cJSON_AddItemToArray(runs, run);
            }
            cJSON_AddItemToArray(res, rj);
        }
        cJSON_AddItemToArray(cells, cj);
    }
    if (ref != (size_t)-1) {
        Targets t = targets(b, ref);
        cJSON *tj = cJSON_AddObjectToObject(root, "targets");
        cJSON_AddNumberToObject(tj, "cells", t.cells);
        cJSON_AddNumberToObject(tj, "within_1_10_at_10", t.within110_at10);
        cJSON_AddNumberToObject(tj, "within_1_05_at_30", t.within105_at30);
        cJSON_AddNumberToObject(tj, "setting_c_cells", t.c_cells);
        cJSON_AddNumberToObject(tj, "setting_c_1_5x_better_than_every_generic",
                                t.c_beats_all_by_15);
        cJSON *bp = cJSON_AddObjectToObject(tj, "at_10_better_than_peer_at_30_cells");
        for (size_t p = 0; p < b->n_contenders; p++)
            if (p != ref && !b->contenders[p].skipped && is_generic(&b->contenders[p]))
                cJSON_AddNumberToObject(bp, b->contenders[p].name, t.beats_peers_at10[p]);
    }
    cJSON *cmps = cJSON_AddArrayToObject(root, "comparisons");
    for (size_t p = 0; ref != (size_t)-1 && p < b->n_contenders; p++) {
        if (p == ref || b->contenders[p].skipped)
            continue;
        Comparison c = compare(b, ref, p);
        if (!c.cells)
            continue;
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddStringToObject(cj, "reference", b->contenders[ref].name);
        cJSON_AddStringToObject(cj, "peer", b->contenders[p].name);
        cJSON_AddNumberToObject(cj, "cells", c.cells);
        cJSON_AddItemToObject(cj, "fewer_trials_to_within", num_or_null(c.trials_ratio));
        cJSON_AddNumberToObject(cj, "peer_never_within_cells", c.peer_never);
        if (b->trials >= 10) {
            cJSON_AddItemToObject(cj, "reference_ratio_at_10", num_or_null(c.ref_at10));
            cJSON_AddItemToObject(cj, "peer_ratio_at_10", num_or_null(c.peer_at10));
            cJSON_AddItemToObject(cj, "peer_last_over_reference_10", num_or_null(c.at10_vs_30));
            cJSON_AddNumberToObject(cj, "reference_10_better_than_peer_last_cells",
                                    c.ref_better_10_vs_30);
        }
        cJSON_AddItemToArray(cmps, cj);
    }
    return root;
}

/* ---- arguments ---- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: optimizer [--cells LIST] [--seeds N] [--trials N] [--optimizers LIST]\n"
            "                 [--ref NAME] [--eval inproc|sim-trial] [--no-peers]\n"
            "                 [--python PATH] [--peer-script FILE] [--out FILE]\n"
            "  --cells LIST       simulated SETTING:NETWORK specs, comma-separated, or\n"
            "                     'all' for A, B, C x googlenet, alexnet, speechnet\n"
            "                     (default %s)\n"
            "  --seeds N          seeds 1..N per cell (default 3)\n"
            "  --trials N         trials per session (default 30)\n"
            "  --optimizers LIST  default: every registered optimizer (%s),\n"
            "                     then the generic peers optuna-tpe and optuna-cmaes\n"
            "                     (bench/generic_peer.py); generic-gp-ei, a numpy\n"
            "                     Spearmint-like GP-EI, runs when named\n"
            "  --ref NAME         the optimizer the ratio lines compare against\n"
            "                     (default bespoke when registered, else random)\n"
            "  --eval MODE        inproc: the sim launcher (default); sim-trial: every trial\n"
            "                     through `tunedeck sim-trial` (same simulator and seeds)\n"
            "  --python PATH      the Python that has Debian's optuna (default /usr/bin/python3)\n"
            "  --no-peers         skip the generic peers (no Python process)\n"
            "  --out FILE         write the results as JSON\n",
            DEFAULT_CELLS, optimizer_names());
}

static int add_contender(Bench *b, const char *name)
{
    if (b->n_contenders == MAX_CONTENDERS) {
        fprintf(stderr, "optimizer: --optimizers: at most %d\n", MAX_CONTENDERS);
        return -1;
    }
    Contender *k = &b->contenders[b->n_contenders];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->peer_sampler = -1;
    for (int i = 0; i < N_PEER_SAMPLERS; i++)
        if (strcmp(name, PEER_NAMES[i]) == 0)
            k->peer_sampler = i;
    if (k->peer_sampler < 0 && !optimizer_find(name)) {
        fprintf(stderr,
                "optimizer: --optimizers: unknown optimizer '%s': expected one of %s, "
                "optuna-tpe, optuna-cmaes, generic-gp-ei\n",
                name, optimizer_names());
        return -1;
    }
    b->n_contenders++;
    return 0;
}

static int add_list(const char *list, int (*add)(Bench *, const char *), Bench *b)
{
    char *copy = strdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ", ", &save); t && rc == 0; t = strtok_r(NULL, ", ", &save))
        rc = add(b, t);
    free(copy);
    return rc;
}

static int add_cell(Bench *b, const char *spec)
{
    if (b->n_cells == MAX_CELLS) {
        fprintf(stderr, "optimizer: --cells: at most %d\n", MAX_CELLS);
        return -1;
    }
    Error err;
    Cell *c = &b->cells[b->n_cells];
    memset(c, 0, sizeof *c);
    c->sim = simcluster_new(spec, &err);
    if (!c->sim) {
        fprintf(stderr, "optimizer: --cells: %s\n", err.msg);
        return -1;
    }
    snprintf(c->spec, sizeof c->spec, "%s", spec);
    c->best_known_s = simcluster_best_known(c->sim, NULL);
    if (!isfinite(c->best_known_s)) {
        fprintf(stderr,
                "optimizer: --cells: %s: no best-known time (cluster too large to "
                "enumerate): expected setting A, B or C\n",
                spec);
        simcluster_free(c->sim);
        return -1;
    }
    b->n_cells++;
    return 0;
}

static void find_tunedeck(Bench *b, const char *argv0)
{
    const char *bin = getenv("TUNEDECK_BIN"), *build = getenv("TUNEDECK_BUILD");
    if (bin && *bin)
        snprintf(b->tunedeck, sizeof b->tunedeck, "%s", bin);
    else if (build && *build)
        snprintf(b->tunedeck, sizeof b->tunedeck, "%s/tunedeck", build);
    else {
        /* build/bench/optimizer -> build/tunedeck */
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", argv0);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(dir, sizeof dir, ".");
        snprintf(b->tunedeck, sizeof b->tunedeck, "%s/../tunedeck", dir);
    }
}

static long parse_count(const char *flag, const char *v, long min, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || !*v || n < min || n > max) {
        fprintf(stderr, "optimizer: %s: expected an integer in %ld..%ld, found '%s'\n", flag, min,
                max, v);
        return -1;
    }
    return n;
}

int main(int argc, char **argv)
{
    static const struct option LONG[] = {{"cells", required_argument, 0, 'c'},
                                         {"seeds", required_argument, 0, 's'},
                                         {"trials", required_argument, 0, 't'},
                                         {"optimizers", required_argument, 0, 'o'},
                                         {"ref", required_argument, 0, 'r'},
                                         {"eval", required_argument, 0, 'e'},
                                         {"no-peers", no_argument, 0, 'N'},
                                         {"python", required_argument, 0, 'p'},
                                         {"peer-script", required_argument, 0, 'P'},
                                         {"out", required_argument, 0, 'O'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    static Bench b;
    const char *cells = DEFAULT_CELLS;
    const char *optimizers = NULL, *out = NULL;
    const char *python = getenv("TUNEDECK_PYTHON") ? getenv("TUNEDECK_PYTHON") : "/usr/bin/python3";
    const char *script = TUNEDECK_SOURCE_DIR "/bench/generic_peer.py";
    int no_peers = 0;
    b.n_seeds = 3;
    b.trials = 30;
    int c;
    long v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'c':
            cells = optarg;
            break;
        case 'o':
            optimizers = optarg;
            break;
        case 'r':
            b.ref = optarg;
            break;
        case 'N':
            no_peers = 1;
            break;
        case 'p':
            python = optarg;
            break;
        case 'P':
            script = optarg;
            break;
        case 'O':
            out = optarg;
            break;
        case 's':
            if ((v = parse_count("--seeds", optarg, 1, MAX_SEEDS)) < 0)
                return 2;
            b.n_seeds = (int)v;
            break;
        case 't':
            if ((v = parse_count("--trials", optarg, 1, 1000)) < 0)
                return 2;
            b.trials = (int)v;
            break;
        case 'e':
            if (strcmp(optarg, "inproc") && strcmp(optarg, "sim-trial")) {
                fprintf(stderr, "optimizer: --eval: expected inproc or sim-trial, found '%s'\n",
                        optarg);
                return 2;
            }
            b.eval_sim_trial = strcmp(optarg, "sim-trial") == 0;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "optimizer: unknown or incomplete option '%s' (try --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "optimizer: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    find_tunedeck(&b, argv[0]);
    if (b.eval_sim_trial && access(b.tunedeck, X_OK) != 0) {
        fprintf(stderr,
                "optimizer: --eval sim-trial: %s is not an executable (set "
                "TUNEDECK_BIN)\n",
                b.tunedeck);
        return 2;
    }
    if (optimizers) {
        if (add_list(optimizers, add_contender, &b) < 0)
            return 2;
    } else {
        /* Whatever the registry holds at build time, by name. */
        if (add_list(optimizer_names(), add_contender, &b) < 0)
            return 2;
        /* generic-gp-ei is opt-in: the registered `gp` is the stronger GP-EI baseline. */
        add_contender(&b, "optuna-tpe");
        add_contender(&b, "optuna-cmaes");
    }
    if (strcmp(cells, "all") == 0)
        cells = ALL_CELLS;
    if (add_list(cells, add_cell, &b) < 0)
        return 2;
    if (!b.n_cells) {
        fprintf(stderr, "optimizer: --cells: expected at least one SETTING:NETWORK\n");
        return 2;
    }
    size_t ref = (size_t)-1;
    if (b.ref) {
        ref = find_contender(&b, b.ref);
        if (ref == (size_t)-1) {
            fprintf(stderr, "optimizer: --ref: '%s' is not among the optimizers run\n", b.ref);
            return 2;
        }
    } else {
        ref = find_contender(&b, "bespoke");
        if (ref == (size_t)-1)
            ref = find_contender(&b, "random");
    }

    /* The Optuna peer: started once; a missing Python or Optuna skips it, never fails. */
    int wants_peer = 0;
    for (size_t k = 0; k < b.n_contenders; k++)
        wants_peer |= b.contenders[k].peer_sampler >= 0;
    if (wants_peer) {
        Error err;
        if (no_peers)
            snprintf(b.peer_note, sizeof b.peer_note, "not run (--no-peers)");
        else if (peer_start(&b.peer, python, script, &err) < 0)
            snprintf(b.peer_note, sizeof b.peer_note, "%s", err.msg);
        else
            b.peer_up = 1;
        for (size_t k = 0; k < b.n_contenders; k++) {
            Contender *ct = &b.contenders[k];
            if (ct->peer_sampler < 0)
                continue;
            if (!b.peer_up) {
                ct->skipped = 1;
                snprintf(ct->reason, sizeof ct->reason, "%s", b.peer_note);
            } else if (strcmp(b.peer.sampler_note[ct->peer_sampler], "ok") != 0) {
                ct->skipped = 1;
                snprintf(ct->reason, sizeof ct->reason, "%s",
                         b.peer.sampler_note[ct->peer_sampler]);
            }
        }
    }

    printf("optimizer benchmark: %zu cells x %d seeds x %d trials; eval %s; OpenBLAS core %s; "
           "optuna %s\n",
           b.n_cells, b.n_seeds, b.trials, b.eval_sim_trial ? "tunedeck sim-trial" : "in-process",
           openblas_get_corename(), b.peer_up ? b.peer.version : b.peer_note);
    double t0 = clock_now_s();
    for (size_t i = 0; i < b.n_cells; i++) {
        Cell *cell = &b.cells[i];
        cell->runs = calloc(b.n_contenders * (size_t)b.n_seeds, sizeof *cell->runs);
        cell->summary = calloc(b.n_contenders, sizeof *cell->summary);
        for (size_t k = 0; k < b.n_contenders; k++) {
            for (int s = 0; s < b.n_seeds; s++) {
                Run *r = &cell->runs[k * (size_t)b.n_seeds + (size_t)s];
                if (b.contenders[k].skipped) {
                    run_alloc(r, b.trials);
                    snprintf(r->error, sizeof r->error, "%s", b.contenders[k].reason);
                    continue;
                }
                run_session(&b, cell, &b.contenders[k], (uint64_t)(s + 1), r);
            }
            summarize(&b, cell, k);
        }
        print_cell(&b, cell);
        fflush(stdout);
    }
    double wall = clock_now_s() - t0;
    if (ref != (size_t)-1) {
        if (strcmp(b.contenders[ref].name, "bespoke") != 0)
            printf("\n(no `bespoke` optimizer registered in this build: ratios are against %s)",
                   b.contenders[ref].name);
        print_comparisons(&b, ref);
        print_targets(&b, ref);
    }
    printf("\nwall time %.1f s\n", wall);
    int rc = 0;
    if (out) {
        cJSON *root = bench_json(&b, ref, wall);
        char *text = cJSON_Print(root);
        FILE *f = fopen(out, "w");
        if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
            fprintf(stderr, "optimizer: --out %s: %s\n", out, strerror(errno));
            rc = 1;
        }
        if (f && fclose(f) != 0 && !rc) {
            fprintf(stderr, "optimizer: --out %s: %s\n", out, strerror(errno));
            rc = 1;
        }
        free(text);
        cJSON_Delete(root);
    }
    if (b.peer_up)
        peer_stop(&b.peer);
    for (size_t i = 0; i < b.n_cells; i++) {
        for (size_t k = 0; b.cells[i].runs && k < b.n_contenders * (size_t)b.n_seeds; k++)
            run_free(&b.cells[i].runs[k]);
        free(b.cells[i].runs);
        free(b.cells[i].summary);
        simcluster_free(b.cells[i].sim);
    }
    return rc;
}
