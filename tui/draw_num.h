/* Seconds and percentages as the text of a table cell (pure: no curses): one value, a
 * column's common count of decimals, a narrow cell's value with its unit. */
#ifndef TUNEDECK_DRAW_NUM_H
#define TUNEDECK_DRAW_NUM_H

#include <stddef.h>

/* A time in seconds for a table cell: "-" when unknown, 1 decimal from 100 s, 2 from 0.1 s,
 * 2 significant digits below (a 14 ms trial is 0.014, not 0.01). */
void draw_seconds(char *out, size_t cap, double s);
/* The decimals one column of seconds shows so that every value of it has them alike and
 * lines up: the most draw_seconds would give any of its values (1 from 100 s, 2 from 0.1 s,
 * two significant digits below; at most 4), fewer when its largest would then be wider than
 * `width`. */
int draw_seconds_decimals(const double *v, size_t n, int width);
/* Its two halves, for a column kept as rows come (tui/trials.c): the decimals one value
 * needs (0 for one not finite or not above 0), and the decimals of a column whose values
 * need at most `need` and whose largest is `max`. */
int draw_seconds_need(double s);
int draw_seconds_fit(int need, double max, int width);
/* s with `decimals` decimals ("-" when not finite). */
void draw_seconds_fixed(char *out, size_t cap, double s, int decimals);
/* The same with its unit, for a narrow cell that has no column head to name it: "5.10s",
 * "0.014s", below 10 ms in milliseconds ("7.2ms", "0.72ms"), from 1000 s whole seconds
 * ("1000s") and past 27 h minutes ("3333m"): at most 6 columns, down to 0.1 ms ("<0.1ms"
 * below); "-" when unknown. */
void draw_seconds_unit(char *out, size_t cap, double s);
/* A percentage with its sign and no decimals ("+25", "-3"), "0" for anything that rounds to
 * zero (never "-0" or "+0"), "-" when not finite. */
void draw_percent_signed(char *out, size_t cap, double pct);

#endif
