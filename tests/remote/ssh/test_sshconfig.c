#include <criterion/criterion.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/ssh/authwords.h"
#include "remote/ssh/sshconfig.h"

/* Each test's folder, its config file and its .ssh folder (made by make_ssh_dir). */
static char dir[64], config[256], ssh_dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/td-sshcfg.XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(config, sizeof config, "%s/config", dir);
    snprintf(ssh_dir, sizeof ssh_dir, "%s/.ssh", dir);
}

static void make_ssh_dir(void)
{
    cr_assert_eq(mkdir(ssh_dir, 0700), 0);
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

static void write_file(const char *name, int mode, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, (mode_t)mode), 0);
}

TestSuite(sshconfig, .init = make_dir, .fini = remove_dir);

Test(sshconfig, a_private_file_and_its_private_includes_are_trusted)
{
    write_file("config", 0600, "Host a\n  Include sub.conf\nINCLUDE=\"missing/*.conf\"\n");
    write_file("sub.conf", 0644, "Port 2\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), 0, "%s", err.msg);
}

Test(sshconfig, a_writable_file_is_refused_with_its_mode)
{
    write_file("config", 0602, "Host a\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1);
    cr_assert(strstr(err.msg, "is writable by others (mode 602): refused"), "%s", err.msg);
}

Test(sshconfig, a_writable_include_is_found_however_the_line_is_spelled)
{
    static const char *const LINES[] = {"Include d/*.conf\n", "  include=d/*.conf\n",
                                        "\tINCLUDE \"d/*.conf\"\n", "Include = d/x.conf\n"};
    char sub[256];
    snprintf(sub, sizeof sub, "%s/d", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file("d/x.conf", 0620, "Match exec \"true\"\n");
    for (size_t i = 0; i < sizeof LINES / sizeof *LINES; i++) {
        write_file("config", 0600, LINES[i]);
        Error err;
        cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1, "%s", LINES[i]);
        cr_assert(strstr(err.msg, "/d/x.conf (included by ") &&
                      strstr(err.msg, "writable by its group (mode 620)"),
                  "%s", err.msg);
    }
}

Test(sshconfig, an_include_loop_ends_and_a_missing_file_is_not_judged)
{
    write_file("config", 0600, "Include config\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), 0, "%s", err.msg);
    char none[256];
    snprintf(none, sizeof none, "%s/none", dir);
    cr_assert_eq(sshconfig_check_trusted(none, dir, &err), 0);
}

Test(sshconfig, a_folder_others_can_write_and_a_link_into_one_are_refused)
{
    char sub[256], path[256], link[256];
    snprintf(sub, sizeof sub, "%s/open", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file("open/config", 0600, "Host a\n");
    snprintf(path, sizeof path, "%s/open/config", dir);
    snprintf(link, sizeof link, "%s/config", dir);
    cr_assert_eq(symlink(path, link), 0);
    Error err;
    cr_assert_eq(sshconfig_check_trusted(link, dir, &err), 0, "%s", err.msg);
    cr_assert_eq(chmod(sub, 0770), 0);
    cr_assert_eq(sshconfig_check_trusted(path, dir, &err), -1);
    cr_assert(strstr(err.msg, "configuration folder ") &&
                  strstr(err.msg, "/open is writable by its group (mode 770)"),
              "%s", err.msg);
    cr_assert_eq(sshconfig_check_trusted(link, dir, &err), -1, "the link leads there");
    cr_assert(strstr(err.msg, "/open is writable by its group"), "%s", err.msg);
}

Test(sshconfig, a_tilde_include_is_read_from_the_ssh_folder_parent_as_libssh_reads_it)
{
    char path[256];
    make_ssh_dir();
    write_file(".ssh/config", 0600, "Include ~/extra.conf\n");
    write_file("extra.conf", 0666, "Host b\n");
    snprintf(path, sizeof path, "%s/.ssh/config", dir);
    setenv("HOME", "/nonexistent-home", 1); /* libssh does not look at it */
    Error err;
    cr_assert_eq(sshconfig_check_trusted(path, ssh_dir, &err), -1);
    cr_assert(strstr(err.msg, "/extra.conf (included by "), "%s", err.msg);
}

Test(sshconfig, an_empty_folder_others_can_write_that_an_include_globs_is_refused)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/conf.d", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    cr_assert_eq(chmod(sub, 0777), 0);
    write_file("config", 0600, "Include conf.d/*.conf\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1,
                 "a file dropped there later is read");
    cr_assert(strstr(err.msg, "includes conf.d/*.conf: the ssh configuration folder ") &&
                  strstr(err.msg, "/conf.d is writable by others (mode 777)"),
              "%s", err.msg);
    cr_assert_eq(chmod(sub, 01777), 0);
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1,
                 "sticky: others can still add a file, read before the next check");
    cr_assert(strstr(err.msg, "/conf.d is writable by others (mode 777)"), "%s", err.msg);
}

Test(sshconfig, a_sticky_folder_holds_only_an_existing_file_an_include_names)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/tmp", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    cr_assert_eq(chmod(sub, 01777), 0);
    write_file("tmp/mine.conf", 0600, "Host a\n");
    write_file("config", 0600, "Include tmp/mine.conf\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), 0,
                 "ours, and the sticky bit keeps others from replacing it: %s", err.msg);
    write_file("config", 0600, "Include tmp/later.conf\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1, "anyone may create it there");
    cr_assert(strstr(err.msg, "includes tmp/later.conf: the ssh configuration folder ") &&
                  strstr(err.msg, "/tmp is writable by others (mode 777)"),
              "%s", err.msg);
    write_file("config", 0600, "Include tmp/*.conf\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1, "a glob reads what others add");
    write_file("config", 0600, "Include tmp/new/x.conf\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1,
                 "a missing folder is as open as the one it would be made in");
    cr_assert(strstr(err.msg, "/tmp is writable by others"), "%s", err.msg);
}

Test(sshconfig, the_folders_a_wildcard_in_an_include_folder_matches_are_checked)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/d1", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file("config", 0600, "Include d*/x.conf\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), 0, "%s", err.msg);
    cr_assert_eq(chmod(sub, 01777), 0);
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1, "others may add d1/x.conf");
    cr_assert(strstr(err.msg, "/d1 is writable by others (mode 777)"), "%s", err.msg);
}

