/* Table rows without trailing blanks (see table_row.h). */
#include "cmd/table_row.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int table_row(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *row = NULL;
    int n = vasprintf(&row, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t len = (size_t)n;
    while (len > 0 && (row[len - 1] == ' ' || row[len - 1] == '\t' || row[len - 1] == '\n'))
        len--;
    int rc = fprintf(out, "%.*s\n", (int)len, row);
    free(row);
    return rc;
}
