/* Ctrl-C at the console (tui/input.c): it cancels an open prompt; only with none open does
 * it quit. */
#include <criterion/criterion.h>
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/screen.h"
#include "tui/app.h"
#include "tui/input.h"

static App *a;

static void setup(void)
{
    a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
}

static void teardown(void)
{
    free(a);
}

TestSuite(input, .init = setup, .fini = teardown);

Test(input, ctrl_c_in_the_command_prompt_cancels_the_line_and_does_not_quit)
{
    a->prompt = ':';
    strcpy(a->input, "budget 4");
    cr_assert_eq(input_interrupt(a), 1, "the prompt takes the Ctrl-C");
    cr_assert_eq(a->prompt, 0, "the prompt is closed, as Esc closes it");
    cr_assert_not(a->quit, "no quit asked");
    cr_assert(a->dirty, "the closed prompt is redrawn");
}

Test(input, ctrl_c_in_the_filter_prompt_clears_the_filter_as_esc_does)
{
    a->prompt = '/';
    strcpy(a->input, "gpu");
    strcpy(a->filter, "gpu");
    cr_assert_eq(input_interrupt(a), 1);
    cr_assert_eq(a->prompt, 0);
    cr_assert_str_empty(a->filter, "the filter applied as typed is dropped");
    cr_assert(a->table_stale, "the table is rebuilt without it");
}

Test(input, ctrl_c_with_no_prompt_open_is_left_to_quit)
{
    cr_assert_eq(input_interrupt(a), 0, "the caller quits (exit 130)");
    cr_assert_not(a->quit, "input_interrupt itself asks nothing");
}

/* n keys of ch typed at the prompt, a few at a time (curses' queue of keys pushed back is
 * short). */
static void type(wint_t ch, int n)
{
    while (n > 0) {
        int k = n < 8 ? n : 8;
        for (int i = 0; i < k; i++)
            cr_assert_eq(unget_wch(ch), OK);
        input_handle(a);
        n -= k;
    }
}

/* Regression: the `:` line stopped taking keys at 127 bytes without a word, and the `/` line
 * took 127 where the filter it becomes keeps 63 (cut unsaid). Each takes what it holds and
 * says when a key did not fit, until the next key. */
Test(input, a_full_prompt_line_says_so_and_takes_no_more)
{
    fixture_screen_open(30, 100);
    a->prompt = ':';
    type('x', sizeof a->input - 1);
    cr_assert_eq(strlen(a->input), sizeof a->input - 1);
    cr_assert_not(a->input_full, "every key so far fitted");
    type('y', 1);
    cr_assert_eq(strlen(a->input), sizeof a->input - 1, "the key is not taken");
    cr_assert(a->input_full, "and that is said");
    type(127, 1); /* Backspace (DEL) */
    cr_assert_not(a->input_full, "the next key clears it");
    cr_assert_eq(strlen(a->input), sizeof a->input - 2);

    a->prompt = '/';
    a->input[0] = 0;
    type('g', 70);
    cr_assert_eq(strlen(a->input), sizeof a->filter - 1, "the filter's bytes, not the line's");
    cr_assert_str_eq(a->filter, a->input, "the filter is what the line shows");
    cr_assert(a->input_full);
    fixture_screen_close();
}
