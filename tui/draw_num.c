/* Seconds and percentages as table-cell text. */
#include "tui/draw_num.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void draw_seconds(char *out, size_t cap, double s)
{
    if (!isfinite(s))
        snprintf(out, cap, "-");
    else if (s >= 100)
        snprintf(out, cap, "%.1f", s);
    else if (s >= 0.1 || s <= 0)
        snprintf(out, cap, "%.2f", s);
    else
        snprintf(out, cap, "%.2g", s);
}

int draw_seconds_need(double s)
{
    if (!isfinite(s) || s <= 0)
        return 0;
    /* draw_seconds' own: 1 from 100 s, 2 from 0.1 s, two significant digits below */
    int need = s >= 100 ? 1 : s >= 0.1 ? 2 : 1 - (int)floor(log10(s));
    return need < 1 ? 1 : need > 4 ? 4 : need;
}

int draw_seconds_fit(int need, double max, int width)
{
    int d = need > 1 ? need : 1;
    char text[64];
    while (d > 0 && snprintf(text, sizeof text, "%.*f", d, max) > width)
        d--;
    return d;
}

int draw_seconds_decimals(const double *v, size_t n, int width)
{
    int d = 1;
    double max = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]) || v[i] <= 0)
            continue;
        int need = draw_seconds_need(v[i]);
        d = need > d ? need : d;
        max = v[i] > max ? v[i] : max;
    }
    return draw_seconds_fit(d, max, width);
}

void draw_seconds_fixed(char *out, size_t cap, double s, int decimals)
{
    if (isfinite(s))
        snprintf(out, cap, "%.*f", decimals, s);
    else
        snprintf(out, cap, "-");
}

void draw_percent_signed(char *out, size_t cap, double pct)
{
    if (!isfinite(pct)) {
        snprintf(out, cap, "-");
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "%+.0f", pct);
    /* under half a percent either way rounds to a signed zero, "-0" or "+0", which reads as
     * an error with a direction; printf's own rounding decides, so 0.5 stays "0" as it prints */
    snprintf(out, cap, "%s", strcmp(text + 1, "0") == 0 ? "0" : text);
}

void draw_seconds_unit(char *out, size_t cap, double s)
{
    if (!isfinite(s))
        snprintf(out, cap, "-");
    else if (s >= 99999.5)
        snprintf(out, cap, "%.0fm", s / 60); /* past 27 h: minutes, up to ~2 years */
    else if (s >= 999.95)
        snprintf(out, cap, "%.0fs", s); /* "1000.0s" would be 7 columns */
    else if (s >= 0.01 || s <= 0) {
        char v[24];
        draw_seconds(v, sizeof v, s);
        snprintf(out, cap, "%ss", v);
    } else if (s >= 0.0001)
        snprintf(out, cap, "%.2gms", s * 1000); /* 0.0072 s would fill 6 columns unitless */
    else
        snprintf(out, cap, "<0.1ms");
}
