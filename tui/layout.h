/* Where each pane goes: a pure function of the terminal size, the view and whether the
 * override editor is open. Every pane of a view is either placed or listed as hidden. */
#ifndef TUNEDECK_LAYOUT_H
#define TUNEDECK_LAYOUT_H

typedef enum { VIEW_TUNE, VIEW_CLUSTER, VIEW_HOSTS, VIEW_COUNT } ViewId;

typedef enum {
    PANE_TABS,      /* the view tabs and the session summary, first row */
    PANE_STATUS,    /* key hints, messages and the `:`/`/` prompt, last row */
    PANE_SURROGATE, /* tune: the suggested schedule with predicted bars */
    PANE_EDITOR,    /* tune: the override editor (replaces the surrogate while open) */
    PANE_PLOT,      /* tune: best-so-far plot */
    PANE_TRIALS,    /* tune: the trial table */
    PANE_LOG,       /* tune/cluster: the event log */
    PANE_LOADS,     /* cluster: per-worker load bars */
    PANE_GPUGRID,   /* cluster: GPU allocation grid */
    PANE_JOBS,      /* cluster: the job list */
    PANE_HOSTS,     /* hosts: connection table */
    PANE_TIMELINE,  /* cluster: the scheduler's decisions (starts, resizes, finishes) */
    PANE_QUEUE,     /* hosts, on a Slurm cluster: the queue (PANE_HOSTS holds the nodes) */
    PANE_COUNT
} PaneId;

typedef struct {
    int x, y, w, h;
} Rect;

enum {
    LAYOUT_EDITOR_OPEN = 1,
    LAYOUT_SLURM = 2, /* the hosts view shows Slurm's nodes and its queue */
    LAYOUT_NO_TUNE = 4, /* no tuning (the live scheduler, Slurm watched): the cluster view
                           has no per-worker loads, and its job list comes first */
};

/* Smallest box a pane is drawn in (with its border); smaller means hidden. */
enum { PANE_MIN_W = 16, PANE_MIN_H = 3 };

typedef struct {
    int cols, rows;
    ViewId view;
    int n; /* panes of this view, placed or hidden */
    PaneId id[PANE_COUNT];
    Rect rect[PANE_COUNT]; /* indexed by PaneId; w = h = 0 when hidden */
    unsigned char shown[PANE_COUNT];
    unsigned char in_view[PANE_COUNT];
} Layout;

void layout_compute(int cols, int rows, ViewId view, unsigned flags, Layout *out);
/* The panes of l's view that its size hides, and the smallest screen, no smaller than l's
 * either way, that shows every one (the fewest columns, then the fewest rows there), in
 * need_cols x need_rows: 0 x 0 when none up to LAYOUT_FIT_MAX_COLS x LAYOUT_FIT_MAX_ROWS
 * (or l's own size, where larger).
 * flags: those l was computed with. Returns how many panes are hidden. */
enum { LAYOUT_FIT_MAX_COLS = 400, LAYOUT_FIT_MAX_ROWS = 200 };
int layout_hidden(const Layout *l, unsigned flags, int *need_cols, int *need_rows);
/* A centred box of at most want_w × want_h inside the screen below the tab row. */
Rect layout_overlay(int cols, int rows, int want_w, int want_h);
const char *layout_pane_name(PaneId p);
const char *layout_view_name(ViewId v);
int rect_contains(Rect r, int x, int y);
int rect_overlap(Rect a, Rect b);

#endif
