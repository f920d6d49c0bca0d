/* Trial table rows: filter, sort, best-so-far. */
#include "tui/trials.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/draw.h"
#include "tui/draw_num.h"

/* One table for the names `:sort` takes and the headers the table draws (view_tune.c):
 * a header renamed there is still found here. */
static const struct {
    const char *name, *header;
    int width; /* negative: left-aligned; a header takes it, its sort mark and a space, as
                  a row's cell takes it and two spaces: the status cell is TRIALS_STATUS_W
                  and one space, so its header's is one less (-9 over a 9-column cell put
                  every header after it a column right of its values) */
} COLUMNS[TRIAL_COL_COUNT] = {
    {"trial", "#", 5},          {"status", "status", -(TRIALS_STATUS_W - 1)},
    {"time", "time_s", 8},      {"best", "best_s", 8},
    {"predicted", "pred_s", 8}, {"error", "err%", 5},
    {"workers", "W/PS", 5},
};

const char *trials_column_name(TrialColumn c)
{
    return c < TRIAL_COL_COUNT ? COLUMNS[c].name : "?";
}

const char *trials_column_header(TrialColumn c)
{
    return c < TRIAL_COL_COUNT ? COLUMNS[c].header : "?";
}

int trials_column_width(TrialColumn c)
{
    return c < TRIAL_COL_COUNT ? COLUMNS[c].width : 1;
}

int trials_column_find(const char *name)
{
    for (int c = 0; c < TRIAL_COL_COUNT; c++)
        if (strcasecmp(name, COLUMNS[c].name) == 0 || strcasecmp(name, COLUMNS[c].header) == 0)
            return c;
    return -1;
}

void trials_free(TrialTable *t)
{
    free(t->rows);
    free(t->order);
    free(t->moved);
    memset(t, 0, sizeof *t);
}

