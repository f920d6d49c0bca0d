/* What tuning cost (issue 14): the measured trial time (iterations run x their time) a
 * session spends until its best is within COST_WITHIN of best-known, over the whole budget,
 * and until it first reached its own final best; each as a ratio to the ideal cost of as many
 * trials, every one at the best-known schedule. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/optbench/optbench.h"
#include "core/base/median.h"

static double ideal_s(const Cell *cell, int trials)
{
    return trials * simcluster_job(cell->sim)->iterations * cell->best_known_s;
}

void cost_summarize(const Bench *b, Cell *cell, size_t ki)
{
    Summary *sm = &cell->summary[ki];
    double *within = calloc((size_t)b->n_seeds, sizeof *within);
    double *budget = calloc((size_t)b->n_seeds, sizeof *budget);
    double *own = calloc((size_t)b->n_seeds, sizeof *own);
    double *own_s = calloc((size_t)b->n_seeds, sizeof *own_s);
    double *pruned = calloc((size_t)b->n_seeds, sizeof *pruned);
    size_t n = 0;
    sm->cost_never = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (!r->ran || isnan(r->cost_s[b->trials - 1]))
            continue;
        within[n] = INFINITY;
        for (int t = 0; t < b->trials; t++)
            if (r->ratio[t] <= COST_WITHIN) {
                within[n] = r->cost_s[t] / ideal_s(cell, t + 1);
                break;
            }
        sm->cost_never += isinf(within[n]);
        budget[n] = r->cost_s[b->trials - 1] / ideal_s(cell, b->trials);
        int first = b->trials - 1;
        while (first > 0 && r->ratio[first - 1] == r->ratio[b->trials - 1])
            first--;
        own[n] = r->cost_s[first] / ideal_s(cell, first + 1);
        own_s[n] = r->cost_s[first];
        pruned[n] = r->pruned;
        n++;
    }
    sm->cost_to_within = median_sorting(within, n);
    sm->cost_budget = median_sorting(budget, n);
    sm->cost_to_own_best = median_sorting(own, n);
    sm->cost_to_own_best_s = median_sorting(own_s, n);
    sm->pruned_median = median_sorting(pruned, n);
    free(within);
    free(budget);
    free(own);
    free(own_s);
    free(pruned);
}

/* Seconds of measured trial time until within COST_WITHIN (median over seeds), for the
 * comparison with a peer's cost to its own best. */
static double cost_to_within_s(const Bench *b, const Cell *cell, size_t ki)
{
    double *v = calloc((size_t)b->n_seeds, sizeof *v);
    size_t n = 0;
    for (int s = 0; s < b->n_seeds; s++) {
        const Run *r = &cell->runs[ki * (size_t)b->n_seeds + (size_t)s];
        if (!r->ran || isnan(r->cost_s[b->trials - 1]))
            continue;
        v[n] = INFINITY;
        for (int t = 0; t < b->trials; t++)
            if (r->ratio[t] <= COST_WITHIN) {
                v[n] = r->cost_s[t];
                break;
            }
        n++;
    }
    double m = median_sorting(v, n);
    free(v);
    return m;
}

static void fmt_x(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (isinf(v))
        snprintf(buf, cap, "never");
    else
        snprintf(buf, cap, "%.2fx", v);
}

void print_costs(const Bench *b, size_t ref)
{
    printf("\ntuning cost (measured trial time = iterations run x their time; x the ideal cost "
           "of as many trials at best-known; median over seeds):\n");
    printf("  %-12s %-20s %10s %10s %12s %8s\n", "cell", "optimizer", "to<=1.05", "budget",
           "to own best", "pruned");
    for (size_t i = 0; i < b->n_cells; i++) {
        const Cell *cell = &b->cells[i];
        for (size_t k = 0; k < b->n_contenders; k++) {
            const Summary *sm = &cell->summary[k];
            if (!sm->runs)
                continue;
            char w[32], bud[32], own[32];
            fmt_x(w, sizeof w, sm->cost_to_within);
            fmt_x(bud, sizeof bud, sm->cost_budget);
            fmt_x(own, sizeof own, sm->cost_to_own_best);
            printf("  %-12s %-20s %10s %10s %12s %8g\n", cell->spec, b->contenders[k].name, w,
                   bud, own, sm->pruned_median);
        }
    }
    if (ref == (size_t)-1)
        return;
    const char *r = b->contenders[ref].name;
    int cells = 0, under2 = 0, cheaper3 = 0, compared = 0;
    size_t tpe = find_contender(b, "optuna-tpe-median");
    for (size_t i = 0; i < b->n_cells; i++) {
        const Summary *R = &b->cells[i].summary[ref];
        if (!R->runs)
            continue;
        cells++;
        under2 += R->cost_to_within <= 2.0;
        if (tpe != (size_t)-1 && b->cells[i].summary[tpe].runs) {
            double ratio = b->cells[i].summary[tpe].cost_to_own_best_s /
                           cost_to_within_s(b, &b->cells[i], ref);
            printf("  %s: optuna-tpe-median to its own best / %s to <=%.2fx: %.2fx\n",
                   b->cells[i].spec, r, COST_WITHIN, ratio);
            compared++;
            cheaper3 += ratio >= 3;
        }
    }
    printf("targets for %s (issue 14): within %.2fx of best-known at <= 2x the ideal cost: "
           "%d/%d cells",
           r, COST_WITHIN, under2, cells);
    if (compared)
        printf("; >= 3x cheaper than optuna-tpe-median reaching its own best: %d/%d cells",
               cheaper3, compared);
    printf("\n");
}

cJSON *cost_json(const Bench *b, size_t ref)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "within", COST_WITHIN);
    cJSON *cells = cJSON_AddArrayToObject(root, "cells");
    for (size_t i = 0; i < b->n_cells; i++) {
        const Cell *cell = &b->cells[i];
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddStringToObject(cj, "spec", cell->spec);
        cJSON_AddItemToObject(cj, "ideal_trial_s", num_or_null(ideal_s(cell, 1)));
        cJSON *res = cJSON_AddArrayToObject(cj, "results");
        for (size_t k = 0; k < b->n_contenders; k++) {
            const Summary *sm = &cell->summary[k];
            if (!sm->runs)
                continue;
            cJSON *rj = cJSON_CreateObject();
            cJSON_AddStringToObject(rj, "optimizer", b->contenders[k].name);
            cJSON_AddItemToObject(rj, "cost_to_within_x_ideal", num_or_null(sm->cost_to_within));
            cJSON_AddNumberToObject(rj, "seeds_never_within", sm->cost_never);
            cJSON_AddItemToObject(rj, "cost_budget_x_ideal", num_or_null(sm->cost_budget));
            cJSON_AddItemToObject(rj, "cost_to_own_best_x_ideal",
                                  num_or_null(sm->cost_to_own_best));
            cJSON_AddItemToObject(rj, "cost_to_own_best_s", num_or_null(sm->cost_to_own_best_s));
            cJSON_AddItemToObject(rj, "cost_to_within_s",
                                  num_or_null(cost_to_within_s(b, cell, k)));
            cJSON_AddItemToObject(rj, "pruned_trials", num_or_null(sm->pruned_median));
            cJSON_AddItemToArray(res, rj);
        }
        cJSON_AddItemToArray(cells, cj);
    }
    if (ref != (size_t)-1)
        cJSON_AddStringToObject(root, "reference", b->contenders[ref].name);
    return root;
}
