#include <criterion/criterion.h>
#include <libssh/libssh.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/ssh/sshconfig.h"
#include "remote/ssh/sshmatch.h"

Test(sshmatch, a_pattern_list_is_matched_as_libssh_matches_it)
{
    cr_assert_eq(sshmatch_list("a.example", "*.example", 0), 1);
    cr_assert_eq(sshmatch_list("a.example", "b.example,a.exa?ple", 0), 1);
    cr_assert_eq(sshmatch_list("a.example", "*,!a.*", 0), -1, "a negation wins in one list");
    cr_assert_eq(sshmatch_list("a.example", "!b.*", 0), 0, "a negation alone never matches");
    cr_assert_eq(sshmatch_list("a.example", "A.EXAMPLE", 0), 0);
    cr_assert_eq(sshmatch_list("a.example", "A.EXAMPLE", 1), 1, "Host lines lower patterns");
    cr_assert_eq(sshmatch_list("a.example", "a.example*?", 0), 0, "'?' is one character");
    cr_assert_eq(sshmatch_list("a.example", "a*.*e", 0), 1);
    cr_assert_eq(sshmatch_list("a.example", "a.example?", 0), 0);
    cr_assert_eq(sshmatch_list(NULL, "*", 0), 0);
}

/* One row: a config with one IdentityFile line (MARK), the host and user libssh is given,
 * whether libssh 0.10.6 applies the line (checked against libssh itself below). */
typedef struct {
    const char *config, *alias, *user;
    int applies;
} Row;

static const Row ROWS[] = {
    {"Host a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host b.example\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host *.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host *,!a.example\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host * !a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host !a.example *\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host b.example !c.example a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host A.Example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host a.example\n IdentityFile MARK\n", "A.EXAMPLE", "root", 1},
    {"Host a.example*?\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host a*le\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Host\n IdentityFile MARK\n", "a.example", "root", 0},
    {"IdentityFile MARK\nHost b\n", "a.example", "root", 1},
    {"Host b\nHost a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match host a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match host A.example\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match !host b.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match host a.example,!a.*\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match user root\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match user root\n IdentityFile MARK\n", "a.example", "bob", 0},
    {"Match user root\n IdentityFile MARK\n", "a.example", NULL, 0},
    {"Match !user root\n IdentityFile MARK\n", "a.example", NULL, 1},
    {"User bob\nMatch user bob\n IdentityFile MARK\n", "a.example", NULL, 1},
    {"User bob\nMatch user bob\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host b\n User bob\nMatch user bob\n IdentityFile MARK\n", "a.example", NULL, 0},
    {"User a;b\nMatch user a;b\n IdentityFile MARK\n", "a.example", NULL, 1},
    {"Match localuser *\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match !localuser *\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match originalhost a.example\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match !originalhost b\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match all\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match !all\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Match canonical all\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match final host a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"Match host a.example user bob\n IdentityFile MARK\n", "a.example", "root", 0},
    {"Host a.example\n HostName 10.9.8.7\nHost 10.9.8.7\n IdentityFile MARK\n", "a.example", "root",
     1},
    {"Host a.example\n HostName 10.9.8.7\nHost a.example\n IdentityFile MARK\n", "a.example",
     "root", 0},
    {"Host a.example\n HostName 10.9.8.7\nMatch host 10.9.8.7\n IdentityFile MARK\n", "a.example",
     "root", 1},
    {"Host b\n HostName 10.9.8.7\nHost a.example\n IdentityFile MARK\n", "a.example", "root", 1},
    {"HostName first.example\nHostName second.example\nHost second.example\n IdentityFile MARK\n",
     "a.example", "root", 0},
    {"HostName first.example\nHostName second.example\nHost first.example\n IdentityFile MARK\n",
     "a.example", "root", 1},
    {"HostName\nHostName second.example\nHost a.example\n IdentityFile MARK\n", "a.example", "root",
     1},
    /* libssh reads HostName user@host as a user and a host (SSH_OPTIONS_HOST): the user is
     * replaced there, whatever it was, and a later Match user sees it; OpenSSH does not */
    {"Host a.example\n User bob\n HostName alice@10.9.8.7\nMatch user alice\n IdentityFile MARK\n",
     "a.example", NULL, 1},
    {"Host a.example\n User bob\n HostName alice@10.9.8.7\nMatch user bob\n IdentityFile MARK\n",
     "a.example", NULL, 0},
    {"HostName alice@10.9.8.7\nMatch user alice\n IdentityFile MARK\n", "a.example", "root", 1},
    {"HostName alice@10.9.8.7\nMatch user root\n IdentityFile MARK\n", "a.example", "root", 0},
    {"HostName alice@10.9.8.7\nUser carol\nMatch user carol\n IdentityFile MARK\n", "a.example",
     NULL, 0},
    {"HostName bob@%h\nMatch user bob host a.example\n IdentityFile MARK\n", "a.example", NULL, 1},
    {"Match user alice\n IdentityFile MARK\nHost *\n HostName alice@10.9.8.7\n", "a.example",
     "root", 0},
    {"Host b\n HostName alice@10.9.8.7\nMatch user alice\n IdentityFile MARK\n", "a.example",
     "root", 0},
    /* values libssh does not take: a port, a host name it finds invalid, an empty user */
    {"HostName alice@10.9.8.7:2222\nMatch user alice\n IdentityFile MARK\n", "a.example", "root",
     0},
    {"HostName alice@bad!name\nMatch user alice\n IdentityFile MARK\n", "a.example", "root", 0},
    {"HostName @10.9.8.7\nMatch user root\n IdentityFile MARK\n", "a.example", "root", 1},
    /* a HostName with a user in it sets that user too, replacing one set before */
    {"Host a.example\n HostName bob@10.9.8.7\nMatch user bob\n IdentityFile MARK\n", "a.example",
     "root", 1},
    {"Host a.example\n HostName bob@10.9.8.7\nMatch user root\n IdentityFile MARK\n", "a.example",
     "root", 0},
    {"Host b\n Include INC\n", "a.example", "root", 0},
    {"Host a.example\n Include INC\n", "a.example", "root", 1},
    /* an included file's Host line holds in the file that included it */
    {"Include OTHER\nIdentityFile MARK\n", "a.example", "root", 0},
    /* a Match line libssh refuses in an included file ends that file, its block not applying */
    {"Include BAD\nIdentityFile MARK\n", "a.example", "root", 0},
};

static char dir[64];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
}

