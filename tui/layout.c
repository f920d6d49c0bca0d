/* The pane layout of each view as a pure function of the screen size (no curses here), so
 * it can be checked over every size. Panes give way in a fixed order as space shrinks. */
#include "tui/layout.h"

#include <string.h>

static const char *const PANE_NAMES[PANE_COUNT] = {
    "tabs",  "status",   "surrogate", "editor", "best-so-far", "trials", "log",
    "loads", "gpu-grid", "jobs",      "hosts",  "timeline",    "queue",
};
static const char *const VIEW_NAMES[VIEW_COUNT] = {"Tune", "Cluster", "Hosts"};

const char *layout_pane_name(PaneId p)
{
    return p < PANE_COUNT ? PANE_NAMES[p] : "?";
}

const char *layout_view_name(ViewId v)
{
    return v < VIEW_COUNT ? VIEW_NAMES[v] : "?";
}

int rect_contains(Rect r, int x, int y)
{
    return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

int rect_overlap(Rect a, Rect b)
{
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0)
        return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static void add(Layout *l, PaneId p)
{
    l->id[l->n++] = p;
    l->in_view[p] = 1;
}

/* Places a pane when the box is big enough; otherwise it stays hidden. */
static void place(Layout *l, PaneId p, int x, int y, int w, int h)
{
    if (w < PANE_MIN_W || h < PANE_MIN_H)
        return;
    l->rect[p] = (Rect){x, y, w, h};
    l->shown[p] = 1;
}

static void tune(Layout *l, int cols, int body_y, int body_h, unsigned flags)
{
    /* the editor takes the surrogate's place: the other is not hidden, it is not there */
    PaneId top = (flags & LAYOUT_EDITOR_OPEN) ? PANE_EDITOR : PANE_SURROGATE;
    add(l, top);
    add(l, PANE_PLOT);
    add(l, PANE_TRIALS);
    add(l, PANE_LOG);
    int log_h = body_h >= 34 ? body_h / 6 : 0;
    int h = body_h - log_h;
    if (cols >= 72) {
        /* Side by side on top, the table below: the editor wants more rows than the pane. */
        int top_h = (flags & LAYOUT_EDITOR_OPEN) ? h * 3 / 5 : h / 2;
        if (top_h < 7)
            top_h = h >= 10 ? 7 : h;
        if (h - top_h < PANE_MIN_H)
            top_h = h; /* too short for the table: the top row takes it all */
        int left_w = cols * 11 / 20;
        place(l, top, 0, body_y, left_w, top_h);
        place(l, PANE_PLOT, left_w, body_y, cols - left_w, top_h);
        place(l, PANE_TRIALS, 0, body_y + top_h, cols, h - top_h);
    } else {
        /* Narrow: a column; the plot goes first, then the top pane shrinks. */
        int plot_h = h >= 24 ? h / 4 : 0;
        int top_h = h >= 12 ? (h - plot_h) / 2 : 0;
        if (flags & LAYOUT_EDITOR_OPEN)
            top_h = h - plot_h - (h - plot_h >= 12 ? 4 : 0);
        place(l, top, 0, body_y, cols, top_h);
        place(l, PANE_PLOT, 0, body_y + top_h, cols, plot_h);
        place(l, PANE_TRIALS, 0, body_y + top_h + plot_h, cols, h - top_h - plot_h);
    }
    place(l, PANE_LOG, 0, body_y + h, cols, log_h);
}

static void cluster(Layout *l, int cols, int body_y, int body_h, unsigned flags)
{
    int no_tune = (flags & LAYOUT_NO_TUNE) != 0;
    if (!no_tune)
        add(l, PANE_LOADS);
    add(l, PANE_GPUGRID);
    add(l, PANE_JOBS);
    add(l, PANE_LOG);
    int log_h = body_h >= 34 ? body_h / 6 : 0;
    int h = body_h - log_h;
    int top_h = h >= 14 ? h * 11 / 20 : h;
    if (no_tune) {
        /* No tuning: no per-worker loads (the pane said "no tuning" on every host), the grid
         * across the top and the job list, what the live scheduler is about, below at every
         * height (under 16 rows the top row took the whole screen, the jobs hidden). */
        top_h = h >= 14 ? h * 2 / 5 : h >= 9 ? h / 3 : 0;
        if (top_h > 0 && top_h < PANE_MIN_H)
            top_h = PANE_MIN_H;
        place(l, PANE_GPUGRID, 0, body_y, cols, top_h);
    } else if (cols >= 72) {
        int left_w = cols / 2;
        place(l, PANE_LOADS, 0, body_y, left_w, top_h);
        place(l, PANE_GPUGRID, left_w, body_y, cols - left_w, top_h);
    } else {
        int grid_h = top_h >= 12 ? top_h / 3 : 0;
        place(l, PANE_LOADS, 0, body_y, cols, top_h - grid_h);
        place(l, PANE_GPUGRID, 0, body_y + top_h - grid_h, cols, grid_h);
    }
    add(l, PANE_TIMELINE);
    if (cols >= 100) {
        int jobs_w = cols * 3 / 5;
        place(l, PANE_JOBS, 0, body_y + top_h, jobs_w, h - top_h);
        place(l, PANE_TIMELINE, jobs_w, body_y + top_h, cols - jobs_w, h - top_h);
    } else {
        place(l, PANE_JOBS, 0, body_y + top_h, cols, h - top_h);
    }
    place(l, PANE_LOG, 0, body_y + h, cols, log_h);
}

/* The hosts (or Slurm's nodes), the log below; on Slurm the queue between them, at most a
 * third of the rows (the nodes are what an operator acts on). */
static void hosts(Layout *l, int cols, int body_y, int body_h, unsigned flags)
{
    add(l, PANE_HOSTS);
    add(l, PANE_LOG);
    int log_h = body_h >= 20 ? body_h / 4 : 0;
    int h = body_h - log_h;
    int queue_h = 0;
    if (flags & LAYOUT_SLURM) {
        add(l, PANE_QUEUE);
        queue_h = h >= 12 ? h / 3 : 0;
    }
    place(l, PANE_HOSTS, 0, body_y, cols, h - queue_h);
    place(l, PANE_QUEUE, 0, body_y + h - queue_h, cols, queue_h);
    place(l, PANE_LOG, 0, body_y + h, cols, log_h);
}

void layout_compute(int cols, int rows, ViewId view, unsigned flags, Layout *out)
{
    memset(out, 0, sizeof *out);
    out->cols = cols < 0 ? 0 : cols;
    out->rows = rows < 0 ? 0 : rows;
    out->view = view;
    add(out, PANE_TABS);
    add(out, PANE_STATUS);
    if (cols <= 0 || rows <= 0)
        return;
    out->rect[PANE_TABS] = (Rect){0, 0, cols, 1};
    out->shown[PANE_TABS] = 1;
    if (rows >= 2) {
        out->rect[PANE_STATUS] = (Rect){0, rows - 1, cols, 1};
        out->shown[PANE_STATUS] = 1;
    }
    int body_y = 1, body_h = rows - 2;
    if (body_h < 0)
        body_h = 0;
    switch (view) {
    case VIEW_TUNE:
        tune(out, cols, body_y, body_h, flags);
        break;
    case VIEW_CLUSTER:
        cluster(out, cols, body_y, body_h, flags);
        break;
    default:
        hosts(out, cols, body_y, body_h, flags);
        break;
    }
}

/* Whether every pane of the view shows (the one-row bars aside). */
static int all_shown(const Layout *l)
{
    for (int i = 0; i < l->n; i++)
        if (!l->shown[l->id[i]])
            return 0;
    return 1;
}

int layout_hidden(const Layout *l, unsigned flags, int *need_cols, int *need_rows)
{
    *need_cols = *need_rows = 0;
    int hidden = 0;
    for (int i = 0; i < l->n; i++)
        hidden += !l->shown[l->id[i]] && l->id[i] != PANE_TABS && l->id[i] != PANE_STATUS;
    if (!hidden || l->cols <= 0 || l->rows <= 0)
        return hidden;
    /* the fewest columns that show them all with rows to spare, then the fewest rows at
     * those columns: a few hundred layouts at most, and only while a pane is hidden */
    /* From a screen already past the bounds, its own size is the bound: a pane hidden on 500
     * columns for want of rows was said to need a size no terminal up to 400x200 has. */
    int max_cols = l->cols > LAYOUT_FIT_MAX_COLS ? l->cols : LAYOUT_FIT_MAX_COLS;
    int max_rows = l->rows > LAYOUT_FIT_MAX_ROWS ? l->rows : LAYOUT_FIT_MAX_ROWS;
    Layout t;
    int cols = l->cols;
    while (cols <= max_cols) {
        layout_compute(cols, max_rows, l->view, flags, &t);
        if (all_shown(&t))
            break;
        cols++;
    }
    for (int rows = l->rows; cols <= max_cols && rows <= max_rows; rows++) {
        layout_compute(cols, rows, l->view, flags, &t);
        if (all_shown(&t)) {
            *need_cols = cols;
            *need_rows = rows;
            break;
        }
    }
    return hidden;
}

Rect layout_overlay(int cols, int rows, int want_w, int want_h)
{
    int max_w = cols - 2, max_h = rows - 2;
    int w = want_w < max_w ? want_w : max_w;
    int h = want_h < max_h ? want_h : max_h;
    if (w < 1 || h < 1)
        return (Rect){0, 0, 0, 0};
    return (Rect){(cols - w) / 2, 1 + (rows - 2 - h) / 2, w, h};
}