/* A line anywhere in the files libssh reads, in any Host or Match block, included or not,
 * however spelled: libssh may apply it. The refusal names file and line. */
Test(sshconfig, a_weak_algorithm_line_is_refused_with_file_and_line)
{
    write_file("config", 0600, "# Ciphers 3des-cbc\nHost *\n  Port 22\nInclude sub.conf\n");
    write_file("sub.conf", 0600, "Host legacy\n\n  \"HostKeyAlgorithms\"=+ssh-rsa  # old box\n");
    Error err;
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1);
    char want[512];
    snprintf(want, sizeof want,
             "%s/sub.conf:3, in \"Host legacy\" (line 1): HostKeyAlgorithms names ssh-rsa (RSA "
             "signatures with SHA-1), "
             "which tunedeck never uses",
             dir);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    cr_assert(strstr(err.msg, "allowed: ssh-ed25519"), "%s", err.msg);
    cr_assert(strstr(err.msg, "or point TUNEDECK_SSH_CONFIG at a config for tunedeck's hosts "
                              "only"),
              "%s", err.msg);
    cr_assert_eq(err.kind, ERROR_INPUT);
    write_file("sub.conf", 0600, "Match all\n\tCiphers = aes256-ctr,3des-cbc\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1);
    snprintf(want, sizeof want, "%s/sub.conf:2, in \"Match all\" (line 1): Ciphers names 3des-cbc",
             dir);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    /* libssh reads a line in 1023-byte pieces: what starts a piece is a line of its own. */
    char longline[1200];
    memset(longline, ' ', sizeof longline);
    memcpy(longline, "Host x", 6);
    snprintf(longline + 1023, sizeof longline - 1023, "Ciphers 3des-cbc\n");
    write_file("sub.conf", 0600, longline);
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1);
    snprintf(want, sizeof want, "%s/sub.conf:1, in \"Host x\" (line 1): Ciphers names 3des-cbc",
             dir);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    /* libssh reads the first word only: a comment after it names nothing. */
    write_file("sub.conf", 0600, "Ciphers aes256-ctr # not 3des-cbc\nMACs hmac-sha2-256\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), 0, "%s", err.msg);
    /* libssh 0.10.6 knows no '-' removal: the names are the list. */
    write_file("sub.conf", 0600, "MACs -hmac-md5\n");
    cr_assert_eq(sshconfig_check_trusted(config, dir, &err), -1);
    snprintf(want, sizeof want, "%s/sub.conf:1, before any Host or Match line: MACs names hmac-md5",
             dir);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
}

