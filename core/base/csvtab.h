/* A small CSV table reader for the measured data and workloads: a header line naming the
 * columns, then rows of comma-separated cells, RFC 4180 quoting read ("a,b" is one cell, ""
 * inside quotes is one quote) on one line: a quoted cell does not span lines.
 * Cell readers name the file, the line and the column in their errors. */
#ifndef TUNEDECK_CSVTAB_H
#define TUNEDECK_CSVTAB_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct {
    char *path; /* for messages */
    size_t ncols, nrows;
    char **names;  /* ncols column names */
    char **cells;  /* nrows × ncols, row-major; each points into one buffer */
    size_t *lines; /* file line of each row (1-based), for messages */
    char *buf;
} CsvTable;

/* The most a CSV file may hold: 256 MiB. */
#define CSVTAB_FILE_MAX_BYTES ((size_t)256 << 20)

/* Reads the whole file; fails on a missing/empty file, a row with the wrong cell count, a
 * stray or unclosed quote (file, line and field), a NUL byte ("FILE:LINE: expected CSV text, found
 * a NUL byte") or more than CSVTAB_FILE_MAX_BYTES. */
CsvTable *csvtab_load(const char *path, Error *err);
/* Parses text already in memory; `name` is used in messages. */
CsvTable *csvtab_parse(const char *text, const char *name, Error *err);
void csvtab_free(CsvTable *t);
/* Column index by name, or -1 with err set ("FILE: expected a column 'x'"). */
int csvtab_col(const CsvTable *t, const char *name, Error *err);
const char *csvtab_cell(const CsvTable *t, size_t row, int col);
/* A finite number in [min, max]; errors read "FILE:LINE: field 'x': expected ...". */
int csvtab_number(const CsvTable *t, size_t row, int col, double min, double max, double *out,
                  Error *err);

#endif
