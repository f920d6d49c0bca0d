/* Rasterises series onto a dot grid, then turns each cell's dots into one glyph of the
 * chosen style (after the Braille plots of btop/plotille: 2×4 dots per character). */
#include "tui/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static wchar_t braille(unsigned bits)
{
    /* Unicode orders Braille dots 1-2-3 down the left, 4-5-6 down the right, then 7, 8. */
    static const unsigned char DOT[8] = {0x01, 0x08, 0x02, 0x10, 0x04, 0x20, 0x40, 0x80};
    unsigned code = 0;
    for (int i = 0; i < 8; i++)
        if (bits & (1u << i))
            code |= DOT[i];
    return code ? (wchar_t)(0x2800 + code) : L' ';
}

static wchar_t block(unsigned bits)
{
    static const wchar_t G[4] = {L' ', L'\x2580', L'\x2584', L'\x2588'}; /* ▀ ▄ █ */
    return G[bits & 3];
}

static wchar_t ascii(unsigned bits)
{
    static const wchar_t G[8] = {L' ', L'\'', L'-', L':', L'.', L':', L':', L'|'};
    return G[bits & 7];
}

static const PlotStyle STYLES[] = {
    {"braille", 2, 4, braille},
    {"block", 1, 2, block},
    {"ascii", 1, 3, ascii},
};

const PlotStyle *plot_style_find(const char *name)
{
    for (size_t i = 0; i < sizeof STYLES / sizeof STYLES[0]; i++)
        if (strcmp(STYLES[i].name, name) == 0)
            return &STYLES[i];
    return NULL;
}

const PlotStyle *plot_style_shown(const PlotStyle *chosen, int unicode)
{
    return unicode && chosen ? chosen : plot_style_find("ascii");
}

PlotGrid *plot_grid_new(int w, int h)
{
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    PlotGrid *g = calloc(1, sizeof *g);
    g->w = w;
    g->h = h;
    g->cell = calloc((size_t)w * h, sizeof *g->cell);
    g->series = calloc((size_t)w * h, 1);
    return g;
}

void plot_grid_free(PlotGrid *g)
{
    if (!g)
        return;
    free(g->cell);
    free(g->series);
    free(g);
}

typedef struct {
    int dw, dh;
    unsigned char *dot; /* series id per dot */
} Dots;

static void set_dot(Dots *d, int x, int y, int id)
{
    if (x >= 0 && x < d->dw && y >= 0 && y < d->dh)
        d->dot[(size_t)y * d->dw + x] = (unsigned char)id;
}

static void line(Dots *d, int x0, int y0, int x1, int y1, int id)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        set_dot(d, x0, y0, id);
        if (x0 == x1 && y0 == y1)
            return;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

void plot_render(PlotGrid *g, const PlotStyle *style, double x_max, double y_min, double y_max,
                 const PlotSeries *series, size_t n_series)
{
    Dots d = {g->w * style->dots_x, g->h * style->dots_y, NULL};
    d.dot = calloc((size_t)d.dw * d.dh, 1);
    double xs = x_max > 0 ? (d.dw - 1) / x_max : 0;
    double span = y_max - y_min;
    double ys = span > 0 ? (d.dh - 1) / span : 0;
    for (size_t s = 0; s < n_series; s++) {
        const PlotSeries *p = &series[s];
        int have_prev = 0, px = 0, py = 0;
        for (size_t i = 0; i < p->n; i++) {
            double v = p->y[i];
            if (!isfinite(v) || v < y_min - span || v > y_max + span) {
                have_prev = 0; /* far outside: a gap rather than a line to infinity */
                continue;
            }
            int x = (int)lround((double)i * xs);
            int y = (int)lround((y_max - v) * ys);
            if (p->joined && have_prev)
                line(&d, px, py, x, y, p->id);
            else
                set_dot(&d, x, y, p->id);
            have_prev = 1;
            px = x;
            py = y;
        }
    }
    for (int cy = 0; cy < g->h; cy++)
        for (int cx = 0; cx < g->w; cx++) {
            unsigned bits = 0;
            unsigned char id = 0;
            for (int ry = 0; ry < style->dots_y; ry++)
                for (int rx = 0; rx < style->dots_x; rx++) {
                    unsigned char v =
                        d.dot[(size_t)(cy * style->dots_y + ry) * d.dw + cx * style->dots_x + rx];
                    if (v) {
                        bits |= 1u << (ry * style->dots_x + rx);
                        if (v > id)
                            id = v;
                    }
                }
            size_t k = (size_t)cy * g->w + cx;
            g->cell[k] = style->glyph(bits);
            g->series[k] = id;
        }
    free(d.dot);
}

