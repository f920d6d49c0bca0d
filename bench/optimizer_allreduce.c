/* bench/optimizer_allreduce: allreduce jobs on the simulator's mixed-GPU settings (M1-M3).
 * bespoke (its allreduce form) against the uniform split (DDP's default), gp, random and
 * Optuna's TPE (bench/generic_peer.py under /usr/bin/python3), all in one run with the same
 * seeds; best-so-far as a ratio to the simulator's best-known noiseless time, and the issue's
 * targets: within 1.10x of best-known by trial 10, and at trial 30 at least 1.5x better than
 * every generic peer. */
#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/args/benchargs.h"
#include "bench/optbench/pypeer.h"
#include "core/base/clock.h"
#include "core/base/median.h"
#include "core/base/jsonfile.h"
#include "core/opt/flatsched.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

enum { MAX_CELLS = 16, MAX_SEEDS = 20, MAX_TRIALS = 200, N_CONTENDERS = 5 };
#define DEFAULT_CELLS "M1:resnet50,M2:resnet50,M3:googlenet:4096"
#define QUICK_CELLS "M1:resnet50,M2:resnet50"
#define ALL_CELLS                                                                                  \
    "M1:googlenet,M1:alexnet,M1:speechnet,M1:resnet50,M2:googlenet,M2:alexnet,M2:speechnet,"       \
    "M2:resnet50,M3:googlenet,M3:alexnet,M3:speechnet,M3:resnet50"
static const double WITHIN = 1.10, BETTER = 1.5;

/* name shown, optimizer registered under (NULL: the Optuna peer), generic? */
static const struct {
    const char *name, *optimizer;
    int generic;
} CONTENDERS[N_CONTENDERS] = {
    {"bespoke", "bespoke", 0}, {"uniform-split", "uniform-devices", 0},
    {"gp", "gp", 1},           {"random", "random", 1},
    {"optuna-tpe", NULL, 1},
};

/* ---- the Optuna peer (bench/optbench/pypeer.h) ---- */

typedef struct {
    PyPeer proc;
    char version[32];
} Peer;

static int peer_start(Peer *p, const char *python, const char *script, Error *err)
{
    memset(p, 0, sizeof *p);
    cJSON *hello = pypeer_start(&p->proc, python, script, err);
    if (!hello)
        return -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hello, "optuna");
    const cJSON *tpe = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(hello, "samplers"), "tpe");
    int ok = cJSON_IsString(v) && cJSON_IsString(tpe) && strcmp(tpe->valuestring, "ok") == 0;
    snprintf(p->version, sizeof p->version, "%s", cJSON_IsString(v) ? v->valuestring : "?");
    cJSON_Delete(hello);
    if (!ok) {
        pypeer_stop(&p->proc);
        return error_set(err, "optuna peer: Optuna's TPE is not importable");
    }
    return 0;
}

/* ---- runs ---- */

typedef struct {
    char spec[64];
    SimCluster *sim;
    double best_known_s;
    /* The best corner of the generic peers' box: every device of a subset of machines, the
     * batch split evenly (memory caps repaired as for any point), as a ratio to best-known.
     * A peer that only tries which machines take part reaches it, so no peer can be held
     * further than this from best-known by the search space alone. */
    double corner_ratio;
    char corner[128];
    /* ratio[contender][seed][trial]: best noiseless time so far / best-known */
    double ratio[N_CONTENDERS][MAX_SEEDS][MAX_TRIALS];
    double suggest_ms[N_CONTENDERS][MAX_SEEDS * MAX_TRIALS];
    size_t n_suggest[N_CONTENDERS];
    char error[N_CONTENDERS][256];
} Cell;

typedef struct {
    Cell *cells;
    size_t n_cells;
    int seeds, trials;
    Peer peer;
    int peer_up;
    char peer_note[300];
} Bench;

