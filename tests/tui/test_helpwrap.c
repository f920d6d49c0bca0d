/* The help's line breaking (tui/helpwrap.c) over every room, for every entry of the help. */
#include <criterion/criterion.h>
#include <string.h>

#include "tui/helpwrap.h"
#include "tui/keys.h"

/* Whether bytes [start, end) of the text lie inside one row. */
static int on_one_row(const HelpWrapRow *rows, int n, int start, int end)
{
    for (int k = 0; k < n; k++)
        if (rows[k].start <= start && end <= rows[k].start + rows[k].len)
            return 1;
    return 0;
}

/* Every piece of t that ends at one of `marks` followed by a space (or at the text's end)
 * and is at most `room` wide lies inside one row. */
static void assert_whole(const char *t, const char *marks, const HelpWrapRow *rows, int n,
                         int room)
{
    int len = (int)strlen(t);
    for (int s = 0; s < len;) {
        while (s < len && t[s] == ' ')
            s++;
        int e = s;
        while (e < len && !(strchr(marks, t[e]) && t[e + 1] == ' '))
            e++;
        int end = e < len ? e + 1 : len;
        if (end - s <= room && s < len)
            cr_assert(on_one_row(rows, n, s, end), "room %d: '%.*s' is split in '%s'", room,
                      end - s, t + s, t);
        s = end;
    }
}

/* At every room from 8 columns (the narrowest the help gives) to 200, for every entry: rows
 * fit their room, lose and repeat nothing but the spaces between them, and never split an
 * item (", ") or a group ("; ") that fits a row. */
Test(helpwrap, keeps_items_and_groups_that_fit_whole_at_every_room)
{
    static HelpWrapRow rows[HELP_WRAP_MAX_ROWS];
    for (size_t i = 0; i < HELP_KEYS_COUNT; i++) {
        const char *t = HELP_KEYS[i].what;
        int len = (int)strlen(t);
        for (int first = 8; first <= 200; first++) {
            int room = first - 2;
            int n = help_wrap(t, first, room, rows, HELP_WRAP_MAX_ROWS);
            cr_assert(n >= 1 && n <= HELP_WRAP_MAX_ROWS);
            int at = 0;
            for (int k = 0; k < n; k++) {
                cr_assert_leq(rows[k].len, k == 0 ? first : room, "room %d row %d of '%s'", room,
                              k, t);
                cr_assert_geq(rows[k].start, at, "room %d: row %d repeats text of '%s'", room, k,
                              t);
                for (int c = at; c < rows[k].start; c++)
                    cr_assert_eq(t[c], ' ', "room %d: row %d lost '%c' of '%s'", room, k, t[c], t);
                at = rows[k].start + rows[k].len;
            }
            cr_assert_eq(rows[0].start, 0);
            cr_assert_eq(at, len, "room %d: '%s' ends at %d", room, t, at);
            assert_whole(t, ",;", rows, n, room);
            assert_whole(t, ";", rows, n, room);
        }
    }
}

/* Regression: at 90-94 columns (57-61 columns of text) the scheduler entry broke its Slurm
 * part, "undrain NODE" alone on the next row: a break after "; " counted only in a row's
 * second half. The Slurm part now keeps its row and the scheduler's commands share the two
 * above it evenly, as at 80 columns. */
Test(helpwrap, scheduler_entry_keeps_its_slurm_part_on_one_row)
{
    const char *t = "  scheduler: pin JOB GPUS, pause/resume JOB, policy NAME, (un)drain NODE; "
                    "Slurm y/n: drain NODE [REASON], undrain NODE";
    static const char *const want[] = {"  scheduler: pin JOB GPUS, pause/resume JOB,",
                                       "policy NAME, (un)drain NODE;",
                                       "Slurm y/n: drain NODE [REASON], undrain NODE"};
    for (int first = 47; first <= 61; first++) {
        HelpWrapRow rows[8];
        int n = help_wrap(t, first, first - 2, rows, 8);
        cr_assert_eq(n, 3, "%d columns: %d rows", first, n);
        for (int k = 0; k < 3; k++)
            cr_assert(rows[k].len == (int)strlen(want[k]) &&
                          strncmp(t + rows[k].start, want[k], strlen(want[k])) == 0,
                      "%d columns, row %d: '%.*s', expected '%s'", first, k, rows[k].len,
                      t + rows[k].start, want[k]);
    }
}

/* A list that needs three rows shares them evenly: its last item is not left alone under two
 * full rows (the `:` entry's "theme NAME;" at 89-93 columns). */
Test(helpwrap, a_long_list_shares_its_rows_evenly)
{
    const char *t = "aa, bb, cc, dd, ee, ff, gg;";
    HelpWrapRow rows[8];
    int n = help_wrap(t, 11, 11, rows, 8); /* greedily "aa, bb, cc," "dd, ee, ff," "gg;" */
    cr_assert_eq(n, 3);
    for (int k = 0; k < n; k++)
        cr_assert_geq(rows[k].len, (int)strlen("aa, bb,"), "row %d: '%.*s'", k, rows[k].len,
                      t + rows[k].start);
}

/* A group that fits a row goes to the next row whole rather than break, even when breaking
 * it would fill the row above. */
Test(helpwrap, a_group_that_fits_a_row_is_never_split)
{
    const char *t = "alpha beta gamma; one, two, three";
    HelpWrapRow rows[8];
    int n = help_wrap(t, 26, 26, rows, 8);
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0].len, (int)strlen("alpha beta gamma;"));
    cr_assert_str_eq(t + rows[1].start, "one, two, three");
}

/* An item wider than a row breaks between its words, each row as full as it goes; a word
 * wider than a row, at the room. */
Test(helpwrap, an_item_wider_than_a_row_breaks_between_words)
{
    HelpWrapRow rows[8];
    int n = help_wrap("select a trial", 8, 8, rows, 8); /* fills its rows, as prose wraps */
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0].len, (int)strlen("select a"));
    cr_assert_eq(rows[1].len, (int)strlen("trial"));
    n = help_wrap("abcdefghij", 4, 4, rows, 8);
    cr_assert_eq(n, 3);
    cr_assert_eq(rows[2].start, 8);
    cr_assert_eq(help_wrap("", 10, 8, rows, 8), 1);
    cr_assert_eq(rows[0].len, 0);
}

/* A text longer than the atoms help_wrap keeps (a 2000-byte word at 1 column a row): it wraps
 * what it keeps without reading past them. Regression: a last kept atom inside a word was
 * compared with the atom after it, one past the array (AddressSanitizer, the sanitize suite). */
Test(helpwrap, a_text_past_its_bound_reads_no_atom_past_it)
{
    static char word[2001];
    memset(word, 'x', sizeof word - 1);
    HelpWrapRow rows[HELP_WRAP_MAX_ROWS];
    int n = help_wrap(word, 1, 1, rows, HELP_WRAP_MAX_ROWS);
    cr_assert(n >= 1 && n <= HELP_WRAP_MAX_ROWS, "%d rows", n);
    for (int k = 0; k < n && k < HELP_WRAP_MAX_ROWS; k++)
        cr_assert(rows[k].len <= 1, "row %d is %d wide", k, rows[k].len);
}