int plot_range(const PlotSeries *series, size_t n_series, double *y_min, double *y_max)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < n_series; s++)
        for (size_t i = 0; i < series[s].n; i++) {
            double v = series[s].y[i];
            if (!isfinite(v))
                continue;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    if (!isfinite(lo))
        return 0;
    double margin = (hi - lo) * 0.05;
    if (margin <= 0)
        margin = fabs(hi) * 0.05 + 1e-9;
    *y_min = lo - margin;
    *y_max = hi + margin;
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The value that would be v[k] once v (n > k finite values) were sorted, found by selection
 * (Hoare's FIND: partition around a median of three, go on in the side holding k), in
 * O(n) on average where a sort is O(n log n); v is reordered. The partition stops at values
 * equal to the pivot, so the long runs of equal best-so-far times split evenly. */
double plot_select(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        for (;;) { /* v[lo..] holds p, so neither scan leaves [lo, hi] */
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i >= j)
                break;
            double t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        if (i == j) { /* v[lo..j-1] <= v[j] = p <= v[j+1..hi]: v[j] is in its place */
            if (k == j)
                return p;
            if (k < j)
                hi = j - 1;
            else
                lo = j + 1;
            continue;
        }
        /* i > j: v[lo..j] <= p <= v[j+1..hi], both sides shorter than [lo, hi] */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[k];
}

/* by_sort: the whole sort the 90th percentile once took (bench/plot's and the tests'
 * baseline, plot_time_range_sorted); else selection. */
static int time_range(const double *best, const double *pred, size_t n, double *y_min,
                      double *y_max, int by_sort)
{
    /* A prediction PLOT_PRED_FAR times the slowest best-so-far is the model's prior talking
     * (4 s for a 10 ms job before any data): it would squash the measured curve to a line at
     * the bottom, so it stays off the scale and is counted above it, like a slow trial. */
    double best_top = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(best[i]) && best[i] > best_top)
            best_top = best[i];
    double *near = malloc((n ? n : 1) * sizeof *near);
    if (!near)
        return 0;
    for (size_t i = 0; i < n; i++)
        near[i] = isfinite(best_top) && pred[i] > PLOT_PRED_FAR * best_top ? NAN : pred[i];
    PlotSeries ser[2] = {{best, n, 1, 0}, {near, n, 1, 0}};
    if (!plot_range(ser, 2, y_min, y_max)) {
        free(near);
        return 0;
    }
    double *v = n >= 10 ? malloc(2 * n * sizeof *v) : NULL;
    size_t k = 0;
    double low = INFINITY;
    for (size_t i = 0; v && i < n; i++) {
        if (isfinite(best[i]))
            v[k++] = best[i];
        if (isfinite(near[i]))
            v[k++] = near[i];
    }
    for (size_t i = 0; i < k; i++)
        low = v[i] < low ? v[i] : low;
    free(near);
    if (k >= 10) {
        double bottom, top;
        if (by_sort) {
            qsort(v, k, sizeof *v, cmp_double);
            bottom = v[0];
            top = v[k * 9 / 10];
        } else { /* the plot asks at every frame: of 40,000 values, a sort was most of it */
            bottom = low;
            top = plot_select(v, k, k * 9 / 10);
        }
        /* the margins follow the trimmed range: those of the whole one put the bottom of a
         * 10 ms curve at -0.19 s when the first prediction was 4 s */
        if (top > bottom) {
            *y_min = bottom - (top - bottom) * 0.05;
            *y_max = top + (top - bottom) * 0.1;
        }
    }
    free(v);
    if (*y_min < 0 && *y_max > 0)
        *y_min = 0;
    return 1;
}

int plot_time_range(const double *best, const double *pred, size_t n, double *y_min,
                    double *y_max)
{
    return time_range(best, pred, n, y_min, y_max, 0);
}

int plot_time_range_sorted(const double *best, const double *pred, size_t n, double *y_min,
                           double *y_max)
{
    return time_range(best, pred, n, y_min, y_max, 1);
}

size_t plot_trials_above(const double *meas, const double *pred, size_t n, double y_max)
{
    size_t above = 0;
    for (size_t i = 0; i < n; i++)
        above += (isfinite(meas[i]) && meas[i] > y_max) || (isfinite(pred[i]) && pred[i] > y_max);
    return above;
}
