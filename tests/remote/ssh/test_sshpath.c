#include <criterion/criterion.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/ssh/sshpath.h"

static const char *home(void)
{
    const struct passwd *pw = getpwuid(getuid());
    cr_assert(pw);
    return pw->pw_dir;
}

static void expands(const char *named, const char *want_path, const char *want_libssh)
{
    char path[512], lib[1024];
    Error err = {0};
    cr_assert_eq(sshpath_config_name(named, "/sshdir", path, sizeof path, lib, sizeof lib, &err),
                 0, "%s: %s", named, err.msg);
    cr_assert_str_eq(path, want_path, "%s", named);
    cr_assert_str_eq(lib, want_libssh, "%s", named);
}

/* As libssh 0.10's ssh_path_expand_escape: the file checked is the file read. */
Test(sshpath, a_config_name_expands_as_libssh_expands_it)
{
    char want[512];
    setenv("HOME", "/nonexistent-home", 1); /* libssh takes ~ from the password database */
    snprintf(want, sizeof want, "%s/cfg", home());
    expands("~/cfg", want, want);
    snprintf(want, sizeof want, "%s", home());
    expands("~", want, want);
    expands("~root/x", "/root/x", "/root/x");
    expands("%d/cfg", "/sshdir/cfg", "/sshdir/cfg");
    char user_cfg[256];
    snprintf(user_cfg, sizeof user_cfg, "/etc/%s.cfg", getpwuid(getuid())->pw_name);
    expands("/etc/%u.cfg", user_cfg, user_cfg);
    /* '%' that stays in the name is doubled for libssh, which halves it again. */
    expands("/x/100%%/c%%d", "/x/100%/c%d", "/x/100%%/c%%d");
    expands("rel/cfg", "rel/cfg", "rel/cfg");
    expands("/a/b%", "/a/b", "/a/b");
}

Test(sshpath, per_host_and_unknown_expansions_are_refused_naming_them)
{
    static const char *const NAMES[] = {"/x/%h.conf", "%r", "/x/%p", "/x/%l/c", "/x/%z"};
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++) {
        char path[512], lib[1024], needle[64];
        Error err = {0};
        cr_assert_eq(sshpath_config_name(NAMES[i], "/d", path, sizeof path, lib, sizeof lib,
                                         &err),
                     -1, "%s was expanded", NAMES[i]);
        snprintf(needle, sizeof needle, "TUNEDECK_SSH_CONFIG %s: %%%c is refused", NAMES[i],
                 strchr(NAMES[i], '%')[1]);
        cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
        cr_assert_eq(err.kind, ERROR_INPUT);
    }
    char path[512], lib[1024];
    Error err = {0};
    cr_assert_eq(sshpath_config_name("~no-such-user-td/x", "/d", path, sizeof path, lib,
                                     sizeof lib, &err),
                 -1);
    cr_assert(strstr(err.msg, "names no user"), "%s", err.msg);
}

Test(sshpath, a_tilde_is_home_then_the_rest_as_libssh_joins_them)
{
    char out[256];
    cr_assert_eq(sshpath_tilde("~/a", "/h", out, sizeof out), 0);
    cr_assert_str_eq(out, "/h/a");
    cr_assert_eq(sshpath_tilde("~a", "/h", out, sizeof out), 0);
    cr_assert_str_eq(out, "/ha"); /* libssh's own join, odd as it is */
    cr_assert_eq(sshpath_tilde("/x/~", "/h", out, sizeof out), 0);
    cr_assert_str_eq(out, "/x/~");
    cr_assert_eq(sshpath_tilde("~root/a", "/h", out, sizeof out), 0);
    cr_assert_str_eq(out, "/root/a");
}

/* One file per host, as ssh_connect expands it: no glob, so '[', '*' and '?' are themselves. */
Test(sshpath, an_identity_file_is_the_one_file_libssh_reads_for_the_host)
{
    char out[256];
    SshpathHost h = {"127.0.0.13", "root", 2222};
    cr_assert_eq(sshpath_identity_file("~/.ssh/k", "/h", "/h/.ssh", &h, out, sizeof out), 0);
    cr_assert_str_eq(out, "/h/.ssh/k");
    cr_assert_eq(sshpath_identity_file("%d/id_%h_%r.%p", "/h", "/s", &h, out, sizeof out), 0);
    cr_assert_str_eq(out, "/s/id_127.0.0.13_root.2222");
    cr_assert_eq(sshpath_identity_file("/k/k[1]_%h*?", "/h", "/s", &h, out, sizeof out), 0);
    cr_assert_str_eq(out, "/k/k[1]_127.0.0.13*?");
    cr_assert_eq(sshpath_identity_file("/k/%%l%l", "/h", "/s", &h, out, sizeof out), 0);
    cr_assert_str_eq(out, "/k/%l"); /* %l is nothing in libssh 0.10.6 */
    SshpathHost no_port = {"a", "u", 0};
    cr_assert_eq(sshpath_identity_file("/k/%p", "/h", "/s", &no_port, out, sizeof out), 0);
    cr_assert_str_eq(out, "/k/22");
    cr_assert_eq(sshpath_identity_file("/k/%q", "/h", "/s", &h, out, sizeof out), -1);
}

/* What libssh's ssh_path_expand_escape turns back into exactly the file tunedeck checked:
 * an inventory's "%d/work_key" is that literal file, never ~/.ssh/work_key. */
Test(sshpath, a_name_for_libssh_expands_to_exactly_the_file)
{
    static const char *const CASES[][2] = {
        {"%d/work_key", "%%d/work_key"}, {"/keys/%h_%%", "/keys/%%h_%%%%"}, {"~/k", "./~/k"},
        {"~%u/k%", "./~%%u/k%%"},        {"/plain/key", "/plain/key"},      {"", ""},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char out[64];
        cr_assert_eq(sshpath_for_libssh(CASES[i][0], out, sizeof out), 0, "%s", CASES[i][0]);
        cr_assert_str_eq(out, CASES[i][1], "%s", CASES[i][0]);
    }
    char small[6];
    cr_assert_eq(sshpath_for_libssh("%d/ab", small, sizeof small), -1, "%s", small);
    cr_assert_eq(sshpath_for_libssh("~/abc", small, sizeof small), -1, "%s", small);
    cr_assert_eq(sshpath_for_libssh("abcde", small, sizeof small), 0);
}