/* libssh reads an IdentityFile key without looking at its mode; ssh would not use it. The one
 * file the line names for this host is checked, in any Host block, and collected. */
/* The test's config and .ssh folder as libssh parses for `alias` and ends with `target`
 * (after a HostName line). */
static int identities_via(const char *alias, const char *target, Error *err, size_t *n)
{
    SshpathHost h = {target, "root", 22};
    SshmatchHost m;
    sshmatch_begin(&m, alias, target, "root");
    SshconfigHostFiles files = {0};
    int rc = sshconfig_host_files(config, ssh_dir, &h, &m, &files, err);
    *n = files.n_ids;
    sshconfig_host_files_free(&files);
    return rc;
}

static int identities(const char *host, Error *err, size_t *n)
{
    return identities_via(host, host, err, n);
}

/* The host libssh ends with for a.example under these test configs. */
static const char *target_of(const char *config)
{
    return strstr(config, "HostName 10.9.8.7") ? "10.9.8.7" : "a.example";
}

Test(sshconfig, an_identity_file_others_can_read_is_refused_with_file_and_line)
{
    make_ssh_dir();
    write_file(".ssh/work_key", 0644, "key\n");
    write_file(".ssh/a.example.key", 0600, "key\n");
    write_file("config", 0600, "Host work\n  IdentityFile ~/.ssh/work_key\n");
    Error err;
    size_t n;
    cr_assert_eq(sshconfig_check_trusted(config, ssh_dir, &err), 0, "checked per host: %s",
                 err.msg);
    cr_assert_eq(identities("work", &err, &n), -1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:2: IdentityFile ~/.ssh/work_key: the key %s/.ssh/work_key may be read by "
             "others (mode 644): refused, as ssh refuses it; chmod 600 it",
             config, dir);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    write_file("config", 0600, "Host *\n  IdentityFile %d/%h.key\n");
    cr_assert_eq(identities("a.example", &err, &n), 0, "%s", err.msg);
    cr_assert_eq(n, 1);
    write_file(".ssh/b.example.key", 0640, "key\n");
    cr_assert_eq(identities("a.example", &err, &n), 0, "another host's key");
    cr_assert_eq(identities("b.example", &err, &n), -1);
    cr_assert(strstr(err.msg, "/.ssh/b.example.key may be read by others (mode 640)"), "%s",
              err.msg);
    write_file("config", 0600,
               "IdentityFile \"%d/missing\"\nIdentityFile pkcs11:id=1\n"
               "IdentityFile pkcs11x\n");
    cr_assert_eq(identities("a.example", &err, &n), 0, "%s", err.msg);
    cr_assert_eq(n, 1, "pkcs11 names (6 characters, as libssh compares) are no files");
}

