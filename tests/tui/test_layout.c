#include <criterion/criterion.h>
#include <stdio.h>

#include "tui/layout.h"

/* Checks one layout; returns a description of the first broken property, or NULL. */
static const char *check(const Layout *l, int cols, int rows, char *buf, size_t cap)
{
    for (int i = 0; i < l->n; i++) {
        PaneId p = l->id[i];
        Rect r = l->rect[p];
        if (!l->in_view[p])
            return "a listed pane is not marked in the view";
        if (!l->shown[p]) {
            if (r.w || r.h)
                return "a hidden pane has a rectangle";
            continue;
        }
        if (r.x < 0 || r.y < 0 || r.x + r.w > cols || r.y + r.h > rows) {
            snprintf(buf, cap, "pane %s at %d,%d %dx%d leaves the %dx%d screen",
                     layout_pane_name(p), r.x, r.y, r.w, r.h, cols, rows);
            return buf;
        }
        int one_row = p == PANE_TABS || p == PANE_STATUS;
        if (!one_row && (r.w < PANE_MIN_W || r.h < PANE_MIN_H)) {
            snprintf(buf, cap, "pane %s shown below the minimum size", layout_pane_name(p));
            return buf;
        }
        for (int j = i + 1; j < l->n; j++) {
            PaneId q = l->id[j];
            if (l->shown[q] && rect_overlap(r, l->rect[q])) {
                snprintf(buf, cap, "panes %s and %s overlap at %dx%d", layout_pane_name(p),
                         layout_pane_name(q), cols, rows);
                return buf;
            }
        }
    }
    for (int p = 0; p < PANE_COUNT; p++)
        if (l->shown[p] && !l->in_view[p])
            return "a pane outside the view is shown";
    return NULL;
}

Test(layout, every_size_from_40x12_to_400x120_keeps_panes_inside_and_apart)
{
    char buf[256];
    Layout l;
    for (int v = 0; v < VIEW_COUNT; v++)
        for (unsigned flags = 0; flags <= (LAYOUT_EDITOR_OPEN | LAYOUT_SLURM | LAYOUT_NO_TUNE);
             flags++)
            for (int cols = 40; cols <= 400; cols++)
                for (int rows = 12; rows <= 120; rows++) {
                    layout_compute(cols, rows, (ViewId)v, flags, &l);
                    const char *bad = check(&l, cols, rows, buf, sizeof buf);
                    if (bad)
                        cr_assert_fail("%s (view %s, %dx%d, flags %u)", bad,
                                       layout_view_name((ViewId)v), cols, rows, flags);
                }
}

Test(layout, every_view_shows_something_useful_at_every_size)
{
    Layout l;
    for (int cols = 40; cols <= 400; cols += 3)
        for (int rows = 12; rows <= 120; rows += 2) {
            layout_compute(cols, rows, VIEW_TUNE, 0, &l);
            cr_assert(l.shown[PANE_TRIALS], "no trial table at %dx%d", cols, rows);
            layout_compute(cols, rows, VIEW_TUNE, LAYOUT_EDITOR_OPEN, &l);
            cr_assert(l.shown[PANE_EDITOR], "no editor at %dx%d", cols, rows);
            cr_assert(!l.shown[PANE_SURROGATE], "the editor replaces the surrogate");
            layout_compute(cols, rows, VIEW_CLUSTER, 0, &l);
            cr_assert(l.shown[PANE_LOADS], "no load bars at %dx%d", cols, rows);
            layout_compute(cols, rows, VIEW_HOSTS, 0, &l);
            cr_assert(l.shown[PANE_HOSTS], "no hosts table at %dx%d", cols, rows);
            cr_assert(!l.in_view[PANE_QUEUE], "no queue off Slurm");
            layout_compute(cols, rows, VIEW_HOSTS, LAYOUT_SLURM, &l);
            cr_assert(l.shown[PANE_HOSTS], "no Slurm node table at %dx%d", cols, rows);
            if (rows >= 24)
                cr_assert(l.shown[PANE_QUEUE], "no Slurm queue at %dx%d", cols, rows);
        }
}

/* Without tuning (the live scheduler, Slurm watched) the cluster view has no per-worker
 * loads, and the job list shows at every size, the GPU grid above it from 13 rows: under
 * 16 rows the empty loads pane took the whole screen, the live jobs hidden. */
Test(layout, without_tuning_the_cluster_view_always_shows_the_jobs)
{
    Layout l;
    for (int cols = 40; cols <= 400; cols += 3)
        for (int rows = 12; rows <= 120; rows += 1) {
            layout_compute(cols, rows, VIEW_CLUSTER, LAYOUT_NO_TUNE, &l);
            cr_assert(l.shown[PANE_JOBS], "no job list at %dx%d", cols, rows);
            cr_assert(!l.in_view[PANE_LOADS] && !l.shown[PANE_LOADS], "loads at %dx%d", cols, rows);
            if (rows >= 13)
                cr_assert(l.shown[PANE_GPUGRID], "no GPU grid at %dx%d", cols, rows);
        }
    layout_compute(60, 15, VIEW_CLUSTER, LAYOUT_NO_TUNE, &l);
    cr_assert(l.shown[PANE_JOBS] && l.shown[PANE_GPUGRID]);
}

