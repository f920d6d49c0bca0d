/* Drawing helpers: most need no screen; wrapping is read back from a real one. */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/screen.h"
#include "tui/draw.h"

static const char *const BAR = " B:googlenet | bespoke | 15/60 | best 5.13 s | tuning ";

Test(draw, fit_tail_keeps_text_that_fits)
{
    cr_assert_str_eq(draw_fit_tail(BAR, (int)strlen(BAR)), BAR);
    cr_assert_str_eq(draw_fit_tail(BAR, 200), BAR);
}

Test(draw, fit_tail_drops_whole_fields_from_the_left_never_part_of_one)
{
    /* The tab bar once showed ":googlenet | ..." at 80 columns and "ke | 60/60 | ..." at 60. */
    cr_assert_str_eq(draw_fit_tail(BAR, (int)strlen(BAR) - 1),
                     " bespoke | 15/60 | best 5.13 s | tuning ");
    cr_assert_str_eq(draw_fit_tail(BAR, 32), " 15/60 | best 5.13 s | tuning ");
    cr_assert_str_eq(draw_fit_tail(BAR, 10), " tuning ");
}

Test(draw, fit_tail_shows_the_last_field_whole_or_not_at_all)
{
    /* "g" of "tuning" showed at 30 columns, a fragment that reads as a word of its own */
    cr_assert_str_eq(draw_fit_tail(BAR, 7), "tuning ", "the margin before it goes first");
    cr_assert_str_eq(draw_fit_tail(BAR, 6), "");
    cr_assert_str_eq(draw_fit_tail(BAR, 5), "");
    cr_assert_str_eq(draw_fit_tail(BAR, 1), "");
    cr_assert_str_eq(draw_fit_tail(BAR, 0), "");
    cr_assert_str_eq(draw_fit_tail(BAR, -3), "");
}

Test(draw, fit_tail_never_returns_more_than_the_width)
{
    for (int w = 0; w <= (int)strlen(BAR) + 1; w++)
        cr_assert_leq(strlen(draw_fit_tail(BAR, w)), (size_t)w, "w %d", w);
}

Test(draw, fit_name_keeps_head_and_tail_around_an_ellipsis)
{
    draw_init(1); /* ASCII: "~" */
    char out[64];
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "node-7", 10), "node-7");
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "resnet110-12", 12), "resnet110-12");
    /* the tail, where a cluster's names differ, gets the larger half */
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "gpu-node-rack-17-row-b-0", 10), "gpu-~w-b-0");
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "gpu-node-rack-17-row-b-0", 11), "gpu-n~w-b-0");
    for (int w = 3; w < 30; w++)
        cr_assert_eq(strlen(draw_fit_name(out, sizeof out, "gpu-node-rack-17-row-b-0", w)),
                     (size_t)(w < 24 ? w : 24), "w %d", w);
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "abcdef", 2), "ab");
    cr_assert_str_eq(draw_fit_name(out, sizeof out, "abcdef", 0), "");
}