/* The glob was too loose ('[' read as a class) and too strict (id_%h matched id_*.pub). */
Test(sshconfig, an_identity_file_is_exactly_the_file_for_the_host_never_a_glob)
{
    make_ssh_dir();
    write_file(".ssh/k[1]_127.0.0.13", 0644, "key\n");
    write_file("config", 0600, "IdentityFile %d/k[1]_%h\n");
    Error err;
    size_t n;
    cr_assert_eq(identities("127.0.0.13", &err, &n), -1);
    cr_assert(strstr(err.msg, "k[1]_127.0.0.13 may be read by others (mode 644)"), "%s", err.msg);
    write_file(".ssh/id_ed25519.pub", 0644, "pub\n");
    write_file("config", 0600, "IdentityFile ~/.ssh/id_%h\n");
    cr_assert_eq(identities("127.0.0.13", &err, &n), 0, "%s", err.msg);
    write_file(".ssh/id_127.0.0.13", 0604, "key\n");
    cr_assert_eq(identities("127.0.0.13", &err, &n), -1);
    cr_assert(strstr(err.msg, "id_127.0.0.13 may be read by others (mode 604)"), "%s", err.msg);
}

/* Regression: every IdentityFile line of every Host or Match block was checked for each host,
 * so one host's world-readable key (meant for it alone) stopped every other host. */
Test(sshconfig, a_bad_key_under_another_hosts_block_does_not_stop_this_host)
{
    make_ssh_dir();
    write_file(".ssh/b_key", 0644, "key\n");
    write_file(".ssh/a_key", 0600, "key\n");
    write_file("config", 0600,
               "Host b.example\n  IdentityFile ~/.ssh/b_key\n"
               "Match host b.example\n  IdentityFile ~/.ssh/b_key\n"
               "Host *.example,!a.example\n  IdentityFile ~/.ssh/b_key\n"
               "Host a.example\n  IdentityFile ~/.ssh/a_key\n  IdentityFile ~/.ssh/missing\n");
    Error err;
    size_t n;
    cr_assert_eq(identities("a.example", &err, &n), 0, "%s", err.msg);
    cr_assert_eq(n, 2, "its own key and its missing one, no other host's");
    cr_assert_eq(identities("b.example", &err, &n), -1, "b's own block");
    cr_assert(strstr(err.msg, "config:2: IdentityFile ~/.ssh/b_key"), "%s", err.msg);
}

Test(sshconfig, a_bad_key_under_this_hosts_block_or_host_star_still_stops_it)
{
    make_ssh_dir();
    write_file(".ssh/open_key", 0640, "key\n");
    static const char *const CONFIGS[] = {
        "Host A.EXAMPLE\n  IdentityFile ~/.ssh/open_key\n", /* Host lowers its patterns */
        "Host *\n  IdentityFile ~/.ssh/open_key\n",
        "Host c.example a.exa?ple\n  IdentityFile ~/.ssh/open_key\n",
        "IdentityFile ~/.ssh/open_key\nHost other\n", /* before any Host line */
        "Match all\n  IdentityFile ~/.ssh/open_key\n",
        "Match host a.*,x user root\n  IdentityFile ~/.ssh/open_key\n",
        "Match exec false\n  IdentityFile ~/.ssh/open_key\n", /* not run again: counts */
        /* libssh 0.10.6 takes the first word that matches: the negation comes too late */
        "Host * !a.example\n  IdentityFile ~/.ssh/open_key\n",
        /* an alias's HostName is what later Host lines match */
        "Host a.example\n  HostName 10.9.8.7\nHost 10.9.8.7\n  IdentityFile ~/.ssh/open_key\n",
    };
    Error err;
    size_t n;
    for (size_t i = 0; i < sizeof CONFIGS / sizeof *CONFIGS; i++) {
        write_file("config", 0600, CONFIGS[i]);
        cr_assert_eq(identities_via("a.example", target_of(CONFIGS[i]), &err, &n), -1, "%s",
                     CONFIGS[i]);
        cr_assert(strstr(err.msg, "open_key may be read by others (mode 640)"), "%s", err.msg);
    }
    static const char *const OTHERS[] = {
        "Host *,!a.example\n  IdentityFile ~/.ssh/open_key\n",
        "Host !a.example *\n  IdentityFile ~/.ssh/open_key\n",
        "Match host a.example user bob\n  IdentityFile ~/.ssh/open_key\n",
        "Match !all\n  IdentityFile ~/.ssh/open_key\n",
        "Match originalhost a.example\n  IdentityFile ~/.ssh/open_key\n", /* never, in 0.10.6 */
        "Match host A.example\n  IdentityFile ~/.ssh/open_key\n",         /* Match does not lower */
        "Host a.example\n  HostName 10.9.8.7\nHost a.example\n  IdentityFile ~/.ssh/open_key\n",
        "Host other\n  Include ~/.ssh/other.conf\n",
    };
    write_file(".ssh/other.conf", 0600, "IdentityFile ~/.ssh/open_key\n");
    for (size_t i = 0; i < sizeof OTHERS / sizeof *OTHERS; i++) {
        write_file("config", 0600, OTHERS[i]);
        cr_assert_eq(identities_via("a.example", target_of(OTHERS[i]), &err, &n), 0, "%s: %s",
                     OTHERS[i], err.msg);
        cr_assert_eq(n, 0, "%s", OTHERS[i]);
    }
}

