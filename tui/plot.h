/* Line plots into a character grid: Braille (2×4 dots per cell), blocks (1×2) or ASCII
 * (1×3), chosen by name from a table. Pure: no curses; the caller draws the grid. */
#ifndef TUNEDECK_PLOT_H
#define TUNEDECK_PLOT_H

#include <stddef.h>
#include <wchar.h>

typedef struct {
    const char *name;
    int dots_x, dots_y;              /* dots per cell */
    wchar_t (*glyph)(unsigned bits); /* bit (row * dots_x + col) set per lit dot */
} PlotStyle;

const PlotStyle *plot_style_find(const char *name); /* "braille", "block", "ascii" */

/* The style to draw with: the chosen one on a terminal that shows Unicode, else ascii (every
 * other style's glyphs are Unicode: --ascii, or a terminal that is not UTF-8). */
const PlotStyle *plot_style_shown(const PlotStyle *chosen, int unicode);

typedef struct {
    const double *y; /* y[i] at x = i; non-finite values leave a gap */
    size_t n;
    int id;     /* 1..255, stored per cell; the highest id wins a shared cell */
    int joined; /* 1: a line through the points, 0: points only */
} PlotSeries;

typedef struct {
    int w, h;
    wchar_t *cell;         /* w*h, L' ' where empty */
    unsigned char *series; /* w*h, 0 where empty */
} PlotGrid;

PlotGrid *plot_grid_new(int w, int h);
void plot_grid_free(PlotGrid *g);

/* Draws the series scaled so x in [0, x_max] and y in [y_min, y_max] fill the grid (y grows
 * upwards). Clears the grid first. Points outside the range are clipped. */
void plot_render(PlotGrid *g, const PlotStyle *style, double x_max, double y_min, double y_max,
                 const PlotSeries *series, size_t n_series);

/* A y range covering every finite value of the series with a little margin; returns 0 when
 * there is no finite value. */
int plot_range(const PlotSeries *series, size_t n_series, double *y_min, double *y_max);

/* A prediction more than this many times the slowest best-so-far is left off the scale. */
#define PLOT_PRED_FAR 10.0

/* The y range of a plot of times (n values of best and of pred each, NaN for none):
 * predictions more than PLOT_PRED_FAR times the slowest best-so-far are left out; from 10
 * values on, the top decile goes too (the first trials are far off and must not squash the
 * curve an operator watches), with margins of that range; never below 0 (a time). Returns
 * 0 when no value is finite. */
int plot_time_range(const double *best, const double *pred, size_t n, double *y_min,
                    double *y_max);

/* plot_time_range as it was: every value sorted for the 90th percentile, at every frame.
 * The baseline of bench/plot and of the tests, which check both give the same range. */
int plot_time_range_sorted(const double *best, const double *pred, size_t n, double *y_min,
                           double *y_max);

/* The k-th smallest (from 0) of v's n finite values (k < n), as v[k] of v sorted; reorders
 * v. Average O(n): the plot's 90th percentile at every frame. */
double plot_select(double *v, size_t n, size_t k);

/* How many trials (n, with a measured and a predicted time each, NaN for none) lie above
 * y_max, off the scale: a trial counts once when either of its points is above. */
size_t plot_trials_above(const double *meas, const double *pred, size_t n, double y_max);

#endif
