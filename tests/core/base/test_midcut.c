/* A long message cut to fit keeps how it ends. Regression: a trial's reason built from a
 * failed login was cut at its end, so "and no identity file was accepted (denied)" and the
 * fix were what the operator lost. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/base/midcut.h"

Test(midcut, a_text_that_fits_is_whole)
{
    char out[32];
    cr_assert_eq(midcut(out, sizeof out, "short words"), 11);
    cr_assert_str_eq(out, "short words");
}

Test(midcut, a_long_text_keeps_its_head_and_its_tail_cut_at_spaces)
{
    char text[4000] = "authentication failed for h1: no agent key was accepted: libssh asked";
    for (int i = 0; i < 60; i++)
        strcat(text, " /run/long/socket/path (does not answer)");
    strcat(text, " and no identity file was accepted (denied)");
    char out[200];
    size_t n = midcut(out, sizeof out, text);
    cr_assert_eq(n, strlen(out));
    cr_assert_lt(n, sizeof out);
    cr_assert(strncmp(out, "authentication failed for h1: ", 30) == 0, "%s", out);
    const char *end = "and no identity file was accepted (denied)";
    cr_assert_str_eq(out + n - strlen(end), end);
    const char *mark = strstr(out, " ... ");
    cr_assert_not_null(mark, "%s", out);
    cr_assert_neq(mark[-1], ' ');
    cr_assert_neq(mark[5], ' ', "the tail starts at a word: %s", out);
}

Test(midcut, no_space_near_the_cut_leaves_whole_characters)
{
    char text[600] = "";
    for (int i = 0; i < 250; i++)
        strcat(text, "\xc3\xa9"); /* e acute, two bytes each */
    char out[101];
    size_t n = midcut(out, sizeof out, text);
    cr_assert_lt(n, sizeof out);
    const char *mark = strstr(out, " ... ");
    cr_assert_not_null(mark);
    cr_assert_eq((mark - out) % 2, 0, "the head ends after a whole character");
    cr_assert_eq(strlen(mark + 5) % 2, 0, "the tail starts at one");
}