/* libssh reads HostName user@host as a user and a host; under a Match exec block (which
 * tunedeck does not run a second time) whether later Match user lines see that user cannot be
 * known: refused, naming the file and line, rather than guessed. */
Test(sshconfig, a_hostname_with_a_user_under_match_exec_is_refused_with_file_and_line)
{
    make_ssh_dir();
    write_file("config", 0600, "Host a.example\n  User bob\nMatch exec true\n  HostName alice@10.9.8.7\n");
    Error err;
    size_t n;
    cr_assert_eq(identities_via("a.example", "10.9.8.7", &err, &n), -1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:4: HostName alice@10.9.8.7 sets the user alice (libssh reads user@host as a "
             "user and a host) under a Match exec block",
             config);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    write_file("config", 0600, "Match exec true\n  HostName 10.9.8.7\n");
    cr_assert_eq(identities_via("a.example", "10.9.8.7", &err, &n), 0,
                 "a host alone is no guess: %s", err.msg);
    write_file("config", 0600, "Host a.example\n  HostName alice@10.9.8.7\n");
    cr_assert_eq(identities_via("a.example", "10.9.8.7", &err, &n), 0,
                 "outside Match exec libssh's answer is known: %s", err.msg);
}

/* The RevokedHostKeys files tunedeck reads for one host (sshconfig_host_files), joined by
 * ';' with where each came from. */
static int revoked_for(const char *alias, char *out, size_t cap, Error *err)
{
    SshpathHost h = {alias, "root", 2222};
    SshmatchHost m;
    sshmatch_begin(&m, alias, alias, "root");
    SshconfigHostFiles files = {0};
    int rc = sshconfig_host_files(config, ssh_dir, &h, &m, &files, err);
    out[0] = 0;
    for (size_t i = 0; i < files.n_revoked; i++) {
        const char *where = strrchr(files.revoked[i].where, ':');
        snprintf(out + strlen(out), cap - strlen(out), "%s%s@%s", i ? ";" : "",
                 strrchr(files.revoked[i].file, '/') + 1, where + 1);
    }
    sshconfig_host_files_free(&files);
    return rc;
}

/* ssh keeps the first RevokedHostKeys value that applies; a Match exec block may or may
 * not apply, so its file is read as well as the first that surely does: never fewer keys
 * refused than ssh refuses. %h, %p and ~ are expanded for the host, as ssh expands them. */
Test(sshconfig, revoked_host_keys_are_the_first_file_that_applies_and_any_match_exec_before_it)
{
    make_ssh_dir();
    write_file("config", 0600,
               "Host other\n  RevokedHostKeys /x/other\n"
               "Match exec true\n  RevokedHostKeys /x/maybe-%h\n"
               "Host a b\n  RevokedHostKeys /x/first-%h-%p\n"
               "Host *\n  RevokedHostKeys ~/later\n");
    char got[512];
    Error err;
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), 0, "%s", err.msg);
    cr_assert_str_eq(got, "maybe-a@4;first-a-2222@6");
    cr_assert_eq(revoked_for("c", got, sizeof got, &err), 0, "%s", err.msg);
    cr_assert_str_eq(got, "maybe-c@4;later@8");
}

