/* bench/optimizer's tables and JSON: per-cell quality curves, the ratio lines against the
 * reference optimizer, the issue-3 targets. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/optbench/optbench.h"

/* From OpenBLAS; not through cblas.h, whose declarations clash with GSL's (DESIGN §7). */
extern char *openblas_get_corename(void);

const int CHECKPOINTS[N_CHECKPOINTS] = {5, 10, 20, 30};

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

void print_cell(const Bench *b, const Cell *cell)
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

size_t find_contender(const Bench *b, const char *name)
{
    for (size_t i = 0; i < b->n_contenders; i++)
        if (strcmp(b->contenders[i].name, name) == 0)
            return i;
    return (size_t)-1;
}

void print_comparisons(const Bench *b, size_t ref)
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

void print_targets(const Bench *b, size_t ref)
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

cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *array_of(const double *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, num_or_null(v[i]));
    return a;
}

cJSON *bench_json(const Bench *b, size_t ref, double wall_s)
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
                    cJSON_AddItemToObject(run, "cost_s", array_of(r->cost_s, b->trials));
                    cJSON_AddNumberToObject(run, "pruned_trials", r->pruned);
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
    cJSON_AddItemToObject(root, "cost", cost_json(b, ref));
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