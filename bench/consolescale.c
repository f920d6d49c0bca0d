/* bench/consolescale: what the console does per frame and per trial event over a long
 * session, the old way against the way now, both in this run on the same trials, at 1,000,
 * 5,000 and 20,000 trials:
 *   plot     the best-so-far plot's range (plot_time_range) per frame: its 90th percentile
 *            by a sort of every value (before, plot_time_range_sorted) or by selection;
 *   decimals one trial event (start or finish) and one frame: the table's build with the
 *            view reading every row's times for the decimals twice (before,
 *            trials_decimals_scan, as the frame did), or the decimals the build kept;
 *   sort     one trial event under a sort by time and by best-so-far: every shown row
 *            sorted again (before: built by number, rows kept, then trials_sort) or the order kept.
 * Prints the CPU time of each and the before/now ratio; the two ways must give the same
 * range, decimals and order, or it fails. Usage: consolescale [--out FILE.json] [--quick]
 * (--quick: no 20,000) */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args/benchtrials.h"
#include "core/base/clock.h"
#include "tui/plot.h"
#include "tui/trials.h"

enum { EVENTS = BENCHTRIALS_EVENTS, FRAMES = 200 };

/* Trial i's outcome (benchtrials_outcome), with a prediction near it, and a far one (the
 * prior) for the first. */
static void finish(TrialRecord *r, size_t i)
{
    benchtrials_outcome(r, i);
    r->suggestion.has_prediction = 1;
    r->suggestion.mean_s = i == 0 ? 400.0 : r->obs->time_s * (0.8 + (double)(i % 5) / 10.0);
}

/* The plot's series for n trials, as view_tune.c's draw_plot makes them. */
static void series(const TrialRecord *recs, size_t n, double *best, double *pred)
{
    double b = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const TrialRecord *t = &recs[i];
        if (t->obs && t->obs->status == TRIAL_OK && t->obs->time_s < b)
            b = t->obs->time_s;
        best[i] = isfinite(b) ? b : NAN;
        pred[i] = t->suggestion.has_prediction ? t->suggestion.mean_s : NAN;
    }
}

/* CPU seconds per frame of the plot's range; *lo, *hi: the range. */
static double plot_frames(const double *best, const double *pred, size_t n, int before, double *lo,
                          double *hi)
{
    double t0 = clock_cpu_s();
    for (int f = 0; f < FRAMES; f++)
        (before ? plot_time_range_sorted : plot_time_range)(best, pred, n, lo, hi);
    return (clock_cpu_s() - t0) / FRAMES;
}

/* Builds the table of the first n trials under `sort`, then times EVENTS events past them
 * (each trial started, then finished); with `frame`, each event is followed by a frame's
 * decimals (two scans before, the kept field now). Returns CPU seconds per event. */
static double events(BenchTrials *bt, size_t n, TrialColumn sort, int before, int frame,
                     TrialTable *t, int *decimals)
{
    TrialRecord *recs = bt->recs;
    const TrialRecord **ptr = bt->ptr;
    memset(t, 0, sizeof *t);
    int resort = before && !frame; /* an order by number is laid out, never kept */
    benchtrials_unrun(bt, n);
    trials_build(t, ptr, n, sort, 0, "");
    volatile int d = 0;
    double t0 = clock_cpu_s();
    for (size_t i = n; i < n + EVENTS / 2; i++) {
        for (int half = 0; half < 2; half++) {
            if (half)
                finish(&recs[i], i);
            /* started, then finished */
            trials_build(t, ptr, i + 1, resort ? TRIAL_COL_NUMBER : sort, 0, "");
            if (resort)
                trials_sort(t, sort, 0);
            if (frame && before)
                d = trials_decimals_scan(t) + trials_decimals_scan(t);
            else if (frame)
                d = t->decimals + t->decimals;
        }
    }
    double per = (clock_cpu_s() - t0) / EVENTS;
    *decimals = d / 2;
    return per;
}

static int same_order(const TrialTable *a, const TrialTable *b)
{
    if (a->n != b->n || a->n_shown != b->n_shown || a->decimals != b->decimals)
        return 0;
    for (size_t i = 0; i < a->n_shown; i++)
        if (a->order[i] != b->order[i])
            return 0;
    return 1;
}

static cJSON *row(const char *what, size_t n, double b, double now)
{
    printf("%-14s %8zu %12.4f %12.4f %8.1f\n", what, n, b * 1e3, now * 1e3, now > 0 ? b / now : 0);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "what", what);
    cJSON_AddNumberToObject(o, "trials", (double)n);
    cJSON_AddNumberToObject(o, "before_s", b);
    cJSON_AddNumberToObject(o, "now_s", now);
    cJSON_AddNumberToObject(o, "ratio", now > 0 ? b / now : 0);
    return o;
}

int main(int argc, char **argv)
{
    BenchTrials bt;
    int rc = benchtrials_start("consolescale", argc, argv, finish, &bt);
    if (rc != 0)
        return rc;
    TrialRecord *recs = bt.recs;
    double *best = calloc(bt.n, sizeof *best), *pred = calloc(bt.n, sizeof *pred);
    if (!best || !pred) {
        fprintf(stderr, "consolescale: out of memory\n");
        free(best);
        free(pred);
        return benchtrials_end("consolescale", &bt, NULL, 1);
    }
    printf("CPU per frame (plot) or per trial event (the rest); before: the old way, this run\n"
           "%-14s %8s %12s %12s %8s\n",
           "what", "trials", "before_ms", "now_ms", "ratio");
    cJSON *res = cJSON_CreateArray();
    for (int k = 0; k < bt.sizes && rc == 0; k++) {
        size_t n = BENCHTRIALS_SIZES[k];
        for (size_t i = 0; i < n; i++)
            if (!recs[i].obs)
                finish(&recs[i], i);
        series(recs, n, best, pred);
        double lo_b, hi_b, lo_n, hi_n;
        double b = plot_frames(best, pred, n, 1, &lo_b, &hi_b);
        double now = plot_frames(best, pred, n, 0, &lo_n, &hi_n);
        if (lo_b != lo_n || hi_b != hi_n) {
            fprintf(stderr, "consolescale: %zu trials: the plot's ranges differ\n", n);
            rc = 1;
        }
        cJSON_AddItemToArray(res, row("plot", n, b, now));

        TrialTable tb, tn;
        int db, dn;
        b = events(&bt, n, TRIAL_COL_NUMBER, 1, 1, &tb, &db);
        now = events(&bt, n, TRIAL_COL_NUMBER, 0, 1, &tn, &dn);
        if (db != dn || !same_order(&tb, &tn)) {
            fprintf(stderr, "consolescale: %zu trials: the decimals differ\n", n);
            rc = 1;
        }
        trials_free(&tb);
        trials_free(&tn);
        cJSON_AddItemToArray(res, row("decimals", n, b, now));

        static const TrialColumn BY[] = {TRIAL_COL_TIME, TRIAL_COL_BEST};
        static const char *NAME[] = {"sort time", "sort best"};
        for (int s = 0; s < 2; s++) {
            b = events(&bt, n, BY[s], 1, 0, &tb, &db);
            now = events(&bt, n, BY[s], 0, 0, &tn, &dn);
            if (!same_order(&tb, &tn)) {
                fprintf(stderr, "consolescale: %zu trials: the %s orders differ\n", n, NAME[s]);
                rc = 1;
            }
            trials_free(&tb);
            trials_free(&tn);
            cJSON_AddItemToArray(res, row(NAME[s], n, b, now));
        }
    }
    free(best);
    free(pred);
    return benchtrials_end("consolescale", &bt, res, rc);
}
