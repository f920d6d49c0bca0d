/* Pruning a trial from its live iteration stream (issue 14): a pure decision from the
 * iterations seen so far, the model's prediction and the best measured schedule. */
#ifndef TUNEDECK_PRUNE_H
#define TUNEDECK_PRUNE_H

#include <stddef.h>

#include "core/model/observation.h"

/* A trial whose fastest iteration is slower than this many times the best measured trial
 * is stopped: 2× leaves room for warm-up and noise, and a schedule twice as slow as one
 * already run cannot become the best. */
#define PRUNE_DEFAULT_K 2.0
/* Iterations needed before a prune: the first one alone carries start-up costs. */
#define PRUNE_MIN_ITERATIONS 2
/* During warm-up the threshold is k x this x best: warm-up iterations run slower by an amount
 * not known in advance; 2.5 covers the simulator's (up to 1.8x) and a real worker's (2.3x). */
#define PRUNE_WARMUP_ALLOWANCE 2.5
/* A trial run before anything was measured (the first trial: bespoke's design trial) has no
 * best to be compared with; it runs as a probe of this many iterations: the first carries
 * start-up costs and warm-up slows the next ones; 5 kept bespoke's convergence close to a full
 * design trial's where 3 did not (docs/optimizer.md). Only on trials of at least twice as many
 * iterations: a shorter probe saves too little. */
#define PRUNE_PROBE_ITERATIONS 5

typedef struct {
    double k;           /* threshold, a multiple of the best measured time; <= 1 never prunes */
    int min_iterations; /* evidence needed when the model does not already agree */
    double warmup_allowance; /* during warm-up the threshold is k x this x best */
    int probe_iterations;    /* a probe stops after this many; <= 0: probes run to the end */
} PrunePolicy;

typedef struct {
    const double *iter_s;   /* time of each iteration seen, in order; < 0 or NaN: missing */
    size_t n;
    int warmup;             /* the trial's warm-up iterations */
    int iterations;         /* the iterations the trial will run in all */
    double predicted_p10_s; /* the model's lower end for this schedule; < 0: no prediction */
    double best_s;          /* the best measured trial so far; < 0 or not finite: none */
    int probe;              /* nothing measured yet (no trial ok or pruned) and a trial
                             * follows: a probe */
} PruneInput;

typedef struct {
    int prune;
    int seen;           /* iterations with a time */
    double fastest_s;   /* the lower end of this trial's time: its fastest iteration (after
                         * warm-up, once there are iterations after it) */
    double threshold_s; /* k × best, × the allowance while in warm-up */
    char reason[200];   /* why it was pruned; empty otherwise */
} PruneDecision;

PrunePolicy prune_policy_default(void);
/* Fills *out; returns out->prune. */
int prune_decide(const PrunePolicy *p, const PruneInput *in, PruneDecision *out);

#endif

/* ---- one running trial watched through its iteration stream ---- */

typedef struct {
    PrunePolicy policy;
    double *iter_s; /* by iteration number, the slowest host's view; < 0 not seen */
    size_t n;
    int probe;        /* this trial is a probe (nothing measured before it) */
    char reason[200]; /* set once the trial was asked to stop */
} PruneWatch;

void prune_watch_init(PruneWatch *w, PrunePolicy policy);
void prune_watch_clear(PruneWatch *w);
/* A new trial begins; probe: nothing was measured before it (no trial ok or pruned) and
 * another trial follows it. */
void prune_watch_reset(PruneWatch *w, int probe);
/* One iteration event (hosts of one iteration each report it). p10_s: the model's lower end
 * for the schedule (< 0 none); best_s: the best measured trial (< 0 none). Returns 1 when the
 * trial should stop. */
int prune_watch_iteration(PruneWatch *w, const Schedule *s, int iter, double time_s,
                          double p10_s, double best_s);
/* The mean time of the iterations seen; -1 when none. */
double prune_watch_mean(const PruneWatch *w);
/* The outcome of a trial asked to stop (it comes back cancelled) becomes TRIAL_PRUNED with the
 * reason (what the launcher said after its "cancelled" kept after it), and the mean of its
 * iterations as its time: a few-sample observation. */
void prune_watch_finish(const PruneWatch *w, Observation *o);
