#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/linebuf.h"

Test(linebuf, reassembles_lines_split_anywhere)
{
    const char *text = "first line\nsecond\r\n\nthird without end";
    for (size_t chunk = 1; chunk <= strlen(text); chunk++) {
        LineBuf b;
        linebuf_init(&b, 1024);
        const char *want[] = {"first line", "second", ""};
        size_t got = 0;
        for (size_t off = 0; off < strlen(text); off += chunk) {
            size_t n = strlen(text) - off < chunk ? strlen(text) - off : chunk;
            cr_assert_eq(linebuf_append(&b, text + off, n), 0);
            char *line;
            int cut;
            while ((line = linebuf_pop(&b, &cut))) {
                cr_assert(got < 3);
                cr_assert_str_eq(line, want[got], "chunk %zu line %zu", chunk, got);
                cr_assert_not(cut);
                got++;
                free(line);
            }
        }
        cr_assert_eq(got, 3);
        int cut;
        char *last = linebuf_finish(&b, &cut);
        cr_assert_str_eq(last, "third without end");
        free(last);
        cr_assert_null(linebuf_finish(&b, &cut));
        linebuf_clear(&b);
    }
}

Test(linebuf, overlong_line_is_cut_and_flagged_with_bounded_memory)
{
    LineBuf b;
    linebuf_init(&b, 100);
    char big[1000];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 50; i++)
        cr_assert_eq(linebuf_append(&b, big, sizeof big), 0);
    cr_assert(b.cap <= 4096, "memory stays bounded: cap %zu", b.cap);
    cr_assert_eq(linebuf_append(&b, "\nok\n", 4), 0);
    int cut = 0;
    char *line = linebuf_pop(&b, &cut);
    cr_assert_not_null(line);
    cr_assert(cut, "the long line is flagged");
    cr_assert(strlen(line) <= 100);
    free(line);
    line = linebuf_pop(&b, &cut);
    cr_assert_str_eq(line, "ok");
    cr_assert_not(cut, "the next line is whole again");
    free(line);
    linebuf_clear(&b);
}

/* A NUL byte ends the C string a line is handed out as: its whole length is kept, so that the
 * protocol reader can refuse the line rather than read half of it. */
Test(linebuf, the_last_lines_length_counts_a_nul_in_it)
{
    LineBuf b;
    linebuf_init(&b, 100);
    cr_assert_eq(linebuf_append(&b, "ab\0cd\nxyz\r\n", 11), 0);
    int cut;
    char *line = linebuf_pop(&b, &cut);
    cr_assert_str_eq(line, "ab");
    cr_assert_eq(b.last_len, 5);
    free(line);
    line = linebuf_pop(&b, &cut);
    cr_assert_str_eq(line, "xyz");
    cr_assert_eq(b.last_len, 3);
    free(line);
    linebuf_clear(&b);
}
