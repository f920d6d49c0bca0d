/* The list of owned strings: copies kept (the caller's buffer may change), whole strings
 * matched, growth past the first allocation, and a freed list empty and usable again. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/base/strlist.h"

Test(strlist, keeps_copies_and_matches_whole_strings)
{
    StrList l = {0};
    char buf[16] = "160";
    cr_assert_eq(strlist_add(&l, buf), 0);
    strcpy(buf, "15");
    cr_assert_eq(strlist_add(&l, buf), 0);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0], "160", "a copy, not the caller's buffer");
    cr_assert(strlist_has(&l, "15"));
    cr_assert(strlist_has(&l, "160"));
    cr_assert_not(strlist_has(&l, "16"), "not a prefix match");
    cr_assert_not(strlist_has(&l, "1600"));
    strlist_free(&l);
}

Test(strlist, grows_past_its_first_allocation_and_is_empty_once_freed)
{
    StrList l = {0};
    cr_assert_not(strlist_has(&l, ""), "the zero value is empty");
    char s[16];
    for (int i = 0; i < 100; i++) {
        snprintf(s, sizeof s, "%d", i);
        cr_assert_eq(strlist_add(&l, s), 0);
    }
    cr_assert_eq(l.n, 100);
    for (int i = 0; i < 100; i++) {
        snprintf(s, sizeof s, "%d", i);
        cr_assert_str_eq(l.v[i], s);
    }
    strlist_free(&l);
    cr_assert_eq(l.n, 0);
    cr_assert_null(l.v);
    cr_assert_not(strlist_has(&l, "1"));
    cr_assert_eq(strlist_add(&l, "again"), 0, "usable after free");
    cr_assert(strlist_has(&l, "again"));
    strlist_free(&l);
}

Test(strlist, remove_takes_every_copy_and_keeps_the_others_in_order)
{
    StrList l = {0};
    const char *in[] = {"12", "13", "12", "14"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(strlist_add(&l, in[i]), 0);
    strlist_remove(&l, "12");
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0], "13");
    cr_assert_str_eq(l.v[1], "14");
    strlist_remove(&l, "1"); /* whole strings, not prefixes */
    cr_assert_eq(l.n, 2);
    strlist_free(&l);
}
