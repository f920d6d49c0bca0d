#include <criterion/criterion.h>

#include <stdlib.h>
#include <unistd.h>

#include "core/base/csvtab.h"

Test(csvtab, reads_header_and_rows_skipping_blank_lines)
{
    Error e;
    CsvTable *t = csvtab_parse("a,b\r\n1,2\n\n3,x\n", "t.csv", &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_assert_eq(t->ncols, 2);
    cr_assert_eq(t->nrows, 2);
    cr_assert_eq(csvtab_col(t, "b", &e), 1);
    cr_assert_str_eq(csvtab_cell(t, 1, 1), "x");
    cr_assert_eq(t->lines[1], 4);
    double v;
    cr_assert_eq(csvtab_number(t, 0, 1, 0, 10, &v, &e), 0);
    cr_assert_float_eq(v, 2, 0);
    cr_assert_eq(csvtab_number(t, 1, 1, 0, 10, &v, &e), -1);
    cr_assert(strstr(e.msg, "t.csv:4: field 'b'"), "%s", e.msg);
    csvtab_free(t);
}

Test(csvtab, rejects_wrong_field_count_with_line)
{
    Error e;
    cr_assert_null(csvtab_parse("a,b\n1,2\n3\n", "w.csv", &e));
    cr_assert(strstr(e.msg, "w.csv:3: expected 2"), "%s", e.msg);
}

Test(csvtab, rejects_empty_file_and_missing_column)
{
    Error e;
    cr_assert_null(csvtab_parse("\n\n", "e.csv", &e));
    cr_assert(strstr(e.msg, "empty file"), "%s", e.msg);
    CsvTable *t = csvtab_parse("a\n1\n", "m.csv", &e);
    cr_assert_eq(csvtab_col(t, "zz", &e), -1);
    cr_assert(strstr(e.msg, "'zz'"), "%s", e.msg);
    csvtab_free(t);
}

Test(csvtab, missing_file_is_an_error)
{
    Error e;
    cr_assert_null(csvtab_load("/nonexistent/x.csv", &e));
    cr_assert(strstr(e.msg, "cannot open"), "%s", e.msg);
}

/* A NUL byte ended the text: the rows after it were dropped and the rest of the workload ran
 * as if it were the whole, exit 0. */
Test(csvtab, a_nul_byte_is_refused_with_its_line_not_read_as_the_end)
{
    char path[] = "/tmp/tunedeck-csv-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char text[] = "a,b\n1,2\n\0003,4\n5,6\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    Error e;
    cr_assert_null(csvtab_load(path, &e));
    cr_assert(strstr(e.msg, ":3: expected CSV text, found a NUL byte"), "%s", e.msg);
    cr_assert(strstr(e.msg, path), "%s", e.msg);
    unlink(path);
}

/* Regression: a header naming a column twice ("time" pasted again) was read from its first
 * copy without a word, as a JSON key twice once was. */
Test(csvtab, a_column_named_twice_is_refused_when_it_is_read)
{
    Error e;
    CsvTable *t = csvtab_parse("name,time,size,time\nj0,0,1,30\n", "w.csv", &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_assert_eq(csvtab_col(t, "name", &e), 0);
    cr_assert_eq(csvtab_col(t, "time", &e), -1);
    cr_assert_str_eq(e.msg, "w.csv:1: column 'time' appears twice in the header (columns 2 and "
                            "4); expected each column once");
    csvtab_free(t);
}

/* RFC 4180 quoting on one line: "a,b" is one cell, "" inside quotes one quote, and the
 * quotes go (they were kept as text). */
Test(csvtab, quoted_cells_are_unquoted)
{
    Error e;
    CsvTable *t = csvtab_parse("\"a\",b\n\"x,y\",\"\"\"q\"\"\"\n\"\",2\n", "q.csv", &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_assert_eq(t->ncols, 2);
    cr_assert_str_eq(t->names[0], "a");
    cr_assert_str_eq(csvtab_cell(t, 0, 0), "x,y");
    cr_assert_str_eq(csvtab_cell(t, 0, 1), "\"q\"");
    cr_assert_str_eq(csvtab_cell(t, 1, 0), "");
    csvtab_free(t);
    cr_assert_null(csvtab_parse("a,\"b\n1,2\n", "h.csv", &e));
    cr_assert(strstr(e.msg, "h.csv:1: column 2: expected the closing quote"), "%s", e.msg);
}
