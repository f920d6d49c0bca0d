/* Drawing primitives on the curses screen, clipped to a rectangle and styled by role:
 * boxes with titles, text, fractional bars, range bars. Widths count terminal columns. */
#ifndef TUNEDECK_DRAW_H
#define TUNEDECK_DRAW_H

#include <wchar.h>

#include "tui/layout.h"
#include "tui/theme.h"

/* Call once after curses starts: picks Unicode or ASCII glyphs from the locale. */
void draw_init(int force_ascii);
int draw_unicode(void);

/* A bordered box with a title; returns the inner rectangle. */
Rect draw_box(Rect r, const char *title, int focused);
void draw_fill(Rect r, Role role);
/* An overlay's box r and a blank column and row around it on a cols x rows screen (not over
 * the tab bar or the status line), so that the panes under it never touch its border and
 * read as part of it ("┌┌ Keys", "└│"). */
void draw_fill_around(Rect r, int cols, int rows);
/* Text at (x, y) cut to `w` columns, ending in an ellipsis ("~" in ASCII) when more than
 * spaces is cut; returns columns written. */
int draw_text(int y, int x, int w, Role role, const char *text);
int draw_textf(int y, int x, int w, Role role, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A name (a machine, host, job) fitted to `w` terminal columns in out: whole when it fits,
 * else its head and tail around an ellipsis ("gpu-n…row-b-0"), since a cluster's names
 * differ at the end; never cut inside a character or between one and its combining marks.
 * Returns out; cap should be at least w * 4 + 4 bytes. */
const char *draw_fit_name(char *out, size_t cap, const char *name, int w);
/* The same, padded with spaces to exactly `w` columns: a table cell. printf's "%-12s" pads
 * to 12 bytes, which a name in another script (3 bytes, 2 columns a character) or with
 * combining marks would leave short, pulling the next columns left. */
const char *draw_fit_cell(char *out, size_t cap, const char *name, int w);
/* The tail of "a | b | c" that fits in w columns, whole fields dropped from the left
 * ("b | c", then "c"); when the last field alone is too wide, it without its leading space,
 * or "" (never part of a word). Returns a pointer into text. */
const char *draw_fit_tail(const char *text, int w);
/* The end of text that fits in w columns, from a whole character (never a combining mark
 * cut from its letter). Returns a pointer into text. */
const char *draw_tail_cols(const char *text, int w);
/* Text wrapped at spaces over at most max_lines rows; returns the rows used. */
int draw_wrapped(int y, int x, int w, int max_lines, Role role, const char *text);
/* The rows draw_wrapped would use, drawing nothing. */
int draw_wrapped_lines(int w, int max_lines, const char *text);
/* The columns text takes on the terminal. */
int draw_width(const char *text);
/* A note (why a job waits, why a trial failed) is read whole: where it does not fit in the
 * `room` columns its row leaves, it goes under the row, `indent` columns in from the row's
 * x, wrapped over at most max_lines of a w-column pane. draw_note_lines: the rows it takes
 * there (0: it fits on its row); draw_note_below: draws it there, after a "↳" ("> " in
 * ASCII) two columns before the text, over `lines` rows; returns the rows used. */
int draw_note_lines(const char *note, int room, int w, int indent, int max_lines);
int draw_note_below(int y, int x, int w, int indent, int lines, Role role, const char *note);
/* A bar of `w` columns filled to frac (0..1) with eighth-block precision. */
void draw_bar(int y, int x, int w, double frac, Role role);
/* mean with its p10-p90 spread, each as a fraction of the bar. */
void draw_range_bar(int y, int x, int w, double lo, double mean, double hi, Role mean_role,
                    Role spread_role);
void draw_wchar(int y, int x, wchar_t c, Role role);

#endif
