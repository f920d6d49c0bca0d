#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/table_row.h"

static char *row(const char *last)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    table_row(f, "%-6s %-8s %s", "node", "", last);
    table_row(f, "\n%-4s %s\n", "job", "");
    fclose(f);
    return text;
}

/* Regression: `hosts --slurm` padded a node's empty reason column into trailing spaces. */
Test(table_row, an_empty_last_column_leaves_no_trailing_blanks)
{
    char *text = row("");
    cr_assert_str_eq(text, "node\n\njob\n");
    free(text);
}

Test(table_row, a_full_row_is_printed_as_formatted)
{
    char *text = row("drained by admin");
    cr_assert_str_eq(text, "node            drained by admin\n\njob\n");
    free(text);
}
