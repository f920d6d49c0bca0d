/* The console's one line for the overrides a resume restored. */
#include <criterion/criterion.h>

#include "tui/restored_note.h"

static const char *note(size_t queued, int first, int budget)
{
    static char out[256];
    restored_note_format(out, sizeof out, queued, first, budget, 'X');
    return out;
}

Test(restored_note, all_within_the_budget_run_first)
{
    cr_assert_str_eq(note(1, 4, 6),
                     "1 override queued before the session ended runs first as trial 4 (X drops "
                     "it)");
    cr_assert_str_eq(note(2, 2, 3),
                     "2 overrides queued before the session ended run first as trials 2-3 (X "
                     "drops the last, :unqueue N any)");
}

/* Regression: the console logged "2 overrides ... run first as trials 2-3" and then "the
 * overrides queued past trial 2 wait for a :budget"; one line names both groups. */
Test(restored_note, those_past_the_budget_wait_in_the_same_line)
{
    cr_assert_str_eq(note(2, 2, 2),
                     "of the 2 overrides queued before the session ended, 1 runs first as trial "
                     "2 and 1 waits past the budget of 2 (:budget 3 runs it)");
    cr_assert_str_eq(note(4, 2, 3),
                     "of the 4 overrides queued before the session ended, 2 run first as trials "
                     "2-3 and 2 wait past the budget of 3 (:budget 5 runs them)");
}

Test(restored_note, none_within_the_budget)
{
    cr_assert_str_eq(note(2, 4, 3),
                     "the 2 overrides queued before the session ended wait past the budget of 3 "
                     "(:budget 5 runs them)");
    cr_assert_str_eq(note(1, 4, 3),
                     "the 1 override queued before the session ended waits past the budget of 3 "
                     "(:budget 4 runs it)");
}