static void run_session(Bench *b, Cell *cell, int k, int seed)
{
    Error err;
    const Cluster *c = simcluster_cluster(cell->sim);
    Optimizer *opt = NULL;
    double best = INFINITY, worst_ok = 0;
    double *ratio = cell->ratio[k][seed - 1];
    for (int t = 0; t < b->trials; t++)
        ratio[t] = INFINITY;
    if (CONTENDERS[k].optimizer) {
        opt = optimizer_new(CONTENDERS[k].optimizer, c, simcluster_job(cell->sim), (uint64_t)seed,
                            &err);
        if (!opt) {
            snprintf(cell->error[k], sizeof cell->error[k], "%s", err.msg);
            return;
        }
    } else {
        char req[200];
        snprintf(req, sizeof req,
                 "{\"op\":\"new\",\"sampler\":\"tpe\",\"seed\":%d,\"roles\":%zu,\"weights\":%zu}\n",
                 seed, c->n_machines, c->n_devices);
        cJSON *a = b->peer_up ? pypeer_call(&b->peer.proc, req, &err) : NULL;
        if (!a) {
            snprintf(cell->error[k], sizeof cell->error[k], "%s",
                     b->peer_up ? err.msg : b->peer_note);
            return;
        }
        cJSON_Delete(a);
    }
    for (int t = 1; t <= b->trials; t++) {
        double t0 = clock_now_s();
        Schedule *s = NULL;
        int undecodable = 0;
        if (opt) {
            Suggestion sg;
            if (optimizer_suggest(opt, &sg, &err) == 0) {
                s = sg.schedule;
                sg.schedule = NULL;
            }
            suggestion_clear(&sg);
        } else {
            s = pypeer_ask(&b->peer.proc, simcluster_cluster(cell->sim),
                           simcluster_job(cell->sim), &undecodable, &err);
        }
        cell->suggest_ms[k][cell->n_suggest[k]++] = (clock_now_s() - t0) * 1000.0;
        if (undecodable) {
            /* A point whose workers cannot hold the batch is a failed trial, not the end. */
            char req[128];
            snprintf(req, sizeof req, "{\"op\":\"tell\",\"value\":%.17g}\n",
                     worst_ok > 0 ? 2 * worst_ok : 100.0);
            cJSON_Delete(pypeer_call(&b->peer.proc, req, &err));
            ratio[t - 1] = best / cell->best_known_s;
            continue;
        }
        if (!s) {
            snprintf(cell->error[k], sizeof cell->error[k], "trial %d: %s", t, err.msg);
            for (int u = t; u <= b->trials; u++)
                ratio[u - 1] = best / cell->best_known_s;
            break;
        }
        s->trial = t;
        LaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.timeout_s = 600;
        cfg.seed = (uint64_t)seed;
        cfg.sim = cell->sim;
        Observation *o = launcher_run_blocking(launcher_find("sim"), &cfg, s, &err);
        if (!o) {
            o = observation_new(s);
            o->status = TRIAL_FAILED;
        }
        int ok = o->status == TRIAL_OK;
        /* Judged by the true (noiseless) time of what was tried: luck earns nothing. */
        if (ok)
            best = fmin(best, simcluster_noiseless_time(cell->sim, s));
        if (ok && o->time_s > worst_ok)
            worst_ok = o->time_s;
        ratio[t - 1] = best / cell->best_known_s;
        if (opt) {
            optimizer_observe(opt, o);
        } else {
            char req[128];
            snprintf(req, sizeof req, "{\"op\":\"tell\",\"value\":%.17g}\n",
                     ok             ? o->time_s
                     : worst_ok > 0 ? 2 * worst_ok
                                    : 100.0);
            cJSON_Delete(pypeer_call(&b->peer.proc, req, &err));
        }
        observation_free(o);
        schedule_free(s);
    }
    optimizer_free(opt);
}