Test(sshconfig, a_revoked_host_keys_line_without_a_file_or_that_cannot_expand_is_refused)
{
    make_ssh_dir();
    write_file("config", 0600, "Host a\n  RevokedHostKeys\n");
    char got[512];
    Error err;
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), -1);
    cr_assert(strstr(err.msg, "config:2: RevokedHostKeys without a file"), "%s", err.msg);
    cr_assert_eq(revoked_for("b", got, sizeof got, &err), 0, "another host's line: %s", err.msg);
    write_file("config", 0600, "Host a\n  RevokedHostKeys /x/%Z\n");
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), -1);
    cr_assert(strstr(err.msg, "config:2: RevokedHostKeys /x/%Z: cannot expand it"), "%s",
              err.msg);
    /* regression: expanded past the 1023 bytes kept, it was cut short: another file */
    char line[256] = "Host a\n  RevokedHostKeys ";
    for (int i = 0; i < 40; i++)
        strcat(line, "%d"); /* the .ssh folder: over 25 bytes each */
    strcat(line, "\n");
    write_file("config", 0600, line);
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), -1);
    cr_assert(strstr(err.msg, "config:2: RevokedHostKeys ") &&
                  strstr(err.msg, "...: longer than 1023 bytes once expanded"),
              "%s", err.msg);
}

/* Regression: "none" was read as a file named none, which cannot be read, so the host was
 * refused where ssh revokes nothing (readconf.c clears a "none" RevokedHostKeys value). */
Test(sshconfig, revoked_host_keys_none_names_no_file_and_ends_the_list_where_it_surely_applies)
{
    make_ssh_dir();
    write_file("config", 0600,
               "Host a\n  RevokedHostKeys none\n"
               "Host *\n  RevokedHostKeys /x/later\n");
    char got[512];
    Error err;
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), 0, "%s", err.msg);
    cr_assert_str_eq(got, "");
    cr_assert_eq(revoked_for("c", got, sizeof got, &err), 0, "%s", err.msg);
    cr_assert_str_eq(got, "later@4");
    /* under Match exec it may not apply: the next line that surely does still counts */
    write_file("config", 0600,
               "Match exec true\n  RevokedHostKeys none\n"
               "Host *\n  RevokedHostKeys /x/later\n");
    cr_assert_eq(revoked_for("a", got, sizeof got, &err), 0, "%s", err.msg);
    cr_assert_str_eq(got, "later@4");
}

/* What the config says of the host `alias` (root, port 2222): its HashKnownHosts, or whether
 * an IdentityAgent line may apply to it. */
static SshconfigHostFiles files_for(const char *alias)
{
    SshpathHost h = {alias, "root", 2222};
    SshmatchHost m;
    sshmatch_begin(&m, alias, alias, "root");
    SshconfigHostFiles files = {0};
    Error err;
    cr_assert_eq(sshconfig_host_files(config, ssh_dir, &h, &m, &files, &err), 0, "%s", err.msg);
    return files;
}

static int hashes_for(const char *alias)
{
    SshconfigHostFiles files = files_for(alias);
    int hash = files.hash_known_hosts;
    sshconfig_host_files_free(&files);
    return hash;
}

/* HashKnownHosts, which libssh ignores: ssh's first value that applies to the host decides
 * (Debian's /etc/ssh/ssh_config has it under Host *); a Match exec "yes" counts as well. */
