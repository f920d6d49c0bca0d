/* bench/optimizer's shared types: contenders (registered optimizers and the Python peers),
 * cells (simulated clusters), runs (one session of one contender on one cell and seed) and
 * what is summarized from them. One file per idea: pypeer.c (the Python bridge, shared with
 * bench/optimizer_allreduce), peer.c (the peers as contenders), session.c
 * (running sessions), cost.c (what tuning cost), report.c (tables and JSON). */
#ifndef TUNEDECK_BENCH_OPTBENCH_H
#define TUNEDECK_BENCH_OPTBENCH_H

#include <cJSON.h>
#include <sys/types.h>

#include "bench/optbench/pypeer.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"

enum { MAX_CONTENDERS = 32, MAX_CELLS = 32, MAX_SEEDS = 100 };
enum { N_CHECKPOINTS = 4 };
extern const int CHECKPOINTS[N_CHECKPOINTS];
#define WITHIN 1.10      /* "within 10% of best-known" */
#define COST_WITHIN 1.05 /* issue 14: tuning cost until within 5% of best-known */

/* ---- the generic peers: a Python process (bench/generic_peer.py) answering ask/tell ---- */

enum { N_PEER_SAMPLERS = 4 };
extern const char *const PEER_SAMPLERS[N_PEER_SAMPLERS];
extern const char *const PEER_NAMES[N_PEER_SAMPLERS];

typedef struct {
    PyPeer proc;
    char version[32];
    char sampler_note[N_PEER_SAMPLERS][256]; /* "ok" or why the sampler is missing */
} Peer;

/* Starts the peer and reads which samplers it offers; stop it with pypeer_stop(&p->proc). */
int peer_start(Peer *p, const char *python, const char *script, Error *err);

typedef struct {
    char name[64];
    int peer_sampler; /* -1: a registered optimizer; else index into PEER_SAMPLERS */
    int no_prune;     /* "NAME-no-prune": the registered optimizer without pruning */
    char optimizer[64]; /* the registered optimizer's name */
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
    double *cost_s;   /* cumulative measured trial time: iterations run x their time */
    int failed, pruned;
} Run;

typedef struct {
    double ratio_at[N_CHECKPOINTS];
    double trials_to_within; /* median; > trials means most seeds never got there */
    int censored;            /* seeds that never got within */
    double suggest_ms_median, suggest_ms_max;
    double last_suggest_ms; /* median over seeds of the last trial's suggest(): the most data */
    int runs;
    /* cost.c, in units of the ideal cost of as many trials (every one at best-known) */
    double cost_to_within;   /* median over seeds until best <= COST_WITHIN x best-known */
    int cost_never;          /* seeds that never got there */
    double cost_budget;      /* median over seeds of the whole budget */
    double cost_to_own_best; /* median: until the run first reached its final best */
    double cost_to_own_best_s;
    double pruned_median;    /* trials pruned per session */
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
    int peer_pruning; /* the current peer study has a pruner: report every iteration */
    char tunedeck[1024];
    const char *ref;
    Peer peer;
    int peer_up;
    char peer_note[300];
} Bench;

/* peer.c */
int peer_new_study(Bench *b, const Contender *k, const Cell *cell, uint64_t seed, Error *err);
Schedule *peer_ask(Bench *b, const Cell *cell, Error *err);
/* Tells the study the trial's value (pruned: the study's pruner stopped it). */
int peer_tell(Bench *b, double value, int pruned, Error *err);
/* One intermediate value; returns 1 when the study's pruner says stop, -1 on error. */
int peer_report(Bench *b, int step, double value, Error *err);

/* session.c */
void run_alloc(Run *r, int trials);
void run_free(Run *r);
void run_session(Bench *b, Cell *cell, const Contender *k, uint64_t seed, Run *r);
void summarize(const Bench *b, Cell *cell, size_t ki);

/* cost.c */
void cost_summarize(const Bench *b, Cell *cell, size_t ki);
void print_costs(const Bench *b, size_t ref);
cJSON *cost_json(const Bench *b, size_t ref);

/* report.c */
size_t find_contender(const Bench *b, const char *name);
void print_cell(const Bench *b, const Cell *cell);
void print_comparisons(const Bench *b, size_t ref);
void print_targets(const Bench *b, size_t ref);
cJSON *num_or_null(double v);
cJSON *array_of(const double *v, int n);
cJSON *bench_json(const Bench *b, size_t ref, double wall_s);

#endif