/* Tries every non-empty subset of machines (at most 2^16) as an even split. */
static void find_corner(Cell *cell)
{
    const Cluster *c = simcluster_cluster(cell->sim);
    size_t M = c->n_machines;
    cell->corner_ratio = INFINITY;
    snprintf(cell->corner, sizeof cell->corner, "-");
    Schedule *s = schedule_new(c, simcluster_job(cell->sim));
    int *roles = calloc(M ? M : 1, sizeof *roles);
    double *weights = malloc((c->n_devices ? c->n_devices : 1) * sizeof *weights);
    if (!s || !roles || !weights || M > 16) {
        schedule_free(s), free(roles), free(weights);
        return;
    }
    for (size_t d = 0; d < c->n_devices; d++)
        weights[d] = 1.0;
    for (unsigned long set = 1; set < (1ul << M); set++) {
        for (size_t m = 0; m < M; m++)
            roles[m] = set >> m & 1 ? FLAT_WORKER : FLAT_NONE;
        Error err;
        if (flatsched_decode(roles, weights, s, &err) < 0)
            continue;
        double r = simcluster_noiseless_time(cell->sim, s) / cell->best_known_s;
        if (!(r < cell->corner_ratio))
            continue;
        cell->corner_ratio = r;
        size_t used = 0;
        for (size_t m = 0; m < M && used + 2 < sizeof cell->corner; m++)
            if (set >> m & 1)
                used += (size_t)snprintf(cell->corner + used, sizeof cell->corner - used,
                                         "%s%s", used ? "+" : "", c->machines[m].name);
    }
    schedule_free(s), free(roles), free(weights);
}

/* Median over seeds of the ratio at trial `at` (1-based; clipped to the run's length). */
static double ratio_at(const Bench *b, const Cell *cell, int k, int at)
{
    double v[MAX_SEEDS];
    int t = at < b->trials ? at : b->trials;
    for (int s = 0; s < b->seeds; s++)
        v[s] = cell->ratio[k][s][t - 1];
    return median_sorting(v, (size_t)b->seeds);
}

/* Median over seeds of the first trial within WITHIN; trials + 1 when never. */
static double trials_to_within(const Bench *b, const Cell *cell, int k)
{
    double v[MAX_SEEDS];
    for (int s = 0; s < b->seeds; s++) {
        v[s] = b->trials + 1;
        for (int t = 0; t < b->trials; t++)
            if (cell->ratio[k][s][t] <= WITHIN) {
                v[s] = t + 1;
                break;
            }
    }
    return median_sorting(v, (size_t)b->seeds);
}

static void print_cell(const Bench *b, Cell *cell)
{
    static const int AT[] = {1, 5, 10, 20, 30};
    printf("\n%s  (best known %.4f s; median over %d seeds of best/best-known;\n"
           "  best even split over a subset of machines %.3fx: %s)\n",
           cell->spec, cell->best_known_s, b->seeds, cell->corner_ratio, cell->corner);
    printf("  %-14s", "optimizer");
    for (size_t i = 0; i < sizeof AT / sizeof *AT; i++)
        if (AT[i] <= b->trials)
            printf("  @%-5d", AT[i]);
    printf("  to 1.10x  suggest ms\n");
    for (int k = 0; k < N_CONTENDERS; k++) {
        printf("  %-14s", CONTENDERS[k].name);
        if (cell->error[k][0] && !cell->n_suggest[k]) {
            printf("  not run: %s\n", cell->error[k]);
            continue;
        }
        for (size_t i = 0; i < sizeof AT / sizeof *AT; i++)
            if (AT[i] <= b->trials)
                printf("  %6.3f", ratio_at(b, cell, k, AT[i]));
        double tw = trials_to_within(b, cell, k);
        char tws[16];
        if (tw > b->trials)
            snprintf(tws, sizeof tws, ">%d", b->trials);
        else
            snprintf(tws, sizeof tws, "%.0f", tw);
        double ms[MAX_SEEDS * MAX_TRIALS];
        memcpy(ms, cell->suggest_ms[k], cell->n_suggest[k] * sizeof *ms);
        printf("  %8s  %9.1f%s%s\n", tws, median_sorting(ms, cell->n_suggest[k]),
               cell->error[k][0] ? "  (stopped: " : "", cell->error[k][0] ? cell->error[k] : "");
    }
}

/* The targets per cell, and what bounds the second: a generic peer that finds the
 * best even split over a subset of machines (the corner) is that far from best-known. */