Test(layout, at_80x24_the_tune_view_shows_all_three_panes)
{
    Layout l;
    layout_compute(80, 24, VIEW_TUNE, 0, &l);
    cr_assert(l.shown[PANE_SURROGATE]);
    cr_assert(l.shown[PANE_PLOT]);
    cr_assert(l.shown[PANE_TRIALS]);
    cr_assert(l.shown[PANE_TABS] && l.shown[PANE_STATUS]);
    layout_compute(80, 24, VIEW_CLUSTER, 0, &l);
    cr_assert(l.shown[PANE_LOADS] && l.shown[PANE_GPUGRID] && l.shown[PANE_JOBS]);
}

Test(layout, the_surrogate_pane_fits_setting_b_at_100x30)
{
    Layout l;
    layout_compute(100, 30, VIEW_TUNE, 0, &l);
    /* ten machines, two header lines, the border */
    cr_assert_geq(l.rect[PANE_SURROGATE].h, 14);
}

Test(layout, tiny_and_negative_sizes_place_nothing_outside)
{
    Layout l;
    for (int cols = -2; cols < 40; cols++)
        for (int rows = -2; rows < 12; rows++) {
            layout_compute(cols, rows, VIEW_TUNE, 0, &l);
            for (int p = 0; p < PANE_COUNT; p++)
                if (l.shown[p])
                    cr_assert(l.rect[p].x + l.rect[p].w <= cols &&
                              l.rect[p].y + l.rect[p].h <= rows);
        }
}

Test(layout, overlay_is_centred_and_clipped)
{
    Rect r = layout_overlay(100, 30, 76, 25);
    cr_assert_eq(r.w, 76);
    cr_assert_eq(r.x, 12);
    r = layout_overlay(40, 12, 76, 25);
    cr_assert(r.x >= 0 && r.x + r.w <= 40 && r.y >= 1 && r.y + r.h <= 11);
}

/* Regression: a pane a small screen hid was said nowhere. layout_hidden counts the hidden
 * panes and gives the smallest size, no smaller either way, that shows them all: at it they
 * all show, and at a row fewer they did not (when rows had to grow). */
Test(layout, hidden_panes_are_counted_with_the_size_that_shows_them)
{
    Layout l, at;
    int c, r;
    layout_compute(100, 30, VIEW_TUNE, 0, &l);
    cr_assert_eq(layout_hidden(&l, 0, &c, &r), 1, "the log alone at 100x30");
    cr_assert(!l.shown[PANE_LOG]);
    cr_assert_eq(c, 100);
    cr_assert_eq(r, 36);
    /* wider than the search's bounds, the log hidden for want of rows: rows are what it needs */
    layout_compute(LAYOUT_FIT_MAX_COLS + 100, 30, VIEW_TUNE, 0, &l);
    cr_assert_eq(layout_hidden(&l, 0, &c, &r), 1, "the log alone at 500x30");
    cr_assert_eq(c, LAYOUT_FIT_MAX_COLS + 100);
    cr_assert_gt(r, 30);
    layout_compute(100, 40, VIEW_TUNE, 0, &l);
    cr_assert_eq(layout_hidden(&l, 0, &c, &r), 0, "every pane at 100x40");
    layout_compute(100, 40, VIEW_TUNE, LAYOUT_EDITOR_OPEN, &l);
    cr_assert_eq(layout_hidden(&l, LAYOUT_EDITOR_OPEN, &c, &r), 0,
                 "the surrogate the editor replaces is not hidden");
    for (int v = 0; v < VIEW_COUNT; v++)
        for (unsigned flags = 0; flags <= (LAYOUT_EDITOR_OPEN | LAYOUT_SLURM | LAYOUT_NO_TUNE);
             flags++)
            for (int cols = 16; cols <= 160; cols += 7)
                for (int rows = 3; rows <= 60; rows += 3) {
                    layout_compute(cols, rows, (ViewId)v, flags, &l);
                    int n = layout_hidden(&l, flags, &c, &r);
                    if (!n)
                        continue;
                    cr_assert(c >= cols && r >= rows, "%dx%d: %dx%d", cols, rows, c, r);
                    if (r > rows) {
                        layout_compute(c, r - 1, (ViewId)v, flags, &at);
                        cr_assert_gt(layout_hidden(&at, flags, &(int){0}, &(int){0}), 0,
                                     "%dx%d: %dx%d is not the fewest rows", cols, rows, c, r);
                    }
                    layout_compute(c, r, (ViewId)v, flags, &at);
                    cr_assert_eq(layout_hidden(&at, flags, &c, &r), 0,
                                 "view %d flags %u: %dx%d hides none at the size it gives", v,
                                 flags, cols, rows);
                }
}