Test(sshconfig, hash_known_hosts_is_the_first_value_that_applies)
{
    make_ssh_dir();
    write_file("config", 0600,
               "Host other\n  HashKnownHosts no\n"
               "Host plain\n  HashKnownHosts no\n"
               "Host *\n  HashKnownHosts yes\n");
    cr_assert_eq(hashes_for("a"), 1);
    cr_assert_eq(hashes_for("plain"), 0);
    write_file("config", 0600, "Host *\n  ForwardX11 no\n");
    cr_assert_eq(hashes_for("a"), 0, "not said: clear, as ssh's default");
    write_file("config", 0600, "Match exec true\n  HashKnownHosts yes\nHost *\n  HashKnownHosts no\n");
    cr_assert_eq(hashes_for("a"), 1);
    write_file("config", 0600, "HashKnownHosts=yes\n");
    cr_assert_eq(hashes_for("a"), 1, "key=value, before any Host line");
}

/* The IdentityAgent socket the config names for `alias`, "socket@line" ("" none; "?" when
 * which one libssh asks is not known), after the Match exec lines' ones, each "[socket@line] "
 * ("[@line] " for one that leaves SSH_AUTH_SOCK's). */
static void agent_for(const char *alias, char *out, size_t cap)
{
    SshconfigHostFiles files = files_for(alias);
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < files.n_agent_maybe; i++) {
        const char *at = strrchr(files.agent_maybe[i].where, ':');
        used += (size_t)snprintf(out + used, cap - used, "[%s@%s] ", files.agent_maybe[i].file,
                                 at ? at + 1 : "");
    }
    const char *at = strrchr(files.agent.where, ':');
    if (files.agent_unknown)
        snprintf(out + used, cap - used, "?");
    else if (files.agent.file[0])
        snprintf(out + used, cap - used, "%s@%s", files.agent.file, at ? at + 1 : "");
    sshconfig_host_files_free(&files);
}

/* IdentityAgent replaces SSH_AUTH_SOCK for libssh: a failed login names that socket, so the
 * one libssh asks is kept. Regression: any line that might apply was only noted, and a
 * failed login said "no agent key was accepted" even for `IdentityAgent none`, which asks no
 * agent, or a socket nothing listens on. */
