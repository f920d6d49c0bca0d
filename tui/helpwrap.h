/* How the help overlay wraps one entry's text: a pure function of the text and the room its
 * rows have, so every width can be checked without a screen. */
#ifndef TUNEDECK_HELPWRAP_H
#define TUNEDECK_HELPWRAP_H

/* One row: `len` bytes of the text from byte `start` (no spaces at either end, but the
 * first row keeps the text's leading ones: they indent it). */
typedef struct {
    int start;
    int len;
} HelpWrapRow;

/* The most rows one text takes (a text cut to 1-column rows of under 256 bytes). */
enum { HELP_WRAP_MAX_ROWS = 256 };

/* Wraps `text` into rows of at most `first_room` columns for its first row and `room` for the
 * rest (the rows that hang under it), 1 column a byte (the help is ASCII). The text is a list:
 * items end at ", ", groups ("scheduler: pin JOB GPUS, ...;") at "; " and at its end. A row
 * ends between items, never inside an item that fits a row nor inside a group that fits one;
 * among those layouts, the one with the fewest rows, then the most even (the least sum of
 * squared blank columns left on its rows, the last too: a list's
 * last row is not left with one item under full ones). An item wider than a row breaks
 * between its words, filling each row it breaks (as prose wraps), a word wider than a row at
 * the room. Fills at most `max` rows and
 * returns how many the text takes (at most HELP_WRAP_MAX_ROWS). */
int help_wrap(const char *text, int first_room, int room, HelpWrapRow *rows, int max);

#endif
