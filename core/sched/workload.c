/* Reading a workload CSV into job specs (see workload.h). */
#include "core/sched/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/csvtab.h"
#include "core/base/termsafe.h"

void workload_free(SchedJobSpec *specs, size_t n)
{
    if (!specs)
        return;
    for (size_t i = 0; i < n; i++) {
        free((char *)specs[i].name);
        free((char *)specs[i].model);
    }
    free(specs);
}

/* A job's name is printed by every report and the console: nothing in it may drive a
 * terminal. */
/* The longest job name the checks below read whole (live mode asks less of it). */
#define NAME_MAX_BYTES 511

static int name_printable(const char *name)
{
    char safe[4 * NAME_MAX_BYTES + 1];
    termsafe(safe, sizeof safe, name);
    return strcmp(safe, name) == 0;
}

typedef struct {
    const char *name;
    size_t row;
} NamedRow;

static int named_row_cmp(const void *pa, const void *pb)
{
    const NamedRow *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->row > b->row) - (a->row < b->row);
}

/* first[row]: the first row with row's name (row itself when it is the first), found by
 * sorting (a pairwise search took half a minute on a 100,000-job trace); NULL when out of
 * memory. */
static size_t *first_rows_named(const CsvTable *t, int col)
{
    NamedRow *order = malloc(t->nrows * sizeof *order);
    size_t *first = malloc(t->nrows * sizeof *first);
    if (!order || !first) {
        free(order);
        free(first);
        return NULL;
    }
    for (size_t i = 0; i < t->nrows; i++)
        order[i] = (NamedRow){csvtab_cell(t, i, col), i};
    qsort(order, t->nrows, sizeof *order, named_row_cmp);
    for (size_t k = 0; k < t->nrows; k++)
        first[order[k].row] = k > 0 && strcmp(order[k - 1].name, order[k].name) == 0
                                  ? first[order[k - 1].row]
                                  : order[k].row;
    free(order);
    return first;
}

static int from_table(const CsvTable *t, const Catalogue *cat, SchedJobSpec **out, size_t *n,
                      Error *err)
{
    int cn = csvtab_col(t, "name", err), ct = csvtab_col(t, "time", err);
    int ca = csvtab_col(t, "application", err), cr = csvtab_col(t, "num_replicas", err);
    int cb = csvtab_col(t, "batch_size", err);
    if (cn < 0 || ct < 0 || ca < 0 || cr < 0 || cb < 0)
        return -1;
    /* A column it does not read (a GPU type, a duration) changed nothing, with nothing said:
     * the workload run was not the one the operator wrote. */
    for (size_t c = 0; c < t->ncols; c++)
        if ((int)c != cn && (int)c != ct && (int)c != ca && (int)c != cr && (int)c != cb)
            return error_set(err,
                             "%s:1: column %zu '%s': expected only the columns " WORKLOAD_COLUMNS
                             " (a column tunedeck does not read would be ignored)",
                             t->path, c + 1, t->names[c]);
    if (t->nrows == 0)
        return error_set(err, "%s: expected at least one job row after the header, found none",
                         t->path);
    SchedJobSpec *s = calloc(t->nrows, sizeof *s);
    size_t *first = first_rows_named(t, cn);
    if (!s || !first) {
        free(s);
        free(first);
        return error_no_memory(err, "%s", t->path);
    }
    double prev = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        double time, reps, bs;
        size_t dup = first[i];
        const char *name = csvtab_cell(t, i, cn), *app = csvtab_cell(t, i, ca);
        int rc = 0;
        if (!*name)
            rc = error_set(err, "%s:%zu: field 'name': expected a job name, found ''", t->path,
                           t->lines[i]);
        else if (strlen(name) > NAME_MAX_BYTES) /* it was called unprintable */
            rc = error_set(err,
                           "%s:%zu: field 'name': expected a job name of at most %d bytes, "
                           "found %zu bytes",
                           t->path, t->lines[i], NAME_MAX_BYTES, strlen(name));
        else if (!name_printable(name))
            rc = error_set(err,
                           "%s:%zu: field 'name': expected printable text (no control "
                           "characters or invalid UTF-8), found '%s'",
                           t->path, t->lines[i], name);
        else if (dup < i)
            rc = error_set(err,
                           "%s:%zu: field 'name': job '%s' appears twice (first at line %zu): "
                           "each job has its own folder and checkpoint",
                           t->path, t->lines[i], name, t->lines[dup]);
        else if (csvtab_number(t, i, ct, 0, 1e12, &time, err) < 0)
            rc = -1;
        else if (time < prev)
            rc = error_set(err,
                           "%s:%zu: field 'time': expected rows sorted by time, found %g "
                           "after %g",
                           t->path, t->lines[i], time, prev);
        else if (!catalogue_find(cat, app)) {
            char names[256];
            catalogue_names(cat, names, sizeof names);
            rc = error_set(err, "%s:%zu: field 'application': expected one of %s, found '%s'",
                           t->path, t->lines[i], names, app);
        } else if (csvtab_number(t, i, cr, 1, 1e6, &reps, err) < 0 ||
                   csvtab_number(t, i, cb, 1, 1e9, &bs, err) < 0)
            rc = -1;
        else if (reps != floor(reps) || bs != floor(bs))
            rc = error_set(err,
                           "%s:%zu: fields 'num_replicas'/'batch_size': expected whole "
                           "numbers, found %s/%s",
                           t->path, t->lines[i], csvtab_cell(t, i, cr), csvtab_cell(t, i, cb));
        if (rc < 0) {
            workload_free(s, i);
            free(first);
            return -1;
        }
        prev = time;
        s[i] = (SchedJobSpec){strdup(name), strdup(app), time, (int)reps, (int)bs};
    }
    free(first);
    *out = s;
    *n = t->nrows;
    return 0;
}

int workload_parse(const char *text, const char *name, const Catalogue *cat, SchedJobSpec **out,
                   size_t *n, Error *err)
{
    CsvTable *t = csvtab_parse(text, name, err);
    if (!t)
        return -1;
    int rc = from_table(t, cat, out, n, err);
    csvtab_free(t);
    return rc;
}

int workload_load(const char *path, const Catalogue *cat, SchedJobSpec **out, size_t *n, Error *err)
{
    CsvTable *t = csvtab_load(path, err);
    if (!t)
        return -1;
    int rc = from_table(t, cat, out, n, err);
    csvtab_free(t);
    return rc;
}