/* text with every NAME replaced by its path in dir */
static void expand(const char *text, char *out, size_t cap)
{
    static const char *const NAMES[] = {"MARK", "INC", "OTHER", "BAD"};
    size_t used = 0;
    out[0] = 0;
    while (*text) {
        size_t i = 0, len = 0;
        for (; i < sizeof NAMES / sizeof *NAMES; i++)
            if (strncmp(text, NAMES[i], len = strlen(NAMES[i])) == 0)
                break;
        if (i < sizeof NAMES / sizeof *NAMES) {
            used += (size_t)snprintf(out + used, cap - used, "%s/%s", dir, NAMES[i]);
            text += len;
        } else {
            out[used++] = *text++;
            out[used] = 0;
        }
        cr_assert(used < cap);
    }
}

/* libssh 0.10.6 itself, on the same config: whether MARK is the identity it added last. */
static int libssh_applies(const char *path, const Row *r, char *target, size_t cap)
{
    ssh_session s = ssh_new();
    cr_assert(s);
    cr_assert_eq(ssh_options_set(s, SSH_OPTIONS_HOST, r->alias), 0);
    if (r->user)
        cr_assert_eq(ssh_options_set(s, SSH_OPTIONS_USER, r->user), 0);
    cr_assert_eq(ssh_options_parse_config(s, path), 0, "%s", ssh_get_error(s));
    char *id = NULL, *host = NULL, mark[128];
    snprintf(mark, sizeof mark, "%s/MARK", dir);
    cr_assert_eq(ssh_options_get(s, SSH_OPTIONS_IDENTITY, &id), SSH_OK);
    cr_assert_eq(ssh_options_get(s, SSH_OPTIONS_HOST, &host), SSH_OK);
    snprintf(target, cap, "%s", host);
    int applies = strcmp(id, mark) == 0;
    ssh_string_free_char(id);
    ssh_string_free_char(host);
    ssh_free(s);
    return applies;
}

