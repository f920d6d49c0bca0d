#include <criterion/criterion.h>
#include <string.h>

#include "core/base/registry.h"

typedef struct {
    const char *name;
    int value;
} Plugin;

static const Plugin ALPHA = {"alpha", 1}, BETA = {"beta", 2}, GAMMA = {"gamma", 3};
static const void *const TABLE[] = {&ALPHA, &BETA, &GAMMA, NULL};
static const RegistryAlias ALIASES[] = {{"first", "alpha"}, {"dangling", "none"}, {NULL, NULL}};
static const Registry REG = {TABLE, ALIASES};

Test(registry, finds_entries_by_name_and_alias)
{
    cr_assert_eq(registry_find(&REG, "beta"), &BETA);
    cr_assert_eq(((const Plugin *)registry_find(&REG, "gamma"))->value, 3);
    cr_assert_eq(registry_find(&REG, "first"), &ALPHA);
}

Test(registry, unknown_names_aliases_to_nothing_and_null_find_nothing)
{
    cr_assert_null(registry_find(&REG, "delta"));
    cr_assert_null(registry_find(&REG, "dangling"));
    cr_assert_null(registry_find(&REG, NULL));
    cr_assert_null(registry_find(&REG, "Alpha"), "names are case-sensitive");
    const Registry bare = {TABLE, NULL};
    cr_assert_null(registry_find(&bare, "first"));
}

Test(registry, lists_names_in_table_order_then_the_aliases_that_name_an_entry)
{
    char buf[64];
    cr_assert_str_eq(registry_names(&REG, buf, sizeof buf), "alpha, beta, gamma (also: first)");
    cr_assert_str_eq(registry_names(&(Registry){REG.entries, NULL}, buf, sizeof buf),
                     "alpha, beta, gamma");
    cr_assert_eq(registry_count(&REG), 3);
    cr_assert_str_eq(registry_name(&REG, 1), "beta");
    cr_assert_null(registry_name(&REG, 3));
}

Test(registry, a_short_buffer_is_cut_and_terminated)
{
    char buf[9];
    memset(buf, 'x', sizeof buf);
    registry_names(&REG, buf, sizeof buf);
    cr_assert_str_eq(buf, "alpha, b");
    const void *const empty[] = {NULL};
    cr_assert_str_eq(registry_names(&(Registry){empty, NULL}, buf, sizeof buf), "");
}
