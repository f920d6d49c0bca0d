#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui/plot.h"

Test(plot, styles_are_found_by_name)
{
    cr_assert_not_null(plot_style_find("braille"));
    cr_assert_not_null(plot_style_find("block"));
    cr_assert_not_null(plot_style_find("ascii"));
    cr_assert_null(plot_style_find("sparkle"));
}

Test(plot, braille_dots_map_to_unicode_bits)
{
    const PlotStyle *b = plot_style_find("braille");
    cr_assert_eq(b->glyph(0), L' ');
    cr_assert_eq(b->glyph(1), (wchar_t)0x2801);       /* top left: dot 1 */
    cr_assert_eq(b->glyph(1u << 1), (wchar_t)0x2808); /* top right: dot 4 */
    cr_assert_eq(b->glyph(1u << 6), (wchar_t)0x2840); /* bottom left: dot 7 */
    cr_assert_eq(b->glyph(0xff), (wchar_t)0x28ff);
}

Test(plot, a_rising_line_goes_from_bottom_left_to_top_right)
{
    double y[] = {0, 1, 2, 3};
    PlotSeries s = {y, 4, 1, 1};
    PlotGrid *g = plot_grid_new(4, 2);
    plot_render(g, plot_style_find("braille"), 3, 0, 3, &s, 1);
    cr_assert_neq(g->cell[1 * 4 + 0], L' ', "bottom-left cell is lit");
    cr_assert_neq(g->cell[0 * 4 + 3], L' ', "top-right cell is lit");
    cr_assert_eq(g->cell[0 * 4 + 0], L' ', "top-left cell is empty");
    cr_assert_eq(g->cell[1 * 4 + 3], L' ', "bottom-right cell is empty");
    cr_assert_eq(g->series[1 * 4 + 0], 1);
    plot_grid_free(g);
}

Test(plot, block_style_uses_half_blocks)
{
    double y[] = {1, 1};
    PlotSeries s = {y, 2, 1, 1};
    PlotGrid *g = plot_grid_new(2, 1);
    plot_render(g, plot_style_find("block"), 1, 0, 1, &s, 1);
    cr_assert_eq(g->cell[0], (wchar_t)0x2580); /* upper half: y at the top */
    plot_grid_free(g);
}

Test(plot, ascii_style_stays_ascii)
{
    double y[] = {0, 5, 1, 4, 2};
    PlotSeries s = {y, 5, 1, 1};
    PlotGrid *g = plot_grid_new(10, 4);
    plot_render(g, plot_style_find("ascii"), 4, 0, 5, &s, 1);
    for (int i = 0; i < 40; i++)
        cr_assert(g->cell[i] < 128, "cell %d is not ASCII", i);
    plot_grid_free(g);
}

Test(plot, without_unicode_every_style_is_drawn_in_ascii)
{
    double y[] = {0, 5, 1, 4, 2};
    PlotSeries s = {y, 5, 1, 1};
    const char *names[] = {"braille", "block", "ascii"};
    for (int k = 0; k < 3; k++) {
        const PlotStyle *chosen = plot_style_find(names[k]);
        cr_assert_eq(plot_style_shown(chosen, 1), chosen, "%s kept on a Unicode terminal",
                     names[k]);
        PlotGrid *g = plot_grid_new(10, 4);
        plot_render(g, plot_style_shown(chosen, 0), 4, 0, 5, &s, 1);
        int lit = 0;
        for (int i = 0; i < 40; i++) {
            cr_assert(g->cell[i] < 128, "%s without Unicode: cell %d is not ASCII", names[k], i);
            lit += g->cell[i] != L' ';
        }
        cr_assert_gt(lit, 0, "%s without Unicode still draws", names[k]);
        plot_grid_free(g);
    }
}

