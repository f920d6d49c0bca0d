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

#include "bench/args/benchargs.h"
#include "bench/args/benchtrials.h"
#include "core/base/clock.h"
#include "tui/trials.h"

static const size_t SIZES[] = {1000, 5000, 20000};
#define NSIZES (int)(sizeof SIZES / sizeof SIZES[0])
enum { EVENTS = 200 };

/* Trial i's outcome: ok with a time that wanders (a new best now and then), every 7th
 * failed. */
static void finish(TrialRecord *r, size_t i)
{
    r->obs = observation_new(r->suggestion.schedule);
    r->obs->status = i % 7 == 3 ? TRIAL_FAILED : TRIAL_OK;
    r->obs->time_s = 5.0 + (double)((i * 7919) % 1000) / 100.0;
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
static double run(TrialRecord *recs, const TrialRecord **ptr, size_t n, int before, TrialTable *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = n; i < n + EVENTS / 2; i++) { /* the events' trials: not run yet */
        observation_free(recs[i].obs);
        recs[i].obs = NULL;
    }
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
    const char *out;
    int quick;
    if (benchargs_out_quick("trialtable", argc, argv, &out, &quick) < 0)
        return 2;
    int sizes = quick ? NSIZES - 1 : NSIZES;
    size_t most = SIZES[sizes - 1] + EVENTS / 2;
    BenchTrials bt;
    if (benchtrials_make("trialtable", most, finish, &bt) < 0)
        return 1;
    TrialRecord *recs = bt.recs;
    const TrialRecord **ptr = bt.ptr;
    printf("the trial table rebuilt at each trial event (start, finish), CPU per event\n"
           "%8s %14s %14s %8s\n",
           "trials", "before_ms", "now_ms", "ratio");
    cJSON *res = cJSON_CreateArray();
    int rc = 0;
    for (int k = 0; k < sizes && rc == 0; k++) {
        TrialTable before, now;
        double b = run(recs, ptr, SIZES[k], 1, &before);
        double n = run(recs, ptr, SIZES[k], 0, &now);
        if (!same(&before, &now)) {
            fprintf(stderr, "trialtable: %zu trials: the two tables differ\n", SIZES[k]);
            rc = 1;
        }
        printf("%8zu %14.4f %14.4f %8.1f\n", SIZES[k], b * 1e3, n * 1e3, n > 0 ? b / n : 0);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "trials", (double)SIZES[k]);
        cJSON_AddNumberToObject(o, "before_s_per_event", b);
        cJSON_AddNumberToObject(o, "now_s_per_event", n);
        cJSON_AddNumberToObject(o, "ratio", n > 0 ? b / n : 0);
        cJSON_AddItemToArray(res, o);
        trials_free(&before);
        trials_free(&now);
    }
    if (rc == 0 && benchtrials_write("trialtable", out, res) < 0)
        rc = 1;
    else if (rc != 0)
        cJSON_Delete(res);
    benchtrials_free(&bt);
    return rc;
}
