#include <criterion/criterion.h>

#include "core/base/error.h"
#include "core/base/exitcode.h"

Test(error, set_returns_minus_one_and_formats)
{
    Error e;
    cr_assert_eq(error_set(&e, "field '%s': expected %s", "batch", "a positive integer"), -1);
    cr_assert_str_eq(e.msg, "field 'batch': expected a positive integer");
}

Test(error, prefix_adds_context_outward)
{
    Error e;
    error_set(&e, "field 'batch': expected a positive integer");
    error_prefix(&e, "job.json");
    cr_assert_str_eq(e.msg, "job.json: field 'batch': expected a positive integer");
}

Test(error, null_error_is_allowed)
{
    cr_assert_eq(error_set(NULL, "x"), -1);
    cr_assert_eq(error_prefix(NULL, "x"), -1);
}

Test(error, no_memory_names_what_was_being_built)
{
    Error e;
    cr_assert_eq(error_no_memory(&e, "%s: machines[%d]", "lab.json", 3), -1);
    cr_assert_str_eq(e.msg, "lab.json: machines[3]: out of memory");
    cr_assert_eq(error_no_memory(NULL, "ignored"), -1);
}

Test(error, a_marked_kind_survives_prefixes_and_a_new_message_clears_it)
{
    Error e;
    cr_assert_eq(error_set(&e, "x"), -1);
    cr_assert_eq(e.kind, ERROR_OTHER);
    cr_assert_eq(error_mark(&e, ERROR_INPUT), -1);
    error_prefix(&e, "file.json");
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert_eq(exitcode_for(&e, EXIT_USAGE), EXIT_BAD_INPUT);
    error_set(&e, "y");
    cr_assert_eq(exitcode_for(&e, EXIT_USAGE), EXIT_USAGE);
    error_mark(&e, ERROR_REMOTE);
    cr_assert_eq(exitcode_for(&e, EXIT_FAILED), EXIT_REMOTE);
}
