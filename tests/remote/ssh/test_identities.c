#include <criterion/criterion.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/ssh/identities.h"

Test(identities, a_key_its_group_or_others_may_read_is_too_open_as_ssh_says)
{
    char dir[] = "/tmp/td-ident.XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/id_ed25519", dir);
    cr_assert_eq(identity_too_open(path), 0, "a missing file is not judged");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fclose(f);
    static const struct { unsigned mode, open; } CASES[] = {
        {0600, 0}, {0400, 0}, {0640, 0640}, {0604, 0604}, {0620, 0620}, {0700, 0}};
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        cr_assert_eq(chmod(path, CASES[i].mode), 0);
        cr_assert_eq(identity_too_open(path), CASES[i].open, "mode %03o", CASES[i].mode);
    }
    unlink(path);
    rmdir(dir);
}

Test(identities, the_defaults_are_libssh_s_in_its_order_in_the_password_database_home)
{
    cr_assert_str_eq(IDENTITY_DEFAULT_NAMES[0], "id_ed25519");
    cr_assert_str_eq(IDENTITY_DEFAULT_NAMES[1], "id_ecdsa");
    cr_assert_str_eq(IDENTITY_DEFAULT_NAMES[2], "id_rsa");
    cr_assert_str_eq(IDENTITY_DEFAULT_NAMES[3], "id_dsa");
    const struct passwd *pw = getpwuid(getuid());
    cr_assert(pw);
    char want[1100], got[1100];
    snprintf(want, sizeof want, "%s/.ssh", pw->pw_dir);
    char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/nonexistent-home", 1); /* libssh reads the database first, not $HOME */
    identity_ssh_dir(got, sizeof got);
    if (saved) {
        setenv("HOME", saved, 1);
        free(saved);
    }
    cr_assert_str_eq(got, want);
}

/* libssh opens a key or an included config without O_NONBLOCK: a FIFO there blocked the
 * whole loop. A regular file, a folder (read as nothing), /dev/null and a missing file are
 * no such thing. */
Test(identities, a_fifo_or_a_device_would_block_a_regular_file_or_dev_null_would_not)
{
    char dir[] = "/tmp/td-block.XXXXXX", fifo[64], file[64];
    cr_assert(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(file, sizeof file, "%s/key", dir);
    cr_assert_null(file_would_block(file), "missing");
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fclose(f);
    cr_assert_null(file_would_block(file));
    cr_assert_null(file_would_block(dir));
    cr_assert_null(file_would_block("/dev/null"));
    cr_assert_null(file_would_block(""));
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_str_eq(file_would_block(fifo), "a FIFO, not a regular file");
    cr_assert_str_eq(file_would_block("/dev/zero"), "a character device, not a regular file");
    unlink(fifo);
    unlink(file);
    rmdir(dir);
}
