/* The prune rule. An iteration can be slowed by warm-up (allocation, caches, connections, the
 * first communication) but not sped up, so the fastest iteration seen is a lower end of the
 * time this schedule would settle at. When that lower end is above k x the best measured
 * trial, the rest of the trial cannot change the outcome of the search and is not run.
 * Warm-up iterations are slower by an amount no one knows in advance (a real worker's first
 * iterations ran 2.3x its steady time in tests/integration/remote.sh), so during warm-up the
 * threshold carries an allowance on top of k; after it, only post-warm-up iterations count. */
#include "core/opt/prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PrunePolicy prune_policy_default(void)
{
    return (PrunePolicy){.k = PRUNE_DEFAULT_K,
                         .min_iterations = PRUNE_MIN_ITERATIONS,
                         .warmup_allowance = PRUNE_WARMUP_ALLOWANCE,
                         .probe_iterations = PRUNE_PROBE_ITERATIONS};
}

int prune_decide(const PrunePolicy *p, const PruneInput *in, PruneDecision *out)
{
    memset(out, 0, sizeof *out);
    out->fastest_s = INFINITY;
    /* The first `warmup` iterations seen are the warm-up, whatever their numbers. */
    double fastest_warm = INFINITY, fastest_after = INFINITY;
    int seen_after = 0;
    for (size_t i = 0; i < in->n; i++) {
        double v = in->iter_s[i];
        if (!(v >= 0) || !isfinite(v))
            continue;
        if (out->seen++ < in->warmup) {
            fastest_warm = fmin(fastest_warm, v);
        } else {
            fastest_after = fmin(fastest_after, v);
            seen_after++;
        }
    }
    out->fastest_s = fmin(fastest_warm, fastest_after);
    /* Nothing is saved by stopping a trial that has run all its iterations. */
    if (in->iterations > 0 && out->seen >= in->iterations)
        return 0;
    /* A probe: with no measured trial there is nothing to compare with, and the first trial
     * (bespoke's design, every device loaded) is the slowest of a session; a few iterations
     * carry what the model needs from it (every device class, aggregation, communication). */
    /* A probe that would run more than half the trial saves too little for a first
     * observation of a few iterations instead of a whole one. */
    int probe_pays = in->iterations <= 0 || in->iterations >= 2 * p->probe_iterations;
    if (in->probe && probe_pays && p->k > 1 && p->probe_iterations > 0 &&
        out->seen >= p->probe_iterations) {
        out->prune = 1;
        snprintf(out->reason, sizeof out->reason,
                 "probe: stopped after %d of %d iterations (nothing measured yet to compare "
                 "with; kept as a %d-iteration measurement)",
                 out->seen, in->iterations, out->seen);
        return 1;
    }
    if (!(p->k > 1) || !(in->best_s > 0) || !isfinite(in->best_s) || out->seen == 0)
        return 0;
    double steady = p->k * in->best_s;
    /* When the model also expects the schedule to be slow (an operator's override, or a
     * suggestion made for its uncertainty), one iteration is evidence enough. */
    int model_agrees = in->predicted_p10_s > steady;
    int need = model_agrees ? 1 : (p->min_iterations > 1 ? p->min_iterations : 1);
    int in_warmup = seen_after == 0;
    double allowance = p->warmup_allowance > 1 ? p->warmup_allowance : 1;
    out->threshold_s = in_warmup ? steady * allowance : steady;
    /* After warm-up the steady iterations alone are the evidence. */
    double lower = in_warmup ? fastest_warm : fastest_after;
    int evidence = in_warmup ? out->seen : seen_after;
    if (evidence < need || !(lower > out->threshold_s))
        return 0;
    out->fastest_s = lower;
    out->prune = 1;
    if (in_warmup)
        snprintf(out->reason, sizeof out->reason,
                 "pruned after %d of %d iterations (in warm-up): fastest %.3g s > %.3g x best "
                 "%.3g s (%g x, warm-up allowance %g)%s",
                 out->seen, in->iterations, lower, p->k * allowance, in->best_s, p->k,
                 allowance, model_agrees ? "; the model agreed" : "");
    else
        snprintf(out->reason, sizeof out->reason,
                 "pruned after %d of %d iterations: fastest after warm-up %.3g s > %.3g x best "
                 "%.3g s%s",
                 out->seen, in->iterations, lower, p->k, in->best_s,
                 model_agrees ? "; the model agreed" : "");
    return 1;
}

void prune_watch_init(PruneWatch *w, PrunePolicy policy)
{
    memset(w, 0, sizeof *w);
    w->policy = policy;
}

void prune_watch_clear(PruneWatch *w)
{
    free(w->iter_s);
    w->iter_s = NULL;
    w->n = 0;
}

void prune_watch_reset(PruneWatch *w, int probe)
{
    w->n = 0;
    w->probe = probe;
    w->reason[0] = 0;
}

int prune_watch_iteration(PruneWatch *w, const Schedule *s, int iter, double time_s,
                          double p10_s, double best_s)
{
    if (iter < 0 || iter > 1000000)
        return 0;
    if ((size_t)iter >= w->n) {
        size_t n = (size_t)iter + 1;
        double *grown = realloc(w->iter_s, n * sizeof *grown);
        if (!grown)
            return 0;
        for (size_t i = w->n; i < n; i++)
            grown[i] = -1;
        w->iter_s = grown;
        w->n = n;
    }
    if (time_s > w->iter_s[iter])
        w->iter_s[iter] = time_s;
    if (w->reason[0])
        return 1;
    PruneInput in = {.iter_s = w->iter_s,
                     .n = w->n,
                     .warmup = s->job.warmup,
                     .iterations = s->job.iterations,
                     .predicted_p10_s = p10_s,
                     .best_s = best_s,
                     .probe = w->probe};
    PruneDecision d;
    if (!prune_decide(&w->policy, &in, &d))
        return 0;
    snprintf(w->reason, sizeof w->reason, "%s", d.reason);
    return 1;
}

double prune_watch_mean(const PruneWatch *w)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->iter_s[i] >= 0) {
            sum += w->iter_s[i];
            n++;
        }
    return n ? sum / n : -1;
}

void prune_watch_finish(const PruneWatch *w, Observation *o)
{
    double mean = prune_watch_mean(w);
    if (!w->reason[0] || o->status != TRIAL_CANCELLED || !(mean > 0))
        return;
    o->status = TRIAL_PRUNED;
    o->time_s = mean;
    /* what a launcher said after its "cancelled" stays: a slurm step its stop may not have
     * reached ("cancelled; its step 57.3 may still run: ...") */
    char note[sizeof o->reason] = "";
    if (strncmp(o->reason, "cancelled; ", 11) == 0)
        snprintf(note, sizeof note, "%s", o->reason + 9);
    snprintf(o->reason, sizeof o->reason, "%s%s", w->reason, note);
}
