#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/ssh/knownhosts.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/td-kh.XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

TestSuite(knownhosts, .init = make_dir, .fini = remove_dir);

Test(knownhosts, a_revoked_line_marks_its_key_for_every_host)
{
    char file[128];
    snprintf(file, sizeof file, "%s/kh", dir);
    write_file(file, "[h1]:22 ssh-ed25519 AAAAgood\n"
                     "# @revoked * ssh-ed25519 AAAAcommented\n"
                     "  @revoked   other-host ssh-ed25519 AAAAbad\n"
                     "@cert-authority * ssh-ed25519 AAAAca\n");
    Error err;
    cr_assert_eq(knownhosts_revoked(file, "AAAAbad", &err), 1);
    cr_assert_eq(knownhosts_revoked(file, "AAAAgood", &err), 0);
    cr_assert_eq(knownhosts_revoked(file, "AAAAcommented", &err), 0);
    cr_assert_eq(knownhosts_revoked(file, "AAAAca", &err), 0);
    cr_assert_eq(knownhosts_revoked(file, "AAAAba", &err), 0, "a prefix is not the key");
}

Test(knownhosts, a_missing_file_revokes_nothing_and_an_unreadable_one_is_an_error)
{
    char file[128];
    snprintf(file, sizeof file, "%s/none", dir);
    Error err;
    cr_assert_eq(knownhosts_revoked(file, "AAAA", &err), 0);
    if (geteuid() != 0) { /* root reads a 000 file */
        snprintf(file, sizeof file, "%s/locked", dir);
        write_file(file, "@revoked * ssh-ed25519 AAAA\n");
        chmod(file, 0);
        cr_assert_eq(knownhosts_revoked(file, "AAAA", &err), -1);
        cr_assert(strstr(err.msg, file), "%s", err.msg);
    }
}

Test(knownhosts, append_creates_the_file_private_and_keeps_lines_whole)
{
    char file[160], text[256];
    snprintf(file, sizeof file, "%s/sub/known_hosts", dir);
    Error err;
    cr_assert_eq(knownhosts_append(file, "[a]:2 ssh-ed25519 AAAA1\n", &err), 0, "%s", err.msg);
    struct stat st;
    cr_assert_eq(stat(file, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    /* a file without a final newline gets one before the new line */
    FILE *f = fopen(file, "a");
    fputs("b ssh-ed25519 AAAA2", f);
    fclose(f);
    cr_assert_eq(knownhosts_append(file, "c ssh-ed25519 AAAA3", &err), 0, "%s", err.msg);
    f = fopen(file, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cr_assert_str_eq(text, "[a]:2 ssh-ed25519 AAAA1\nb ssh-ed25519 AAAA2\nc ssh-ed25519 AAAA3\n");
}
