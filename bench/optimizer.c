/* bench/optimizer: every registered optimizer and Optuna's generic samplers, run in one
 * process on the same simulated clusters with the same seeds; best-so-far curves as ratios
 * to the simulator's best-known noiseless time, trials to within 10%, suggest() time, and what
 * tuning cost (issue 14). This file reads the arguments and runs the grid; the parts are in
 * bench/optbench/. */
#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/args/benchargs.h"
#include "bench/optbench/optbench.h"
#include "core/base/clock.h"
#include "core/base/jsonfile.h"

/* From OpenBLAS; not through cblas.h, whose declarations clash with GSL's (DESIGN §7). */
extern char *openblas_get_corename(void);

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

/* The default keeps `make bench` near 3 minutes on 2 cores; --cells all is the grid. */
#define DEFAULT_CELLS "A:googlenet,B:googlenet,C:googlenet,C:alexnet,B:speechnet"
#define ALL_CELLS                                                                                  \
    "A:googlenet,A:alexnet,A:speechnet,B:googlenet,B:alexnet,B:speechnet,C:googlenet,"             \
    "C:alexnet,C:speechnet"

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
            "                     then the generic peers optuna-tpe and optuna-cmaes,\n"
            "                     bespoke-no-prune (any NAME-no-prune runs NAME without\n"
            "                     pruning) and optuna-tpe-median (TPE + MedianPruner)\n"
            "                     (bench/generic_peer.py); generic-gp-ei, a numpy\n"
            "                     Spearmint-like GP-EI, runs when named\n"
            "  --ref NAME         the optimizer the ratio lines compare against\n"
            "                     (default bespoke when registered, else random)\n"
            "  --eval MODE        inproc: the sim launcher (default); sim-trial: every trial\n"
            "                     through `tunedeck sim-trial` (same simulator and seeds)\n"
            "  --python PATH      the Python that has Debian's optuna (default\n"
            "                     $TUNEDECK_PYTHON, else /usr/bin/python3)\n"
            "  --peer-script FILE the Python peers' script (default bench/generic_peer.py\n"
            "                     of the source tree)\n"
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
    /* NAME-no-prune: the registered optimizer with every trial run to its end. */
    char base[64];
    snprintf(base, sizeof base, "%s", name);
    size_t len = strlen(base), suffix = strlen("-no-prune");
    if (k->peer_sampler < 0 && len > suffix && strcmp(base + len - suffix, "-no-prune") == 0) {
        base[len - suffix] = 0;
        k->no_prune = 1;
    }
    snprintf(k->optimizer, sizeof k->optimizer, "%s", base);
    if (k->peer_sampler < 0 && !optimizer_find(base)) {
        fprintf(stderr,
                "optimizer: --optimizers: unknown optimizer '%s': expected one of %s, "
                "NAME-no-prune, optuna-tpe, optuna-cmaes, optuna-tpe-median, generic-gp-ei\n",
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
    if (benchargs_no_operands("optimizer", argc, argv, optind, " (try --help)") < 0 ||
        benchargs_out_writable("optimizer", out) < 0)
        return 2;
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
        /* Issue 14: what tuning costs with and without pruning, and Optuna's own pruning. */
        if (optimizer_find("bespoke"))
            add_contender(&b, "bespoke-no-prune");
        add_contender(&b, "optuna-tpe-median");
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
            cost_summarize(&b, cell, k);
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
    print_costs(&b, ref);
    printf("\nwall time %.1f s\n", wall);
    int rc = 0;
    if (out) {
        cJSON *root = bench_json(&b, ref, wall);
        Error err;
        if (jsonfile_write(out, root, &err) < 0) {
            fprintf(stderr, "optimizer: --out %s\n", err.msg);
            rc = 1;
        }
        cJSON_Delete(root);
    }
    if (b.peer_up)
        pypeer_stop(&b.peer.proc);
    for (size_t i = 0; i < b.n_cells; i++) {
        for (size_t k = 0; b.cells[i].runs && k < b.n_contenders * (size_t)b.n_seeds; k++)
            run_free(&b.cells[i].runs[k]);
        free(b.cells[i].runs);
        free(b.cells[i].summary);
        simcluster_free(b.cells[i].sim);
    }
    return rc;
}
