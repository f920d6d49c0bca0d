/* The log overlay (tui/logview.h). */
#include "tui/logview.h"

#include <stdio.h>

#include "tui/draw.h"
#include "tui/layout.h"

/* Line i of the log, 0 the oldest kept. */
static const char *log_line(const App *a, size_t n, size_t i)
{
    return a->log[(a->log_n - n + i) % APP_LOG_LINES];
}

size_t logview_draw(const App *a, int cols, int rows, size_t back)
{
    size_t n = a->log_n < APP_LOG_LINES ? a->log_n : APP_LOG_LINES;
    Rect r = layout_overlay(cols, rows, cols, rows);
    if (r.w < 4 || r.h < 3)
        return back;
    if (back >= n)
        back = n ? n - 1 : 0;
    /* The box leaves a column each side: cleared, so that the borders of the panes under
     * it do not show beside its own and read as a doubled frame ("┌┌ Log", "└│"). */
    draw_fill((Rect){0, r.y, cols, r.h}, ROLE_NORMAL);
    /* From the newest line shown upwards, each whole, as many as the box holds; a line
     * taller than the box shows its beginning. */
    int h = r.h - 2, used = 0;
    size_t first = n - back;
    while (first > 0) {
        int lines = draw_wrapped_lines(r.w - 2, h, log_line(a, n, first - 1));
        if (used + lines > h && used > 0)
            break;
        used += lines;
        first--;
    }
    char title[96];
    if (n == 0)
        snprintf(title, sizeof title, "Log (empty; any key closes)");
    else
        snprintf(title, sizeof title, "Log %zu-%zu/%zu (Up/Down scroll, other keys close)",
                 first + 1, n - back, n);
    Rect in = draw_box(r, title, 1);
    int y = 0;
    for (size_t i = first; i < n - back && y < in.h; i++)
        y += draw_wrapped(in.y + y, in.x, in.w, in.h - y, ROLE_NORMAL, log_line(a, n, i));
    return back;
}
