/* ownpath_check: what it trusts (our own private file, a sticky folder where asked, root's
 * where asked), what it refuses (group- or others-writable, another user's) and that a
 * missing path is the caller's to judge; ownpath_folder's three shapes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/ownpath.h"

static char dir[] = "/tmp/tunedeck-ownpath.XXXXXX";
static char file[128];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/f", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(chmod(file, 0600), 0);
}

static void teardown(void)
{
    unlink(file);
    rmdir(dir);
    snprintf(dir + sizeof dir - 7, 7, "XXXXXX");
}

TestSuite(ownpath, .init = setup, .fini = teardown);

Test(ownpath, our_own_private_file_and_folder_are_trusted)
{
    OwnpathCheck c = ownpath_check(file, 0);
    cr_assert_eq(c.verdict, OWNPATH_OK);
    cr_assert_eq(c.uid, (unsigned)geteuid());
    cr_assert_eq(c.mode, 0600);
    cr_assert_eq(ownpath_check(dir, 0).verdict, OWNPATH_OK);
}

Test(ownpath, group_or_others_write_is_refused_and_says_who)
{
    cr_assert_eq(chmod(file, 0620), 0);
    OwnpathCheck c = ownpath_check(file, OWNPATH_ROOT_OK | OWNPATH_STICKY_OK);
    cr_assert_eq(c.verdict, OWNPATH_WRITABLE, "a file has no sticky pass");
    cr_assert_eq(c.mode, 0620);
    cr_assert_str_eq(ownpath_writers(c.mode), "its group");
    cr_assert_eq(chmod(file, 0602), 0);
    c = ownpath_check(file, 0);
    cr_assert_eq(c.verdict, OWNPATH_WRITABLE);
    cr_assert_str_eq(ownpath_writers(c.mode), "others");
}

/* Regression: a job folder at 0777 (and a known_hosts file, an ssh config, a journal at
 * 0666) was said to be "writable by its group". */
Test(ownpath, world_writable_is_said_so_whatever_the_group_may_do)
{
    cr_assert_str_eq(ownpath_writable_word(0777), "world-writable");
    cr_assert_str_eq(ownpath_writable_word(0602), "world-writable");
    cr_assert_str_eq(ownpath_writable_word(0775), "group-writable");
    cr_assert_str_eq(ownpath_writable_word(0620), "group-writable");
    cr_assert_str_eq(ownpath_writers(0777), "others");
    cr_assert_str_eq(ownpath_writers(0666), "others");
    cr_assert_str_eq(ownpath_writers(0664), "its group");
}

Test(ownpath, a_sticky_folder_passes_only_when_asked)
{
    cr_assert_eq(chmod(dir, 01777), 0);
    cr_assert_eq(ownpath_check(dir, 0).verdict, OWNPATH_WRITABLE);
    cr_assert_eq(ownpath_check(dir, OWNPATH_STICKY_OK).verdict, OWNPATH_OK);
    cr_assert_eq(chmod(dir, 0770), 0); /* writable without the sticky bit: refused anyway */
    cr_assert_eq(ownpath_check(dir, OWNPATH_STICKY_OK).verdict, OWNPATH_WRITABLE);
    cr_assert_eq(chmod(dir, 0700), 0);
}

Test(ownpath, a_missing_path_is_not_an_error_here)
{
    char gone[160];
    snprintf(gone, sizeof gone, "%s/none", dir);
    OwnpathCheck c = ownpath_check(gone, 0);
    cr_assert_eq(c.verdict, OWNPATH_MISSING);
    snprintf(gone, sizeof gone, "%s/f/under-a-file", dir); /* ENOTDIR: could not look */
    c = ownpath_check(gone, 0);
    cr_assert_eq(c.verdict, OWNPATH_UNCHECKED);
    cr_assert_neq(c.errno_value, 0);
}

Test(ownpath, another_users_path_is_refused_roots_only_when_asked)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give the file away");
    cr_assert_eq(chown(file, 4242, 4242), 0);
    OwnpathCheck c = ownpath_check(file, OWNPATH_ROOT_OK | OWNPATH_STICKY_OK);
    cr_assert_eq(c.verdict, OWNPATH_NOT_OURS);
    cr_assert_eq(c.uid, 4242);
    cr_assert_eq(seteuid(4242), 0); /* now root's own folder is someone else's */
    c = ownpath_check(dir, 0);
    OwnpathCheck root_ok = ownpath_check(dir, OWNPATH_ROOT_OK);
    cr_assert_eq(seteuid(0), 0);
    cr_assert_eq(c.verdict, OWNPATH_NOT_OURS);
    cr_assert_eq(c.uid, 0);
    cr_assert_eq(root_ok.verdict, OWNPATH_OK);
}

Test(ownpath, the_folder_of_a_path)
{
    char d[16];
    cr_assert_eq(ownpath_folder("a/b/c", d, sizeof d), 0);
    cr_assert_str_eq(d, "a/b");
    cr_assert_eq(ownpath_folder("c", d, sizeof d), 0);
    cr_assert_str_eq(d, ".");
    cr_assert_eq(ownpath_folder("/c", d, sizeof d), 0);
    cr_assert_str_eq(d, "/");
    cr_assert_eq(ownpath_folder("a-long-folder-name/c", d, sizeof d), -1);
}