static int contains_ci(const char *hay, const char *needle, size_t n)
{
    size_t h = strlen(hay);
    for (size_t i = 0; i + n <= h; i++) {
        size_t k = 0;
        while (k < n && tolower((unsigned char)hay[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

int trials_match(const TrialRow *r, const char *filter)
{
    if (!filter || !filter[0])
        return 1;
    char text[512];
    const Observation *o = r->rec->obs;
    snprintf(text, sizeof text, "#%d %s%s %s", r->rec->trial, r->status,
             r->rec->overridden ? " override" : "", o && o->reason[0] ? o->reason : "");
    const char *p = filter;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n && !contains_ci(text, p, n))
            return 0;
        p += n;
    }
    return 1;
}

/* qsort has no context argument in C11; the table being sorted is one at a time. */
static const TrialTable *sort_table;
static TrialColumn sort_col;
static int sort_desc;

/* The order is sorted by `sort` from here: the table says so, and compare's context is set
 * until sort_table is NULL again. */
static void sort_begin(TrialTable *t, TrialColumn sort, int desc)
{
    t->sort_col = sort;
    t->sort_desc = desc;
    sort_table = t;
    sort_col = sort;
    sort_desc = desc;
}

static double key(const TrialRow *r)
{
    switch (sort_col) {
    case TRIAL_COL_TIME:
        return r->time_s;
    case TRIAL_COL_BEST:
        return r->best_s;
    case TRIAL_COL_PRED:
        return r->pred_s;
    case TRIAL_COL_ERR:
        return fabs(r->err_pct);
    case TRIAL_COL_WORKERS:
        return r->workers;
    default:
        return r->rec->trial;
    }
}

static int compare(const void *a, const void *b)
{
    const TrialRow *x = &sort_table->rows[*(const size_t *)a];
    const TrialRow *y = &sort_table->rows[*(const size_t *)b];
    int c;
    if (sort_col == TRIAL_COL_STATUS) {
        c = strcmp(x->status, y->status);
    } else {
        double kx = key(x), ky = key(y);
        /* Unknown values sort last whichever the direction. */
        int nx = isnan(kx) != 0, ny = isnan(ky) != 0;
        if (nx || ny)
            return nx != ny ? nx - ny : x->rec->trial - y->rec->trial;
        c = (kx > ky) - (kx < ky);
        /* W/PS: the workers, then the parameter servers, as the column reads ("10/1" before
         * "10/3"); by workers alone, rows of one count stayed in trial order */
        if (!c && sort_col == TRIAL_COL_WORKERS)
            c = (x->ps > y->ps) - (x->ps < y->ps);
    }
    if (sort_desc)
        c = -c;
    return c ? c : x->rec->trial - y->rec->trial;
}

/* A row's own fields, from its record (the best-so-far is the table's, in trials_build). */
static void row_fill(TrialRow *r, const TrialRecord *rec, const char *filter)
{
    r->rec = rec;
    r->trial = rec->trial;
    const Observation *o = rec->obs;
    r->final = o != NULL;
    int ok = o && o->status == TRIAL_OK;
    r->time_s = ok ? o->time_s : NAN;
    r->pred_s = rec->suggestion.has_prediction ? rec->suggestion.mean_s : NAN;
    r->err_pct =
        ok && !isnan(r->pred_s) && r->time_s > 0 ? (r->pred_s - r->time_s) / r->time_s * 100.0 : NAN;
    r->workers = schedule_count_workers(rec->suggestion.schedule);
    r->ps = schedule_count_ps(rec->suggestion.schedule);
    /* not launched yet: before_launch holds it (refused hosts, a stop not answered) */
    snprintf(r->status, sizeof r->status, "%s",
             o ? trial_status_name(o->status) : rec->launched ? "running" : "waiting");
    r->matched = trials_match(r, filter);
    /* The best-so-far needs nothing of its own: it is one of the times before it. */
    int nt = draw_seconds_need(r->time_s), np = draw_seconds_need(r->pred_s);
    r->need = nt > np ? nt : np;
    r->top_s = 0;
    if (nt && r->time_s > r->top_s)
        r->top_s = r->time_s;
    if (np && r->pred_s > r->top_s)
        r->top_s = r->pred_s;
}

int trials_decimals_scan(const TrialTable *t)
{
    double *v = malloc((3 * t->n + 1) * sizeof *v);
    if (!v)
        return 2;
    for (size_t i = 0; i < t->n; i++) {
        v[3 * i] = t->rows[i].time_s;
        v[3 * i + 1] = t->rows[i].best_s;
        v[3 * i + 2] = t->rows[i].pred_s;
    }
    int d = draw_seconds_decimals(v, 3 * t->n, TRIALS_SECONDS_W);
    free(v);
    return d;
}

int trials_decimals_with(const TrialTable *t, const double *more_s, size_t n)
{
    int need = t->need > 1 ? t->need : 1;
    double top = t->top_s;
    for (size_t i = 0; i < n; i++) {
        int d = draw_seconds_need(more_s[i]);
        need = d > need ? d : need;
        top = d && more_s[i] > top ? more_s[i] : top;
    }
    return draw_seconds_fit(need, top, TRIALS_SECONDS_W);
}

static int same_time(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* The kept order less its moved rows is still sorted (the others' keys did not change, and
 * compare is a total order: ties go by trial number); the moved rows that match are sorted
 * alone and merged in from the back. */
static void place_moved(TrialTable *t, size_t n_moved)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n_shown; i++)
        if (!t->rows[t->order[i]].moved)
            t->order[m++] = t->order[i];
    size_t k = 0;
    for (size_t i = 0; i < n_moved; i++)
        if (t->rows[t->moved[i]].matched)
            t->moved[k++] = t->moved[i];
    qsort(t->moved, k, sizeof *t->moved, compare);
    size_t i = m, j = k, w = m + k;
    while (j > 0) {
        if (i > 0 && compare(&t->order[i - 1], &t->moved[j - 1]) > 0)
            t->order[--w] = t->order[--i];
        else
            t->order[--w] = t->moved[--j];
    }
    t->n_shown = m + k;
}

void trials_build(TrialTable *t, const TrialRecord *const *recs, size_t n, TrialColumn sort,
                  int descending, const char *filter)
{
    if (!filter)
        filter = "";
    /* the rows kept: a filter that changed (or one too long to keep) matches all again */
    size_t keep = strlen(filter) < sizeof t->filter && strcmp(filter, t->filter) == 0 ? t->n : 0;
    if (keep > n)
        keep = 0; /* fewer trials than built: another tuner's */
    if (n > t->cap || !t->rows) {
        size_t cap = n > 2 * t->cap ? n : 2 * t->cap;
        cap = cap ? cap : 16;
        TrialRow *rows = realloc(t->rows, cap * sizeof *rows);
        if (rows)
            t->rows = rows;
        size_t *order = rows ? realloc(t->order, cap * sizeof *order) : NULL;
        if (order)
            t->order = order;
        size_t *moved = order ? realloc(t->moved, cap * sizeof *moved) : NULL;
        if (moved)
            t->moved = moved;
        if (!rows || !order || !moved) { /* out of memory: the table shows what it had */
            t->n_shown = t->n < t->n_shown ? t->n : t->n_shown;
            return;
        }
        t->cap = cap;
    }
    /* The order kept from the last build, where every row it held is still here, matched
     * by the same filter, and sorted by the same column the same way. */
    int kept_order = sort != TRIAL_COL_NUMBER && t->sort_col == sort &&
                     t->sort_desc == descending && keep == t->n;
    snprintf(t->filter, sizeof t->filter, "%s", strlen(filter) < sizeof t->filter ? filter : "");
    t->n = n;
    if (!kept_order)
        t->n_shown = 0;
    size_t n_moved = 0;
    double best = NAN, top = 0;
    int need = 1, wps_w = trials_column_width(TRIAL_COL_WORKERS);
    for (size_t i = 0; i < n; i++) {
        TrialRow *r = &t->rows[i];
        int kept = i < keep && r->final && r->trial == recs[i]->trial && recs[i]->obs;
        if (kept)
            r->rec = recs[i]; /* the same finished trial: only its record may have moved */
        else
            row_fill(r, recs[i], filter);
        if (!isnan(r->time_s) && (isnan(best) || r->time_s < best))
            best = r->time_s;
        /* a kept row's place changes only with its best-so-far, under a sort by it */
        r->moved = !kept || (sort == TRIAL_COL_BEST && !same_time(r->best_s, best));
        r->best_s = best;
        need = r->need > need ? r->need : need;
        top = r->top_s > top ? r->top_s : top;
        int w = snprintf(NULL, 0, TRIALS_WPS_FORMAT, r->workers, r->ps);
        wps_w = w > wps_w ? w : wps_w;
        if (kept_order && r->moved)
            t->moved[n_moved++] = i;
        else if (!kept_order && r->matched)
            t->order[t->n_shown++] = i;
    }
    t->need = need;
    t->top_s = top;
    t->wps_w = wps_w;
    t->decimals = draw_seconds_fit(need, top, TRIALS_SECONDS_W);
    sort_begin(t, sort, descending);
    if (sort == TRIAL_COL_NUMBER) { /* the rows are in trial order already */
        for (size_t i = 0; descending && i < t->n_shown / 2; i++) {
            size_t k = t->order[i];
            t->order[i] = t->order[t->n_shown - 1 - i];
            t->order[t->n_shown - 1 - i] = k;
        }
    } else if (kept_order) {
        place_moved(t, n_moved);
    } else {
        qsort(t->order, t->n_shown, sizeof *t->order, compare);
    }
    sort_table = NULL;
}

void trials_sort(TrialTable *t, TrialColumn sort, int descending)
{
    sort_begin(t, sort, descending);
    qsort(t->order, t->n_shown, sizeof *t->order, compare);
    sort_table = NULL;
}