static void print_targets(const Bench *b, cJSON *json)
{
    int at10 = 0, ahead = 0, better = 0, open = 0, better_open = 0;
    int at = b->trials < 30 ? b->trials : 30;
    printf("\ntargets (bespoke, median over seeds):\n");
    cJSON *cells = cJSON_AddArrayToObject(json, "cells");
    for (size_t i = 0; i < b->n_cells; i++) {
        Cell *cell = &b->cells[i];
        double r10 = ratio_at(b, cell, 0, 10), rb = ratio_at(b, cell, 0, at);
        double worst_gap = INFINITY, closest_at = INFINITY;
        const char *closest = "-";
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddStringToObject(cj, "cell", cell->spec);
        cJSON_AddNumberToObject(cj, "best_known_s", cell->best_known_s);
        cJSON_AddNumberToObject(cj, "corner_ratio", cell->corner_ratio);
        cJSON_AddStringToObject(cj, "corner", cell->corner);
        for (int k = 0; k < N_CONTENDERS; k++) {
            if (!cell->n_suggest[k])
                continue;
            char key[64];
            snprintf(key, sizeof key, "%s_at10", CONTENDERS[k].name);
            cJSON_AddNumberToObject(cj, key, ratio_at(b, cell, k, 10));
            snprintf(key, sizeof key, "%s_at%d", CONTENDERS[k].name, at);
            if (at != 10)
                cJSON_AddNumberToObject(cj, key, ratio_at(b, cell, k, at));
            if (!CONTENDERS[k].generic)
                continue;
            double gap = ratio_at(b, cell, k, at) / rb;
            if (gap < worst_gap) {
                worst_gap = gap;
                closest = CONTENDERS[k].name;
                closest_at = ratio_at(b, cell, k, at);
            }
        }
        cJSON_AddItemToArray(cells, cj);
        int reachable = cell->corner_ratio >= BETTER * rb;
        at10 += r10 <= WITHIN;
        ahead += r10 < closest_at;
        better += worst_gap >= BETTER;
        open += reachable;
        better_open += reachable && worst_gap >= BETTER;
        printf("  %-20s @10 %.3f (%s 1.10x)   @%d the closest generic peer (%s) is %.2fx "
               "bespoke (%s %.1fx; the corner %.2fx)\n",
               cell->spec, r10, r10 <= WITHIN ? "within" : "NOT within", at, closest, worst_gap,
               worst_gap >= BETTER ? "meets" : "MISSES", BETTER, cell->corner_ratio);
    }
    printf("summary: within 1.10x by trial 10 in %d/%zu cells; bespoke@10 ahead of every generic "
           "peer@%d in %d/%zu;\n"
           "         >= 1.5x better than every generic peer at trial %d in %d/%zu cells; "
           "the best corner is >= 1.5x from best-known in %d/%zu (met in %d of those)\n",
           at10, b->n_cells, at, ahead, b->n_cells, at, better, b->n_cells, open, b->n_cells,
           better_open);
    cJSON_AddNumberToObject(json, "cells_within_at10", at10);
    cJSON_AddNumberToObject(json, "cells_bespoke10_ahead_of_generic", ahead);
    cJSON_AddNumberToObject(json, "cells_better_than_generic", better);
    cJSON_AddNumberToObject(json, "cells_corner_far", open);
    cJSON_AddNumberToObject(json, "cells_corner_far_better", better_open);
}

static void free_cells(Bench *b)
{
    for (size_t i = 0; i < b->n_cells; i++)
        simcluster_free(b->cells[i].sim);
    free(b->cells);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: optimizer_allreduce [--quick] [--cells LIST] [--seeds N] [--trials N]\n"
            "                           [--python PATH] [--out FILE]\n"
            "  --quick        %s, 2 seeds, 12 trials (under half a minute)\n"
            "  --cells LIST   comma-separated SETTING:NETWORK[:BATCH] allreduce cells, or\n"
            "                 'all' for M1, M2, M3 x the four networks at their default batch\n"
            "                 (default %s)\n"
            "  --seeds N      seeds 1..N (default 3)     --trials N  per session (default 30)\n"
            "  --python PATH  the Python with Debian's optuna (default $TUNEDECK_PYTHON,\n"
            "                 else /usr/bin/python3)\n"
            "  --out FILE     also write the results as JSON\n",
            QUICK_CELLS, DEFAULT_CELLS);
}

