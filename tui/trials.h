/* The trial table's rows: which trials pass the `/` filter and in what order, with the
 * best-so-far and the prediction error computed once. Pure: tested without a terminal. */
#ifndef TUNEDECK_TRIALS_H
#define TUNEDECK_TRIALS_H

#include <stddef.h>

#include "remote/launch/tuner.h"

typedef enum {
    TRIAL_COL_NUMBER,
    TRIAL_COL_STATUS,
    TRIAL_COL_TIME,
    TRIAL_COL_BEST,
    TRIAL_COL_PRED,
    TRIAL_COL_ERR,
    TRIAL_COL_WORKERS,
    TRIAL_COL_COUNT
} TrialColumn;

typedef struct {
    const TrialRecord *rec;
    int trial;   /* rec->trial when built */
    int final;   /* built from a finished trial: kept by the next build (trials_build) */
    int matched; /* passed the filter it was built with */
    double time_s;  /* NAN unless ok */
    double best_s;  /* best ok time up to and including this trial; NAN before any */
    double pred_s;  /* NAN without a prediction */
    double err_pct; /* (pred - time) / time * 100; NAN unless both exist */
    int workers, ps;
    int need;       /* decimals its time and prediction need (draw_seconds_need), 0 none */
    double top_s;   /* the larger of its time and prediction above 0, else 0 */
    int moved;      /* its place in a sorted order may have changed at this build */
    char status[16]; /* "ok", "running", "failed"... */
} TrialRow;

/* The status column's width: its longest words, "unreachable" and "interrupted" (a row's
 * status cell is this and a space). */
#define TRIALS_STATUS_W 11
/* A row's W/PS cell: workers, then parameter servers. */
#define TRIALS_WPS_FORMAT "%2d/%-2d"
/* The width of the time, best and predicted columns (the table's decimals fit it). */
#define TRIALS_SECONDS_W 8

typedef struct {
    TrialRow *rows; /* every trial in trial order */
    size_t n, cap;
    size_t *order; /* indices into rows that pass the filter, sorted */
    size_t n_shown;
    char filter[256]; /* the filter the rows were matched with */
    int decimals;     /* of the time, best and predicted columns: alike for all three and
                         every trial (filtered out or not), so that they line up and keep
                         while the table scrolls or sorts; kept at each build */
    int need;         /* the most decimals a row needs and the largest time, that decimals */
    double top_s;     /* fits: kept so that other rows' times join the fit (trials_decimals_with) */
    int wps_w;        /* the W/PS column's width: its header's 5, or the widest of a row
                         ("200/200" on a 200-machine cluster), so that the notes line up */
    /* order holds the rows sorted so; a table never built (all zero) says by number, whose
       order is laid out at each build and never kept */
    TrialColumn sort_col;
    int sort_desc;
    size_t *moved;    /* scratch: the rows to place again in a kept order */
} TrialTable;

/* Rebuilds from the records (recs[i] is trial i+1). A row built from a finished trial is
 * kept when the same trial is in its place and the filter is the same: a rebuild at every
 * trial event formatted and matched every trial again, and sorted them, which over a long
 * session (tens of thousands of trials on the simulator) was most of the console's CPU.
 * What the table shows is what a build from nothing shows; the order by trial number is
 * laid out without sorting, and an order by another column is kept: only the rows whose
 * place may have changed (new, running, or a best-so-far that changed under a sort by it)
 * are sorted and merged in, where sorting every row at each event was O(n log n). */
void trials_build(TrialTable *t, const TrialRecord *const *recs, size_t n, TrialColumn sort,
                  int descending, const char *filter);
/* Sorts the shown rows by `sort` from nothing, whatever order they hold: what a build does
 * when it keeps no order. The tests and benchmarks sort a built table again with it, to check
 * or to time what the build kept. */
void trials_sort(TrialTable *t, TrialColumn sort, int descending);
/* The table's decimals found by reading every row, as the view did at every frame (twice):
 * what TrialTable.decimals keeps, for the tests and bench/consolescale. */
int trials_decimals_scan(const TrialTable *t);
/* The decimals of the table's time columns fitted to its rows and n more times shown in the
 * same columns (the queued overrides' predictions: NAN for none), so that those line up too. */
int trials_decimals_with(const TrialTable *t, const double *more_s, size_t n);
void trials_free(TrialTable *t);
const char *trials_column_name(TrialColumn c);
/* The header the table draws over the column, and its width there (negative: left-aligned,
 * a printf field width). */
const char *trials_column_header(TrialColumn c);
int trials_column_width(TrialColumn c);
/* The column `:sort NAME` names: its name (trials_column_name) or its header as the table
 * shows it (trials_column_header), any case; -1 for neither. */
int trials_column_find(const char *name);
/* Whether the row matches a filter: case-insensitive words that must all appear in
 * "#N status override note"; empty matches everything. */
int trials_match(const TrialRow *r, const char *filter);

#endif