Test(plot, non_finite_values_leave_gaps_and_no_crash)
{
    double y[] = {NAN, INFINITY, 2, NAN, -INFINITY};
    PlotSeries s = {y, 5, 2, 1};
    PlotGrid *g = plot_grid_new(5, 3);
    plot_render(g, plot_style_find("braille"), 4, 0, 4, &s, 1);
    int lit = 0;
    for (int i = 0; i < 15; i++)
        lit += g->cell[i] != L' ';
    cr_assert_eq(lit, 1, "only the one finite point is drawn");
    plot_grid_free(g);
}

Test(plot, the_higher_series_id_wins_a_shared_cell)
{
    double a[] = {1}, b[] = {1};
    PlotSeries s[2] = {{a, 1, 1, 0}, {b, 1, 3, 0}};
    PlotGrid *g = plot_grid_new(1, 1);
    plot_render(g, plot_style_find("braille"), 1, 0, 2, s, 2);
    cr_assert_eq(g->series[0], 3);
    plot_grid_free(g);
}

Test(plot, range_covers_finite_values_with_margin)
{
    double y[] = {NAN, 10, 20};
    PlotSeries s = {y, 3, 1, 1};
    double lo, hi;
    cr_assert(plot_range(&s, 1, &lo, &hi));
    cr_assert(lo < 10 && hi > 20);
    double none[] = {NAN};
    PlotSeries e = {none, 1, 1, 1};
    cr_assert_not(plot_range(&e, 1, &lo, &hi));
}

Test(plot, every_grid_size_renders_without_writing_outside)
{
    double y[64];
    for (int i = 0; i < 64; i++)
        y[i] = sin(i * 0.3) * 10;
    PlotSeries s = {y, 64, 1, 1};
    const char *names[] = {"braille", "block", "ascii"};
    for (int k = 0; k < 3; k++)
        for (int w = 1; w < 40; w += 3)
            for (int h = 1; h < 20; h += 2) {
                PlotGrid *g = plot_grid_new(w, h);
                plot_render(g, plot_style_find(names[k]), 63, -10, 10, &s, 1);
                plot_grid_free(g);
            }
}

Test(plot, time_range_follows_the_curve_not_the_first_far_prediction)
{
    /* A 10 ms job whose first prediction was 4 s: the axis once ran from -0.19 s. */
    enum { N = 20 };
    double best[N], pred[N];
    for (int i = 0; i < N; i++) {
        best[i] = 0.010 - 0.0001 * i;
        pred[i] = i == 0 ? 4.077 : 0.011;
    }
    double lo, hi;
    cr_assert(plot_time_range(best, pred, N, &lo, &hi));
    cr_assert(lo >= 0 && lo <= best[N - 1], "lo %g", lo);
    cr_assert(hi >= 0.011 && hi < 0.1, "hi %g", hi);
    /* few trials: the far first prediction stays off the scale too */
    cr_assert(plot_time_range(best, pred, 3, &lo, &hi));
    cr_assert(lo >= 0 && lo <= best[2] && hi >= 0.011 && hi < 0.1, "lo %g hi %g", lo, hi);
    /* a prediction within PLOT_PRED_FAR of the measured times is on the scale */
    pred[0] = 0.05;
    cr_assert(plot_time_range(best, pred, 3, &lo, &hi));
    cr_assert(lo >= 0 && lo < 0.0098 && hi > 0.05, "lo %g hi %g", lo, hi);
    /* nothing measured yet: the predictions alone make the range */
    double unmeasured[3] = {NAN, NAN, NAN}, prior[3] = {4.077, NAN, NAN};
    cr_assert(plot_time_range(unmeasured, prior, 3, &lo, &hi));
    cr_assert(hi > 4.077, "hi %g", hi);
    double none[2] = {NAN, NAN};
    cr_assert_not(plot_time_range(none, none, 2, &lo, &hi));
}

/* The legend's "N above" counts trials: one whose measured and predicted times are both off
 * the scale is one (regression: it counted twice). */
