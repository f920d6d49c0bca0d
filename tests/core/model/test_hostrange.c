#include <criterion/criterion.h>
#include <string.h>

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

static int contains(const char *pattern, const char *name)
{
    Error e;
    int in = hostrange_contains(pattern, strlen(pattern), name, &e);
    cr_assert_geq(in, 0, "%s in %s: %s", name, pattern, e.msg);
    return in;
}

/* Membership is read from the ranges, as expansion would write the names (padding kept),
 * with no bound on how many names the pattern stands for. */
Test(hostrange, contains_matches_what_expansion_would_give)
{
    cr_assert(contains("n[0001-5000]", "n4999"));
    cr_assert(contains("n[0001-5000]", "n0001"));
    cr_assert_not(contains("n[0001-5000]", "n1"));
    cr_assert_not(contains("n[0001-5000]", "n5001"));
    cr_assert(contains("n[1-200000]", "n150000")); /* past HOSTRANGE_MAX */
    cr_assert(contains("r[1-2]n[8-12]", "r2n10"));
    cr_assert_not(contains("r[1-2]n[8-12]", "r2n13"));
    cr_assert(contains("n[1-3,07]x", "n07x"));
    cr_assert_not(contains("n[1-3,07]x", "n7x"));
    cr_assert(contains("gpu07", "gpu07"));
    cr_assert_not(contains("gpu07", "gpu7"));
    cr_assert(contains("n[1-9][1-9]", "n11")); /* the first group takes one digit, not two */
    Error e;
    cr_assert_lt(hostrange_contains("n[1-", 4, "n1", &e), 0);
    cr_assert(strstr(e.msg, "without its ']'"), "%s", e.msg);
    cr_assert_lt(hostrange_contains("n[x]", 4, "n1", &e), 0);
    cr_assert_lt(hostrange_contains("n[]", 3, "n1", &e), 0);
    cr_assert_lt(hostrange_contains("n[5-1]", 6, "n3", &e), 0);
    cr_assert(strstr(e.msg, "runs backwards"), "%s", e.msg);
    cr_assert(contains("n[08-12]", "n08"));
    cr_assert_not(contains("n[08-12]", "n8"));
}

/* Regression (docs/remote.md walkthrough): the host-name error advised '[ ]' for IPv6, but
 * "[::1]" was read as a range ("expected digits in brackets, found ':'"). An IPv6 address
 * in brackets is one host, the address itself (OpenSSH's ssh cannot resolve "[::1]"). */
Test(hostrange, bracketed_ipv6_address_is_one_host)
{
    expect("[::1]", 1, (const char *[]){"::1"});
    expect("[fd00:0:0:1::20]", 1, (const char *[]){"fd00:0:0:1::20"});
    expect("[::ffff:10.0.0.1]", 1, (const char *[]){"::ffff:10.0.0.1"});
    expect("::1", 1, (const char *[]){"::1"});                        /* bare, as before */
    expect("fd00::[1-2]", 2, (const char *[]){"fd00::1", "fd00::2"}); /* a range, as before */
    reject("[::1]:2222", "must be the whole host, as in [fd00::1]");
    reject("[::1]:2222", "'port' field");
    reject("n[::1]", "must be the whole host");
    reject("[::1][1-2]", "must be the whole host");
    reject("[fe80::1%eth0]", "zone index ('%eth0') is not accepted");
    reject("[::g]", "expected an IPv6 address in the brackets");
    reject("[::1", "without its ']'");
    cr_assert(contains("[::1]", "::1"));
    cr_assert_not(contains("[::1]", "[::1]"));
    Error e;
    cr_assert_lt(hostrange_contains("n[::1]", 6, "n::1", &e), 0);
    cr_assert(strstr(e.msg, "must be the whole host"), "%s", e.msg);
}
