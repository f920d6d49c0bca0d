#include <criterion/criterion.h>

#include "core/model/hostrange.h"

static void expect(const char *pattern, size_t n, const char **names)
{
    char **out;
    size_t got;
    Error e;
    cr_assert_eq(hostrange_expand(pattern, &out, &got, &e), 0, "%s: %s", pattern, e.msg);
    cr_assert_eq(got, n, "%s: %zu names", pattern, got);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(out[i], names[i]);
    hostrange_free(out, got);
}

static void reject(const char *pattern, const char *fragment)
{
    char **out;
    size_t got;
    Error e;
    cr_assert_eq(hostrange_expand(pattern, &out, &got, &e), -1, "%s accepted", pattern);
    cr_assert_null(out);
    cr_assert(strstr(e.msg, fragment), "%s: message '%s' lacks '%s'", pattern, e.msg, fragment);
}

Test(hostrange, plain_name_is_itself)
{
    expect("gpu-node", 1, (const char *[]){"gpu-node"});
}

Test(hostrange, keeps_zero_padding_and_lists)
{
    expect("node[01-03,20]", 4, (const char *[]){"node01", "node02", "node03", "node20"});
}

Test(hostrange, unpadded_range_crosses_digit_count)
{
    expect("n[9-11]", 3, (const char *[]){"n9", "n10", "n11"});
}

Test(hostrange, groups_multiply_in_order)
{
    expect("r[1-2]n[1-2].lab", 4,
           (const char *[]){"r1n1.lab", "r1n2.lab", "r2n1.lab", "r2n2.lab"});
}

Test(hostrange, address_ranges_expand)
{
    expect("10.1.0.[10-11]", 2, (const char *[]){"10.1.0.10", "10.1.0.11"});
}

Test(hostrange, rejects_bad_patterns_with_reason)
{
    reject("", "empty");
    reject("node[]", "empty brackets");
    reject("node[3-1]", "backwards");
    reject("node[1-2", "without its ']'");
    reject("node]1", "without '['");
    reject("node[a-b]", "expected digits");
    reject("node[1-999999]", "at most");
}