int main(int argc, char **argv)
{
    const char *cells = DEFAULT_CELLS, *out_path = NULL;
    const char *python = getenv("TUNEDECK_PYTHON") ? getenv("TUNEDECK_PYTHON") : "/usr/bin/python3";
    Bench b = {.seeds = 3, .trials = 30};
    static const struct option OPTS[] = {
        {"quick", no_argument, 0, 'q'},        {"cells", required_argument, 0, 'c'},
        {"seeds", required_argument, 0, 's'},  {"trials", required_argument, 0, 't'},
        {"python", required_argument, 0, 'p'}, {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", OPTS, NULL)) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'q':
            cells = QUICK_CELLS;
            b.seeds = 2;
            b.trials = 12;
            break;
        case 'c':
            cells = strcmp(optarg, "all") == 0 ? ALL_CELLS : optarg;
            break;
        case 's':
            b.seeds = (int)strtol(optarg, &end, 10);
            if (*end || b.seeds < 1 || b.seeds > MAX_SEEDS) {
                fprintf(stderr, "optimizer_allreduce: --seeds: expected 1..%d, found '%s'\n",
                        MAX_SEEDS, optarg);
                return 2;
            }
            break;
        case 't':
            b.trials = (int)strtol(optarg, &end, 10);
            if (*end || b.trials < 10 || b.trials > MAX_TRIALS) {
                fprintf(stderr, "optimizer_allreduce: --trials: expected 10..%d, found '%s'\n",
                        MAX_TRIALS, optarg);
                return 2;
            }
            break;
        case 'p':
            python = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (benchargs_no_operands("optimizer_allreduce", argc, argv, optind, "") < 0 ||
        benchargs_out_writable("optimizer_allreduce", out_path) < 0)
        return 2;
    b.cells = calloc(MAX_CELLS, sizeof *b.cells);
    char list[512];
    snprintf(list, sizeof list, "%s", cells);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        Error err;
        if (b.n_cells == MAX_CELLS) {
            fprintf(stderr, "optimizer_allreduce: at most %d cells\n", MAX_CELLS);
            return free_cells(&b), 2;
        }
        Cell *cell = &b.cells[b.n_cells];
        cell->sim = simcluster_new(tok, &err);
        if (!cell->sim) {
            fprintf(stderr, "optimizer_allreduce: --cells: %s\n", err.msg);
            return free_cells(&b), 2;
        }
        if (simcluster_job(cell->sim)->sync != JOB_SYNC_ALLREDUCE) {
            fprintf(stderr,
                    "optimizer_allreduce: --cells '%s': not an allreduce setting "
                    "(expected M1, M2 or M3)\n",
                    tok);
            simcluster_free(cell->sim);
            return free_cells(&b), 2;
        }
        snprintf(cell->spec, sizeof cell->spec, "%s", tok);
        cell->best_known_s = simcluster_best_known(cell->sim, NULL);
        find_corner(cell);
        b.n_cells++;
    }
    Error err;
    b.peer_up =
        peer_start(&b.peer, python, TUNEDECK_SOURCE_DIR "/bench/generic_peer.py", &err) == 0;
    if (!b.peer_up)
        snprintf(b.peer_note, sizeof b.peer_note, "%s", err.msg);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    printf("bench optimizer_allreduce: %zu cells, %d seeds, %d trials; Optuna %s\n", b.n_cells,
           b.seeds, b.trials, b.peer_up ? b.peer.version : b.peer_note);
    double t0 = clock_now_s();
    for (size_t i = 0; i < b.n_cells; i++) {
        for (int k = 0; k < N_CONTENDERS; k++)
            for (int s = 1; s <= b.seeds; s++)
                run_session(&b, &b.cells[i], k, s);
        print_cell(&b, &b.cells[i]);
        fflush(stdout);
    }
    cJSON *json = cJSON_CreateObject();
    cJSON_AddNumberToObject(json, "seeds", b.seeds);
    cJSON_AddStringToObject(json, "optuna", b.peer_up ? b.peer.version : b.peer_note);
    cJSON_AddNumberToObject(json, "trials", b.trials);
    print_targets(&b, json);
    double wall = clock_now_s() - t0;
    printf("wall %.1f s\n", wall);
    cJSON_AddNumberToObject(json, "wall_s", wall);
    int rc = out_path && jsonfile_write(out_path, json, &err) < 0;
    if (rc)
        fprintf(stderr, "optimizer_allreduce: --out %s\n", err.msg);
    cJSON_Delete(json);
    pypeer_stop(&b.peer.proc);
    free_cells(&b);
    return rc;
}
