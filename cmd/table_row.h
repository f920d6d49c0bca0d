/* One row of a table a command prints: printf-formatted, without the trailing spaces that
 * padding an empty last column (a node with no reason, a session with no note) leaves,
 * which a diff or `grep ' $'` of the output trips over. */
#ifndef TUNEDECK_TABLE_ROW_H
#define TUNEDECK_TABLE_ROW_H

#include <stdio.h>

/* FMT's row, trailing blanks (and FMT's own final '\n', if any) dropped, then one newline,
 * to OUT; a '\n' inside (a blank line before a table) is kept. Returns what fprintf does. */
int table_row(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