/* Row i written to path: libssh's verdict on it asserted to be the row's, and how many
 * IdentityFile keys tunedeck checks for the same host. */
static size_t checked_on_row(const char *path, const Row *r, size_t i)
{
    char text[2048], target[256];
    expand(r->config, text, sizeof text);
    write_text(path, text);
    int libssh = libssh_applies(path, r, target, sizeof target);
    cr_assert_eq(libssh, r->applies, "libssh on row %zu: %s", i, r->config);
    SshpathHost h = {target, r->user ? r->user : "root", 22};
    SshmatchHost m;
    sshmatch_begin(&m, r->alias, target, r->user);
    SshconfigHostFiles files = {0};
    Error err;
    int rc = sshconfig_host_files(path, dir, &h, &m, &files, &err);
    size_t n = files.n_ids;
    sshconfig_host_files_free(&files);
    cr_assert_eq(rc, 0, "row %zu: %s", i, err.msg);
    return n;
}

/* What tunedeck checks must be what libssh holds: each row agrees with libssh on this very
 * machine, and with the table (so a libssh that changes its mind is noticed too). */
Test(sshmatch, the_identity_files_checked_for_a_host_are_those_libssh_applies_to_it)
{
    snprintf(dir, sizeof dir, "/tmp/td-sshmatch.XXXXXX");
    cr_assert(mkdtemp(dir));
    char path[128], text[2048], inc[128];
    snprintf(inc, sizeof inc, "%s/INC", dir);
    expand("IdentityFile MARK\n", text, sizeof text);
    write_text(inc, text);
    snprintf(inc, sizeof inc, "%s/OTHER", dir);
    write_text(inc, "Host zzz\n");
    snprintf(inc, sizeof inc, "%s/BAD", dir);
    write_text(inc, "Match bogus x\nHost *\n");
    snprintf(path, sizeof path, "%s/config", dir);
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
        const Row *r = &ROWS[i];
        size_t n = checked_on_row(path, r, i); /* r->applies is libssh's own verdict */
        cr_assert_eq(n, (size_t)r->applies, "row %zu: %s", i, r->config);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

/* A Match exec block is taken as applying, since tunedeck does not run its command again: so
 * what tunedeck checks must hold whichever way the command went, never less than libssh
 * applies. Regression: a HostName or User line under a `Match exec` that failed was taken
 * as applied, so a later Host or Match line was matched against a host or user libssh never
 * had, and the IdentityFile libssh did read under it went unchecked. */
static const Row EXEC_ROWS[] = {
    {"Match exec false\n HostName bogus.example\nHost a.example\n IdentityFile MARK\n"
     " HostName 10.9.8.7\n",
     "a.example", "root", 1},
    {"Match exec true\n HostName 10.9.8.7\nHost 10.9.8.7\n IdentityFile MARK\n", "a.example",
     "root", 1},
    {"Match exec false\n HostName bogus.example\nMatch host a.example\n IdentityFile MARK\n"
     "Host *\n HostName 10.9.8.7\n",
     "a.example", "root", 1},
    {"Match exec false\n User bob\nHost *\n User carol\nMatch user carol\n IdentityFile MARK\n",
     "a.example", NULL, 1},
    {"Match exec true\n User bob\nHost *\n User carol\nMatch user bob\n IdentityFile MARK\n",
     "a.example", NULL, 1},
    {"Match exec false\n User bob\nHost *\n User carol\nMatch !user bob\n IdentityFile MARK\n",
     "a.example", NULL, 1},
};

Test(sshmatch, what_a_match_exec_block_holds_is_checked_whichever_way_its_command_went)
{
    snprintf(dir, sizeof dir, "/tmp/td-sshmatch.XXXXXX");
    cr_assert(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/config", dir);
    for (size_t i = 0; i < sizeof EXEC_ROWS / sizeof *EXEC_ROWS; i++) {
        const Row *r = &EXEC_ROWS[i];
        size_t n = checked_on_row(path, r, i); /* r->applies is libssh's own verdict */
        cr_assert_geq(n, (size_t)r->applies,
                      "row %zu: libssh reads MARK, tunedeck did not check it: %s", i, r->config);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}
