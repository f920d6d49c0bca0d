#include <criterion/criterion.h>

#include "core/base/error.h"

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
