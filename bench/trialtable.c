/* bench/trialtable: the console's trial table over a long session. The table is rebuilt at
 * every trial event (a trial starts, a trial finishes); with a history of N trials, 200 more
 * events are timed with the rows of finished trials kept (now) against every row built again
 * and sorted (before: a table built from nothing at each event, then trials_sort), both in this run on the same records. Prints
 * the CPU seconds per event and the before/now ratio at N = 1,000, 5,000 and 20,000 trials
 * (the simulator with --pace-ms 0 ran 20,000 in 10 minutes). Both tables must end alike, or
 * it fails. Usage: trialtable [--out FILE.json] [--quick]  (--quick: no 20,000) */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args/benchtrials.h"
#include "core/base/clock.h"
#include "tui/trials.h"

enum { EVENTS = BENCHTRIALS_EVENTS };

/* Trial i's outcome (benchtrials_outcome), predicted a little slow. */
static void finish(TrialRecord *r, size_t i)
{
    benchtrials_outcome(r, i);
    r->suggestion.has_prediction = 1;
    r->suggestion.mean_s = r->obs->time_s * 1.1;
}

/* One build of the table of n trials by number: kept from the last (now), or the way before
 * rows were kept, every row built again and sorted. */
static void build(TrialTable *t, const TrialRecord **ptr, size_t n, int before)
{
    if (before)
        trials_free(t);
    trials_build(t, ptr, n, TRIAL_COL_NUMBER, 0, "");
    if (before)
        trials_sort(t, TRIAL_COL_NUMBER, 0);
}

/* Builds the table of the first n trials, then times EVENTS events past them (each trial
 * started, then finished). Returns the CPU seconds per event. */
static double run(BenchTrials *bt, size_t n, int before, TrialTable *t)
{
    TrialRecord *recs = bt->recs;
    const TrialRecord **ptr = bt->ptr;
    memset(t, 0, sizeof *t);
    benchtrials_unrun(bt, n);
    build(t, ptr, n, before);
    double t0 = clock_cpu_s();
    for (size_t i = n; i < n + EVENTS / 2; i++) {
        build(t, ptr, i + 1, before); /* started */
        finish(&recs[i], i);
        build(t, ptr, i + 1, before); /* finished */
    }
    return (clock_cpu_s() - t0) / EVENTS;
}

static int same(const TrialTable *a, const TrialTable *b)
{
    if (a->n != b->n || a->n_shown != b->n_shown)
        return 0;
    for (size_t i = 0; i < a->n_shown; i++)
        if (a->order[i] != b->order[i] || strcmp(a->rows[i].status, b->rows[i].status) != 0 ||
            (a->rows[i].best_s != b->rows[i].best_s &&
             !(a->rows[i].best_s != a->rows[i].best_s && b->rows[i].best_s != b->rows[i].best_s)))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    BenchTrials bt;
    int rc = benchtrials_start("trialtable", argc, argv, finish, &bt);
    if (rc != 0)
        return rc;
    printf("the trial table rebuilt at each trial event (start, finish), CPU per event\n"
           "%8s %14s %14s %8s\n",
           "trials", "before_ms", "now_ms", "ratio");
    cJSON *res = cJSON_CreateArray();
    for (int k = 0; k < bt.sizes && rc == 0; k++) {
        size_t size = BENCHTRIALS_SIZES[k];
        TrialTable before, now;
        double b = run(&bt, size, 1, &before);
        double n = run(&bt, size, 0, &now);
        if (!same(&before, &now)) {
            fprintf(stderr, "trialtable: %zu trials: the two tables differ\n", size);
            rc = 1;
        }
        printf("%8zu %14.4f %14.4f %8.1f\n", size, b * 1e3, n * 1e3, n > 0 ? b / n : 0);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "trials", (double)size);
        cJSON_AddNumberToObject(o, "before_s_per_event", b);
        cJSON_AddNumberToObject(o, "now_s_per_event", n);
        cJSON_AddNumberToObject(o, "ratio", n > 0 ? b / n : 0);
        cJSON_AddItemToArray(res, o);
        trials_free(&before);
        trials_free(&now);
    }
    return benchtrials_end("trialtable", &bt, res, rc);
}