Test(draw, fit_name_never_cuts_a_utf8_sequence)
{
    setlocale(LC_ALL, "C.UTF-8");
    draw_init(1);
    char out[64];
    /* "é" is two bytes and one column: the name is fitted by columns, whole characters */
    draw_fit_name(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9-tail", 7);
    cr_assert_eq(strncmp(out, "\xc3\xa9", 2), 0, "%s", out);
    cr_assert_str_eq(out, "\xc3\xa9\xc3\xa9\xc3\xa9~ail");
}

/* A job named in Japanese, or with combining accents, took fewer columns than its cell: the
 * name was cut and padded by bytes ("%-12s"), and the job list's gpus and state columns
 * moved left on its row. */
Test(draw, fit_name_and_cell_count_columns_of_wide_and_combining_characters)
{
    setlocale(LC_ALL, "C.UTF-8");
    draw_init(1);
    char out[128];
    /* 画像認識モデル大規模 (10 wide characters, 20 columns) */
    const char *cjk = "tune:\xe7\x94\xbb\xe5\x83\x8f\xe8\xaa\x8d\xe8\xad\x98\xe3\x83\xa2"
                      "\xe3\x83\x87\xe3\x83\xab\xe5\xa4\xa7\xe8\xa6\x8f\xe6\xa8\xa1";
    /* e + two combining acute accents, three times, then -x */
    const char *marks = "e\xcc\x81\xcc\x81" "e\xcc\x81\xcc\x81" "e\xcc\x81\xcc\x81-combining-x";
    for (int w = 1; w <= 30; w++) {
        cr_assert_leq(draw_width(draw_fit_name(out, sizeof out, cjk, w)), w, "w %d: %s", w, out);
        cr_assert_eq(draw_width(draw_fit_cell(out, sizeof out, cjk, w)), w, "w %d: %s", w, out);
        cr_assert_eq(draw_width(draw_fit_cell(out, sizeof out, marks, w)), w, "w %d: %s", w, out);
        /* a cut keeps every mark with its letter: none starts the tail */
        draw_fit_name(out, sizeof out, marks, w);
        const char *cut = strchr(out, '~');
        cr_assert(!cut || strncmp(cut + 1, "\xcc\x81", 2) != 0, "w %d: %s", w, out);
    }
    /* "tune:" and the wide tail around the ellipsis; in 11 columns a wide character that
     * does not fit leaves one, which the cell pads */
    cr_assert_str_eq(draw_fit_name(out, sizeof out, cjk, 12),
                     "tune:~\xe5\xa4\xa7\xe8\xa6\x8f\xe6\xa8\xa1");
    cr_assert_str_eq(draw_fit_name(out, sizeof out, cjk, 11), "tune:~\xe8\xa6\x8f\xe6\xa8\xa1");
    cr_assert_str_eq(draw_fit_cell(out, sizeof out, cjk, 11), "tune:~\xe8\xa6\x8f\xe6\xa8\xa1 ");
    cr_assert_str_eq(draw_fit_name(out, sizeof out, marks, 6),
                     "e\xcc\x81\xcc\x81" "e\xcc\x81\xcc\x81~g-x");
    cr_assert_str_eq(draw_fit_cell(out, sizeof out, "node-7", 8), "node-7  ");
}

/* Under LANG=C a UTF-8 name is no text in the locale: each of its characters is one '?'
 * column, and the rest of the text still shows (a job row once drew nothing at all). */
Test(draw, text_the_locale_cannot_show_keeps_its_columns_as_question_marks)
{
    setlocale(LC_ALL, "C");
    draw_init(0);
    cr_assert_eq(draw_width("ab\xe7\x94\xbb\xe5\x83\x8f" "cd"), 6);
    char out[64];
    cr_assert_eq(draw_width(draw_fit_cell(out, sizeof out, "\xe7\x94\xbb\xe5\x83\x8f-1", 12)), 12);
    /* the top bar: fields dropped by columns */
    cr_assert_str_eq(draw_fit_tail(" \xe6\x9d\xb1\xe4\xba\xac | tuning ", 13),
                     " \xe6\x9d\xb1\xe4\xba\xac | tuning ");
    setlocale(LC_ALL, "C.UTF-8");
    draw_init(0);
    cr_assert_str_eq(draw_fit_tail(" \xe6\x9d\xb1\xe4\xba\xac | tuning ", 13), " tuning ");
}

/* Under LANG=C an ill-formed UTF-8 stretch is one '?' per maximal subpart, as utf8.h reads
 * it and jsonprint writes U+FFFD. Regression: draw.c's own decoder took a lead byte and its
 * continuation bytes whole, so an overlong '/' (E0 80 AF) was one '?' of one column, where a
 * UTF-8 locale shows three; and a sequence cut short was one '?' a byte. */
Test(draw, an_ill_formed_sequence_under_lang_c_is_one_question_mark_per_maximal_subpart)
{
    setlocale(LC_ALL, "C");
    draw_init(0);
    cr_assert_eq(draw_width("a\xe0\x80\xafz"), 5, "an overlong '/': E0, 80, AF");
    cr_assert_eq(draw_width("a\xed\xa0\x80z"), 5, "an encoded surrogate: ED, A0, 80");
    cr_assert_eq(draw_width("a\xf4\x90\x80\x80z"), 6, "past U+10FFFF: F4, 90, 80, 80");
    cr_assert_eq(draw_width("a\xe2\x82z"), 3, "a euro sign cut short: E2 82 is one");
    cr_assert_eq(draw_width("a\xe2\x82\xacz"), 3, "the whole euro sign is one, as before");
    setlocale(LC_ALL, "C.UTF-8");
    draw_init(0);
    cr_assert_eq(draw_width("a\xe0\x80\xafz"), 5, "a UTF-8 locale: the same three");
    cr_assert_eq(draw_width("a\xe2\x82z"), 3, "a UTF-8 locale: E2 82 is one too");
}

/* The row on screen from column 0, up to its first blank run of `w` or the line's end. */
static char *drawn_row(int row)
{
    char *text = fixture_screen_text();
    char *line = text;
    for (int i = 0; i < row && strchr(line, '\n'); i++)
        line = strchr(line, '\n') + 1;
    char *end = strchr(line, '\n');
    if (end)
        *end = 0;
    for (size_t n = strlen(line); n > 0 && line[n - 1] == ' '; n--)
        line[n - 1] = 0;
    char *out = strdup(line);
    free(text);
    return out;
}

/* Regression: draw_text showed a byte that is not UTF-8 as \xHH (four columns, termsafe's
 * form) where draw_width, draw_fit_name and draw_fit_cell count one, so a host or job name
 * with such a byte, fitted to its cell, ran four columns over it per byte and, cut with an
 * ellipsis, lost its end. Drawn and measured alike now: one '?' per maximal subpart. */
Test(draw, an_ill_formed_name_draws_in_the_columns_its_width_counts)
{
    fixture_screen_open(6, 40);
    draw_init(0);
    const char *name = "ab\xff" "cd\xe2\x82" "-1";
    int w = draw_width(name);
    cr_assert_eq(w, 8);
    cr_assert_eq(draw_text(0, 0, w, ROLE_NORMAL, name), w, "drawn in its width, not cut");
    char out[64];
    cr_assert_eq(draw_text(1, 0, 40, ROLE_NORMAL, draw_fit_cell(out, sizeof out, name, 5)), 5);
    char *row0 = drawn_row(0), *row1 = drawn_row(1);
    fixture_screen_close();
    cr_assert_str_eq(row0, "ab?cd?-1");
    cr_assert_eq(draw_width(row1), 5, "the fitted cell drew '%s'", row1);
    free(row0);
    free(row1);
}

/* The same for controls, which draw_text shows as termsafe writes them: ESC as ^[ (two
 * columns), U+0085 as <U+0085> (eight); their width counted one each before. */
Test(draw, a_control_in_a_name_is_counted_as_it_is_drawn)
{
    fixture_screen_open(6, 40);
    draw_init(0);
    const char *name = "a\x1b" "b\xc2\x85" "c";
    int w = draw_width(name);
    cr_assert_eq(w, 1 + 2 + 1 + 8 + 1);
    cr_assert_eq(draw_text(0, 0, 40, ROLE_NORMAL, name), w);
    char *row0 = drawn_row(0);
    fixture_screen_close();
    cr_assert_str_eq(row0, "a^[b<U+0085>c");
    free(row0);
}

Test(draw, width_counts_terminal_columns_not_bytes)
{
    setlocale(LC_ALL, "C.UTF-8");
    cr_assert_eq(draw_width("plain"), 5);
    cr_assert_eq(draw_width("\xc3\xa9t\xc3\xa9"), 3);        /* "été": 5 bytes */
    cr_assert_eq(draw_width("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* two wide CJK characters */
    cr_assert_eq(draw_width("a\xffz"), 3);                   /* a stray byte takes one */
}

/* "é" ten times: 10 columns, 20 bytes. */
#define TEN_E "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"

Test(draw, a_note_that_fits_in_columns_stays_on_its_row)
{
    setlocale(LC_ALL, "C.UTF-8");
    /* 21 columns in 41 bytes: it fits in 21 columns beside its row, whatever its bytes */
    cr_assert_eq(draw_note_lines(TEN_E " " TEN_E, 21, 80, 2, 3), 0);
    cr_assert_eq(draw_note_lines(TEN_E " " TEN_E, 20, 80, 2, 3), 1);
    /* under its row it wraps at the space that ends 10 columns, not at byte 10 */
    cr_assert_eq(draw_note_lines(TEN_E " " TEN_E, 0, 12, 2, 3), 2);
    cr_assert_eq(draw_note_lines("", 0, 80, 2, 3), 0);
}

Test(draw, wrapping_never_cuts_inside_a_character)
{
    fixture_screen_open(6, 20);
    draw_init(0);
    /* no space to wrap at, and 3 columns a line: a cut by bytes would split an "é" and the
     * line would not draw at all */
    cr_assert_eq(draw_wrapped(0, 0, 3, 4, ROLE_NORMAL, TEN_E), 4);
    char *text = fixture_screen_text();
    fixture_screen_close();
    const char *want[] = {"\xc3\xa9\xc3\xa9\xc3\xa9", "\xc3\xa9\xc3\xa9\xc3\xa9",
                          "\xc3\xa9\xc3\xa9\xc3\xa9", "\xc3\xa9"};
    const char *line = text;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(strncmp(line, want[i], strlen(want[i])), 0, "row %d of:\n%s", i, text);
        cr_assert_eq(line[strlen(want[i])], ' ', "row %d of:\n%s", i, text);
        line = strchr(line, '\n') + 1;
    }
    free(text);
}

Test(draw, a_character_wider_than_the_line_is_never_split)
{
    setlocale(LC_ALL, "C.UTF-8");
    /* two 2-column characters in 1-column lines: each takes a line of its own, whole (a cut
     * after one byte would turn each of its other bytes into a line) */
    cr_assert_eq(draw_wrapped_lines(1, 10, "\xe6\x97\xa5\xe6\x9c\xac"), 2);
}

Test(draw, tail_cols_is_the_end_in_whole_characters)
{
    setlocale(LC_ALL, "C.UTF-8");
    draw_init(0);
    /* 一二三 (6 columns): 5 columns hold two characters, never half of the first */
    cr_assert_str_eq(draw_tail_cols("\xe4\xb8\x80\xe4\xba\x8c\xe4\xb8\x89", 5),
                     "\xe4\xba\x8c\xe4\xb8\x89");
    /* "é" as e and a combining accent: the accent never starts the tail */
    cr_assert_str_eq(draw_tail_cols("ae\xcc\x81" "b", 1), "b");
    cr_assert_str_eq(draw_tail_cols("ae\xcc\x81" "b", 2), "e\xcc\x81" "b");
    cr_assert_str_eq(draw_tail_cols("abc", 0), "");
}

/* Regression: draw_text's cut counted columns on the escaped text, so it could halve an
 * escape: "abcdefgh" ESC "Z" at 10 columns drew "abcdefgh^…", and ESC alone at 1 a bare '^'.
 * An escape is one unit now, kept whole or cut whole. */
Test(draw, a_cut_never_halves_an_escaped_control)
{
    fixture_screen_open(8, 40);
    draw_init(0);
    cr_assert_eq(draw_text(0, 0, 10, ROLE_NORMAL, "abcdefgh\x1bZ"), 9);
    cr_assert_eq(draw_text(1, 0, 1, ROLE_NORMAL, "\x1b"), 0, "no half of ^[ at one column");
    cr_assert_eq(draw_text(2, 0, 12, ROLE_NORMAL, "abcde\xc2\x85xyz"), 6);
    cr_assert_eq(draw_text(3, 0, 11, ROLE_NORMAL, "a\x1b" "b\xc2\x85" "c"), 5);
    cr_assert_eq(draw_text(4, 0, 13, ROLE_NORMAL, "a\x1b" "b\xc2\x85" "c"), 13, "fits whole");
    char *row[5];
    for (int i = 0; i < 5; i++)
        row[i] = drawn_row(i);
    fixture_screen_close();
    const char *ell = draw_unicode() ? "\xe2\x80\xa6" : "~";
    char want[64];
    snprintf(want, sizeof want, "abcdefgh%s", ell);
    cr_assert_str_eq(row[0], want);
    cr_assert_str_eq(row[1], "");
    snprintf(want, sizeof want, "abcde%s", ell);
    cr_assert_str_eq(row[2], want);
    snprintf(want, sizeof want, "a^[b%s", ell);
    cr_assert_str_eq(row[3], want);
    cr_assert_str_eq(row[4], "a^[b<U+0085>c");
    for (int i = 0; i < 5; i++)
        free(row[i]);
}

/* Regression: in an 8-bit locale (here ISO-8859-1, built with localedef into a folder of the
 * test's own: none is installed on the test machines) mbrtowc took each byte of a UTF-8
 * character as a character, so "é" (C3 A9) was "Ã" and a '?', two columns where one '?' is
 * promised, and a name fitted to its cell ran over it. */
Test(draw, a_utf8_character_in_an_8_bit_locale_is_one_question_mark)
{
    char dir[] = "/tmp/tunedeck-test-locale-XXXXXX", cmd[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "localedef -i en_US -f ISO-8859-1 %s/en_US.ISO-8859-1 >/dev/null 2>&1", dir);
    int built = system(cmd) == 0;
    setenv("LOCPATH", dir, 1);
    int set = built && setlocale(LC_ALL, "en_US.ISO-8859-1") != NULL;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!set) {
        cr_assert_eq(system(cmd), 0);
        cr_skip_test("no ISO-8859-1 locale could be built here (localedef)");
    }
    draw_init(0);
    cr_assert_eq(draw_width("\xc3\xa9t\xc3\xa9"), 3, "\"été\": one '?' each é");
    cr_assert_eq(draw_width("\xe6\x97\xa5"), 1, "a CJK character: one '?'");
    cr_assert_eq(draw_width("a\xe2\x82z"), 3, "E2 82 cut short: one, as in every locale");
    cr_assert_eq(draw_width("a\xffz"), 3);
    cr_assert_eq(draw_width("a\xc2\x85z"), 10, "a C1 control: <U+0085> as everywhere");
    char out[64];
    cr_assert_eq(draw_width(draw_fit_cell(out, sizeof out, "n\xc3\xa9ud-\xc3\xa9t\xc3\xa9-1", 6)),
                 6);
    setlocale(LC_ALL, "C");
    cr_assert_eq(system(cmd), 0);
}

/* Regression: in a multibyte locale other than UTF-8 (here GB18030, built as the ISO-8859-1
 * one above) mbrtowc cut "あ" (E3 81 82) into E3 81, a character of its own, and a stray 82:
 * draw_text escaped E3 81 as \xE3\x81, eight columns more than draw_width had counted. */
Test(draw, a_utf8_character_in_a_gb18030_locale_is_one_question_mark)
{
    char dir[] = "/tmp/tunedeck-test-locale-XXXXXX", cmd[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "localedef -i zh_CN -f GB18030 %s/zh_CN.GB18030 >/dev/null 2>&1",
             dir);
    int built = system(cmd) == 0;
    setenv("LOCPATH", dir, 1);
    fixture_screen_open(4, 40);
    int set = built && setlocale(LC_ALL, "zh_CN.GB18030") != NULL;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!set) {
        fixture_screen_close();
        cr_assert_eq(system(cmd), 0);
        cr_skip_test("no GB18030 locale could be built here (localedef)");
    }
    draw_init(0);
    const char *text = "a\xe3\x81\x82z";
    cr_assert_eq(draw_width(text), 3, "\"aあz\": one '?' for あ");
    cr_assert_eq(draw_text(0, 0, 20, ROLE_NORMAL, text), draw_width(text),
                 "drawn as wide as measured");
    cr_assert_eq(draw_width("\xe6\x97\xa5\xe6\x97\xa5"), 2, "日日: one '?' each");
    cr_assert_eq(draw_text(1, 0, 20, ROLE_NORMAL, "\xe6\x97\xa5\xe6\x97\xa5"), 2);
    setlocale(LC_ALL, "C.UTF-8");
    fixture_screen_close();
    cr_assert_eq(system(cmd), 0);
}
