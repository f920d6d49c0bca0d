/* Ctrl-C at the console (tui/input.c): it cancels an open prompt; only with none open does
 * it quit. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

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