Test(sshconfig, the_first_identity_agent_line_that_applies_names_the_socket_libssh_asks)
{
    char got[1200], want[1200];
    make_ssh_dir();
    write_file("config", 0600,
               "Host other\n  IdentityAgent /x/other\n"
               "Host a\n  IdentityAgent none\n"
               "Host *\n  IdentityAgent ~/agent.sock\n  IdentityAgent /x/later\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "none@4", "libssh keeps the first value: none is a file name to it");
    agent_for("other", got, sizeof got);
    cr_assert_str_eq(got, "/x/other@2");
    agent_for("c", got, sizeof got);
    const struct passwd *pw = getpwuid(getuid());
    snprintf(want, sizeof want, "%s/agent.sock@6", pw->pw_dir); /* libssh's ~ */
    cr_assert_str_eq(got, want);
    write_file("config", 0600,
               "Match exec true\n  IdentityAgent /x/agent\n"
               "Host *\n  IdentityAgent none\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "[/x/agent@2] none@4",
                     "libssh takes a Match exec line only if its command succeeded (seen is "
                     "set only then): the next line is the one asked otherwise");
    write_file("config", 0600,
               "Match exec false\n  IdentityAgent\n"
               "Match !exec true\n  IdentityAgent ~/a.sock\n"
               "Host *\n  IdentityAgent /x/sure\n  IdentityAgent /x/never\n"
               "Match exec true\n  IdentityAgent /x/after\n");
    agent_for("a", got, sizeof got);
    snprintf(want, sizeof want, "[@2] [%s/a.sock@4] /x/sure@6", pw->pw_dir);
    cr_assert_str_eq(got, want, "each Match exec line before the sure one, none after it");
    write_file("config", 0600,
               "Match exec a\n IdentityAgent /1\nMatch exec b\n IdentityAgent /2\n"
               "Match exec c\n IdentityAgent /3\nMatch exec d\n IdentityAgent /4\n"
               "Match exec e\n IdentityAgent /5\nHost *\n IdentityAgent /6\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "[/1@2] [/2@4] [/3@6] [/4@8] ?", "past 4 of them: not known");
    write_file("config", 0600, "Host *\n  IdentityAgent\n  IdentityAgent /x/later\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "", "an empty first line leaves SSH_AUTH_SOCK's (libssh's `seen`)");
    write_file("config", 0600, "Host *\n  ForwardAgent no\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "");
    write_file("config", 0600, "Host *\n  IdentityAgent ~no-such-user-here/agent\n");
    agent_for("a", got, sizeof got);
    cr_assert_str_eq(got, "", "an unknown ~user leaves SSH_AUTH_SOCK's");
}

/* An IdentityAgent line may be uncertain for want of a Match exec of its own: its Host block
 * hangs on a HostName under Match exec (which host libssh held), its `Match user` on a User
 * line under one (which user). Regression: a failed login said of each "if the Match exec
 * command of IdentityAgent at X succeeded", a command that line's block does not have. Now
 * the words name the block and the line it hangs on, as sshmatch decided them. */
Test(sshconfig, an_uncertain_identity_agent_says_what_its_block_hangs_on)
{
    make_ssh_dir();
    write_file("config", 0600,
               "Match exec true\n  HostName real.example\n"        /* 1-2 */
               "Host real.example\n  IdentityAgent /x/host-sock\n" /* 3-4 */
               "Match exec false\n  User alice\n"                  /* 5-6 */
               "Match user bob\n  IdentityAgent /x/user-sock\n"    /* 7-8 */
               "Match exec true host a\n  IdentityAgent /x/both\n" /* 9-10 */
               "Host *\n  IdentityAgent /x/sure\n");               /* 11-12 */
    SshpathHost h = {"real.example", NULL, 22};
    SshmatchHost m;
    sshmatch_begin(&m, "a", "real.example", NULL); /* no user yet: the User line may set it */
    SshconfigHostFiles files = {0};
    Error err = {0};
    cr_assert_eq(sshconfig_host_files(config, ssh_dir, &h, &m, &files, &err), 0, "%s", err.msg);
    cr_assert_eq(files.n_agent_maybe, 3);
    AuthAgent a = {.config_sock = files.agent.file,
                   .config_where = files.agent.where,
                   .connect_errno = ENOENT,
                   .n_maybe = files.n_agent_maybe};
    for (size_t i = 0; i < files.n_agent_maybe; i++)
        a.maybe[i] = (AuthMaybe){.sock = files.agent_maybe[i].file,
                                 .where = files.agent_maybe[i].where,
                                 .connect_errno = i ? ENOENT : 0,
                                 .cond = &files.agent_maybe_if[i]};
    char got[4096], want[4096];
    authwords_agent(&a, got, sizeof got);
    snprintf(want, sizeof want,
             "no agent key was accepted, if an agent was asked: libssh asked /x/host-sock "
             "(answers) if IdentityAgent at %s:4 applied (its Host line at %s:3 hangs on "
             "whether the HostName at %s:2 took effect), else /x/user-sock (does not answer: No "
             "such file or directory) if IdentityAgent at %s:8 applied (its Match line at %s:7 "
             "hangs on which user the User line at %s:6 left), else /x/both (does not answer: "
             "No such file or directory) if IdentityAgent at %s:10 applied (its Match line at "
             "%s:9 hangs on its exec command and on whether the HostName at %s:2 took effect), "
             "else /x/sure (does not answer: No such file or directory)",
             config, config, config, config, config, config, config, config, config);
    cr_assert_str_eq(got, want);
    a.maybe[0].connect_errno = ENOENT; /* none answers: each said with what it hangs on */
    authwords_agent(&a, got, sizeof got);
    snprintf(want, sizeof want,
             "no agent answers at /x/sure (from IdentityAgent at %s:12): No such file or "
             "directory; nor at /x/host-sock (IdentityAgent at %s:4, whose Host line at %s:3 "
             "hangs on whether the HostName at %s:2 took effect): No such file or directory",
             config, config, config, config);
    cr_assert(strncmp(got, want, strlen(want)) == 0, "%s", got);
    sshconfig_host_files_free(&files);
}