Test(plot, trials_above_the_scale_count_once_each)
{
    double meas[4] = {5.0, 0.01, 3.0, NAN}, pred[4] = {4.0, 2.0, 0.01, 9.0};
    cr_assert_eq(plot_trials_above(meas, pred, 4, 1.0), 4);
    double low[4] = {0.01, 0.01, NAN, 0.02}, low_pred[4] = {NAN, 0.01, 0.01, 0.02};
    cr_assert_eq(plot_trials_above(low, low_pred, 4, 1.0), 0);
    cr_assert_eq(plot_trials_above(meas, pred, 1, 1.0), 1);
}

static unsigned xorshift(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The 90th percentile by selection (at every frame) is the sorted array's, for every k, over
 * random arrays with long runs of equal values (a best-so-far's plateaus), sorted ones and
 * reversed ones (many seeds and sizes). */
Test(plot, selection_finds_what_a_sort_puts_at_k)
{
    enum { MAXN = 300 };
    double v[MAXN], sorted[MAXN], work[MAXN];
    for (unsigned seed = 1; seed <= 400; seed++) {
        unsigned r = seed * 2654435761u | 1;
        size_t n = 1 + xorshift(&r) % MAXN;
        unsigned distinct = 1 + xorshift(&r) % (seed % 3 == 0 ? 4 : 1000);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)(xorshift(&r) % distinct) * 0.25 - 3;
        if (seed % 5 == 1) /* sorted, or reversed */
            qsort(v, n, sizeof *v, cmp_dbl);
        if (seed % 10 == 1)
            for (size_t i = 0; i < n / 2; i++) {
                double t = v[i];
                v[i] = v[n - 1 - i];
                v[n - 1 - i] = t;
            }
        memcpy(sorted, v, n * sizeof *v);
        qsort(sorted, n, sizeof *v, cmp_dbl);
        for (size_t k = 0; k < n; k += 1 + n / 17) {
            memcpy(work, v, n * sizeof *v);
            cr_assert_eq(plot_select(work, n, k), sorted[k], "seed %u n %zu k %zu", seed, n, k);
        }
        memcpy(work, v, n * sizeof *v);
        cr_assert_eq(plot_select(work, n, n * 9 / 10), sorted[n * 9 / 10]);
    }
}

/* The plot's range with selection equals the range with the sort it replaced, over random
 * sessions: best-so-far curves with plateaus, predictions near and far (prior-bound ones
 * past PLOT_PRED_FAR), gaps before the first measured trial. */
Test(plot, time_range_by_selection_equals_the_sorted_one)
{
    enum { MAXN = 500 };
    double best[MAXN], pred[MAXN];
    for (unsigned seed = 1; seed <= 400; seed++) {
        unsigned r = seed * 2246822519u | 1;
        size_t n = xorshift(&r) % MAXN;
        double b = NAN;
        for (size_t i = 0; i < n; i++) {
            if (xorshift(&r) % 3 == 0) {
                double t = 0.01 + (double)(xorshift(&r) % 500) * 0.01;
                b = isnan(b) || t < b ? t : b;
            }
            best[i] = b;
            unsigned p = xorshift(&r) % 10;
            pred[i] = p == 0   ? NAN
                      : p == 1 ? 40.0 + (double)(xorshift(&r) % 100) /* far */
                               : 0.01 + (double)(xorshift(&r) % 600) * 0.01;
        }
        double lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
        int ok1 = plot_time_range(best, pred, n, &lo1, &hi1);
        int ok2 = plot_time_range_sorted(best, pred, n, &lo2, &hi2);
        cr_assert_eq(ok1, ok2, "seed %u", seed);
        if (ok1) {
            cr_assert_eq(lo1, lo2, "seed %u n %zu: lo %g against %g", seed, n, lo1, lo2);
            cr_assert_eq(hi1, hi2, "seed %u n %zu: hi %g against %g", seed, n, hi1, hi2);
        }
    }
}
