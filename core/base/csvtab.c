/* CSV tables with a header line: the reader behind traces, validation curves and workloads. */
#include "core/base/csvtab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/readall.h"

void csvtab_free(CsvTable *t)
{
    if (!t)
        return;
    free(t->path);
    free(t->names);
    free(t->cells);
    free(t->lines);
    free(t->buf);
    free(t);
}

/* Which field of a line a message names: the header's column name when there is one. */
static void field_label(char *out, size_t cap, char **names, size_t ncols, size_t i)
{
    if (names && i < ncols)
        snprintf(out, cap, "field '%s'", names[i]);
    else
        snprintf(out, cap, "column %zu", i + 1);
}

/* Splits one line into its fields in place, with RFC 4180 quoting: "a,b" is one field, a
 * quote inside a quoted field is doubled ("say ""hi""") and the quotes around it go. They
 * used to be read as text: the job '"a"' ran with its quotes, and "a,b" was two fields. A
 * quoted field ends on its line (no field of ours holds a line break: a job name is
 * printable). Stores at most max fields; returns how many there are, or -1 with err naming
 * file, line and field (names: the header's, NULL while reading it). */
static long split(char *line, char **out, size_t max, char **names, const char *path, size_t lineno,
                  Error *err)
{
    size_t n = 0;
    char *r = line, *w = line, what[300];
    for (;;) {
        char *start = w;
        if (*r == '"') {
            for (r++;; r++) {
                if (!*r) {
                    field_label(what, sizeof what, names, max, n);
                    return error_set(err,
                                     "%s:%zu: %s: expected the closing quote of a quoted "
                                     "field on its line, found the line's end",
                                     path, lineno, what);
                }
                if (*r == '"' && r[1] != '"')
                    break;
                r += *r == '"'; /* "" is one quote */
                *w++ = *r;
            }
            r++;
            if (*r && *r != ',') {
                field_label(what, sizeof what, names, max, n);
                return error_set(err,
                                 "%s:%zu: %s: expected a comma or the line's end after "
                                 "the closing quote, found '%c'",
                                 path, lineno, what, *r);
            }
        } else {
            for (; *r && *r != ','; r++) {
                if (*r == '"') {
                    field_label(what, sizeof what, names, max, n);
                    return error_set(err,
                                     "%s:%zu: %s: expected a double quote only around a "
                                     "whole field (\"a,b\", one inside it doubled: "
                                     "\"say \"\"hi\"\"\"), found one inside it",
                                     path, lineno, what);
                }
                *w++ = *r;
            }
        }
        int more = *r == ',';
        *w++ = 0; /* w <= r: the comma or the end is read already */
        if (n < max)
            out[n] = start;
        n++;
        if (!more)
            return (long)n;
        r++;
    }
}

/* How many fields a line holds; -1 with err set for bad quoting. Splits a scratch copy. */
static long count_fields(const char *line, const char *path, size_t lineno, Error *err)
{
    char *copy = strdup(line);
    if (!copy)
        return error_no_memory(err, "%s", path);
    long n = split(copy, NULL, 0, NULL, path, lineno, err);
    free(copy);
    return n;
}

static void trim_eol(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = 0;
}

CsvTable *csvtab_parse(const char *text, const char *name, Error *err)
{
    CsvTable *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(name)) || !(t->buf = strdup(text))) {
        csvtab_free(t);
        error_no_memory(err, "%s", name);
        return NULL;
    }
    size_t nlines = 1;
    for (const char *c = text; *c; c++)
        nlines += *c == '\n';
    char *save = NULL, *line = t->buf;
    size_t lineno = 0;
    /* Walk lines by hand so blank lines keep their numbers. */
    while (line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        trim_eol(line);
        if (*line) {
            if (!t->names) {
                long ncols = count_fields(line, name, lineno, err);
                if (ncols < 0) {
                    csvtab_free(t);
                    return NULL;
                }
                t->ncols = (size_t)ncols;
                t->names = calloc(t->ncols, sizeof *t->names);
                t->cells = calloc(nlines * t->ncols, sizeof *t->cells);
                t->lines = calloc(nlines, sizeof *t->lines);
                if (!t->names || !t->cells || !t->lines) {
                    csvtab_free(t);
                    error_no_memory(err, "%s", name);
                    return NULL;
                }
                split(line, t->names, t->ncols, NULL, name, lineno, err); /* counted: it splits */
            } else {
                char **row = t->cells + t->nrows * t->ncols;
                long n = split(line, row, t->ncols, t->names, name, lineno, err);
                if (n < 0) {
                    csvtab_free(t);
                    return NULL;
                }
                if ((size_t)n > t->ncols) { /* which field has no column */
                    error_set(err,
                              "%s:%zu: column %zu: expected %zu comma-separated fields (the "
                              "header's), found %ld",
                              name, lineno, t->ncols + 1, t->ncols, n);
                    csvtab_free(t);
                    return NULL;
                }
                if ((size_t)n != t->ncols) {
                    error_set(err,
                              "%s:%zu: expected %zu comma-separated fields (the header's), "
                              "found %ld",
                              name, lineno, t->ncols, n);
                    csvtab_free(t);
                    return NULL;
                }
                t->lines[t->nrows++] = lineno;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    (void)save;
    if (!t->names) {
        error_set(err, "%s: empty file, expected a header line", name);
        csvtab_free(t);
        return NULL;
    }
    return t;
}

CsvTable *csvtab_load(const char *path, Error *err)
{
    size_t len = 0;
    /* Bounded like a JSON file (core/base/jfield.h): a wrong huge file is refused, not read
     * until memory runs out. */
    char *text = readall_file(path, CSVTAB_FILE_MAX_BYTES, &len, err);
    if (!text)
        return NULL;
    /* A NUL ended the text there: every row after it was dropped without a word. */
    if (strlen(text) != len) {
        size_t line = 1;
        for (const char *c = text; *c; c++)
            line += *c == '\n';
        error_set(err, "%s:%zu: expected CSV text, found a NUL byte", path, line);
        free(text);
        return NULL;
    }
    CsvTable *t = csvtab_parse(text, path, err);
    free(text);
    return t;
}

int csvtab_col(const CsvTable *t, const char *name, Error *err)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (strcmp(t->names[i], name) != 0)
            continue;
        /* twice: which copy was meant? (as a JSON key twice, never read from one) */
        for (size_t j = i + 1; j < t->ncols; j++)
            if (strcmp(t->names[j], name) == 0)
                return error_set(err,
                                 "%s:1: column '%s' appears twice in the header (columns %zu and "
                                 "%zu); expected each column once",
                                 t->path, name, i + 1, j + 1);
        return (int)i;
    }
    return error_set(err, "%s:1: expected a column '%s' in the header", t->path, name);
}

const char *csvtab_cell(const CsvTable *t, size_t row, int col)
{
    return t->cells[row * t->ncols + (size_t)col];
}

int csvtab_number(const CsvTable *t, size_t row, int col, double min, double max, double *out,
                  Error *err)
{
    const char *s = csvtab_cell(t, row, col);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
        return error_set(err, "%s:%zu: field '%s': expected a number in [%g, %g], found '%s'",
                         t->path, t->lines[row], t->names[col], min, max, s);
    *out = v;
    return 0;
}
