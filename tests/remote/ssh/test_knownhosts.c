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

/* Regression (docs/remote.md walkthrough): with two folders missing, accepting a key failed
 * with a bare "cannot open .../kh to add the host key: No such file or directory". Only the
 * file's own folder is created (0700), in a folder that exists and passes the trust rules;
 * deeper, nothing is created and the message names the folders and the command. */
Test(knownhosts, append_creates_one_missing_folder_and_names_a_deeper_one)
{
    char file[192], folder[160], above[128];
    snprintf(above, sizeof above, "%s/a", dir);
    snprintf(folder, sizeof folder, "%s/b", above);
    snprintf(file, sizeof file, "%s/kh", folder);
    Error err;
    cr_assert_eq(knownhosts_append(file, "h ssh-ed25519 AAAA1", &err), -1);
    cr_assert(strstr(err.msg, folder) && strstr(err.msg, "is missing, and so is") &&
                  strstr(err.msg, above) && strstr(err.msg, "mkdir -p -m 700") &&
                  strstr(err.msg, "nothing written"),
              "%s", err.msg);
    struct stat st;
    cr_assert_neq(stat(above, &st), 0, "nothing is created");
    cr_assert_lt(knownhosts_lock(file, &err), 0, "the lock (the first open) refuses alike");
    cr_assert(strstr(err.msg, "is missing, and so is"), "%s", err.msg);
    /* one level missing, in a folder others can write: not created there */
    cr_assert_eq(mkdir(above, 0700), 0);
    chmod(above, 0777);
    cr_assert_eq(knownhosts_append(file, "h ssh-ed25519 AAAA1", &err), -1);
    cr_assert(strstr(err.msg, "known_hosts folder") && strstr(err.msg, above) &&
                  strstr(err.msg, "writable by others"),
              "%s", err.msg);
    cr_assert_neq(stat(folder, &st), 0, "nothing is created");
    chmod(above, 0755);
    cr_assert_eq(knownhosts_append(file, "h ssh-ed25519 AAAA1", &err), 0, "%s", err.msg);
    cr_assert_eq(stat(folder, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700);
    cr_assert_eq(stat(file, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
}

/* Regression: a known_hosts that others could write (an inventory's "known_hosts" in a
 * shared folder, a group-writable ~/.ssh) was trusted, so anyone able to write it could
 * add their own key for any host and pass the host-key check. */
Test(knownhosts, a_file_or_folder_others_can_write_is_not_trusted)
{
    char sub[128], file[160];
    snprintf(sub, sizeof sub, "%s/ssh", dir);
    snprintf(file, sizeof file, "%s/known_hosts", sub);
    Error err;
    cr_assert_eq(knownhosts_check_private(file, &err), 0, "a missing file is created private");
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file(file, "h ssh-ed25519 AAAA\n");
    chmod(file, 0644);
    cr_assert_eq(knownhosts_check_private(file, &err), 0, "%s", err.msg);
    chmod(file, 0666);
    cr_assert_eq(knownhosts_check_private(file, &err), -1);
    cr_assert(strstr(err.msg, file) && strstr(err.msg, "writable by others (mode 666)"),
              "%s", err.msg);
    chmod(file, 0602);
    cr_assert_eq(knownhosts_check_private(file, &err), -1);
    cr_assert(strstr(err.msg, "writable by others (mode 602)"), "%s", err.msg);
    chmod(file, 0600);
    chmod(sub, 0770);
    cr_assert_eq(knownhosts_check_private(file, &err), -1);
    cr_assert(strstr(err.msg, "folder") && strstr(err.msg, sub), "%s", err.msg);
    chmod(sub, 01777); /* a shared sticky folder: only the file's owner can replace it */
    cr_assert_eq(knownhosts_check_private(file, &err), 0, "%s", err.msg);
    chmod(sub, 0700);
}

/* Regression: a known_hosts setting naming a folder read as an empty file, so every host
 * was "not in" it (an unknown key) instead of the setting being wrong; an unreadable file
 * likewise. The check names the path and what was expected. */
Test(knownhosts, a_folder_or_unreadable_file_is_not_a_known_hosts_file)
{
    char sub[128], file[160];
    snprintf(sub, sizeof sub, "%s/kh", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    Error err;
    cr_assert_eq(knownhosts_check_private(sub, &err), -1);
    cr_assert(strstr(err.msg, sub) && strstr(err.msg, "is a directory, not a known_hosts file"),
              "%s", err.msg);
    snprintf(file, sizeof file, "%s/known_hosts", sub);
    write_file(file, "h ssh-ed25519 AAAA\n");
    chmod(file, 0200);
    if (geteuid() != 0) {
        cr_assert_eq(knownhosts_check_private(file, &err), -1);
        cr_assert(strstr(err.msg, file) && strstr(err.msg, "Permission denied"), "%s", err.msg);
    }
    chmod(file, 0600);
    cr_assert_eq(knownhosts_check_private(file, &err), 0, "%s", err.msg);
}

Test(knownhosts, a_file_of_another_user_is_not_trusted)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give the file away");
    char file[128];
    snprintf(file, sizeof file, "%s/kh", dir);
    write_file(file, "h ssh-ed25519 AAAA\n");
    cr_assert_eq(chown(file, 4242, 4242), 0);
    chmod(file, 0644);
    Error err;
    cr_assert_eq(knownhosts_check_private(file, &err), -1);
    cr_assert(strstr(err.msg, "belongs to uid 4242"), "%s", err.msg);
}

Test(knownhosts, a_negated_pattern_excludes_its_host_from_the_line)
{
    const char *line = "![h1]:2222,[h*]:2222 ssh-ed25519 AAAAkey\n";
    cr_assert_eq(knownhosts_line_excludes(line, "[h1]:2222"), 1);
    cr_assert_eq(knownhosts_line_excludes(line, "[H1]:2222"), 1, "host names ignore case");
    cr_assert_eq(knownhosts_line_excludes(line, "[h2]:2222"), 0);
    cr_assert_eq(knownhosts_line_excludes("!login*,* ssh-ed25519 AAAA\n", "login3"), 1);
    cr_assert_eq(knownhosts_line_excludes("!login?,* ssh-ed25519 AAAA\n", "login33"), 0);
    cr_assert_eq(knownhosts_line_excludes("![h1]:22,* ssh-ed25519 AAAA\n", "h1"), 1,
                 "a bracketed pattern with port 22 names the bare host, as libssh reads it");
    cr_assert_eq(knownhosts_line_excludes("h1,!h2 ssh-ed25519 AAAA\n", "h1"), 0);
    cr_assert_eq(knownhosts_line_excludes("@revoked !h1 ssh-ed25519 AAAA\n", "h1"), 0,
                 "marker lines are not libssh's to read");
    cr_assert_eq(knownhosts_line_excludes("# !h1 ssh-ed25519 AAAA\n", "h1"), 0);
    cr_assert_eq(knownhosts_line_excludes("h1 ssh-ed25519 AAAA!h1\n", "h1"), 0,
                 "only the host field holds patterns");
}

Test(knownhosts, the_view_drops_exactly_the_lines_that_exclude_the_host)
{
    char file[128];
    snprintf(file, sizeof file, "%s/kh", dir);
    write_file(file, "h2 ssh-ed25519 AAAAtwo\n"
                     "!h1,h* ssh-ed25519 AAAAcluster\n"
                     "h1 ssh-rsa AAAAone\n");
    char view[256];
    int fd;
    Error err;
    cr_assert_eq(knownhosts_view(file, "h3", view, sizeof view, &fd, &err), 0);
    cr_assert_eq(fd, -1, "nothing excludes h3: the file itself is read");
    cr_assert_str_eq(view, file);
    cr_assert_eq(knownhosts_view(file, "h1", view, sizeof view, &fd, &err), 0);
    cr_assert_geq(fd, 0);
    FILE *f = fopen(view, "r");
    cr_assert(f, "%s", view);
    char text[256] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    close(fd);
    text[n] = 0;
    cr_assert_str_eq(text, "h2 ssh-ed25519 AAAAtwo\nh1 ssh-rsa AAAAone\n");
}

Test(knownhosts, a_link_into_a_folder_others_can_write_is_not_private)
{
    char shared[128], file[128], link[128];
    snprintf(shared, sizeof shared, "%s/shared", dir);
    snprintf(file, sizeof file, "%s/shared/kh", dir);
    snprintf(link, sizeof link, "%s/kh", dir);
    cr_assert_eq(mkdir(shared, 0700), 0);
    write_file(file, "h1 ssh-ed25519 AAAA\n");
    chmod(file, 0644);
    cr_assert_eq(symlink(file, link), 0);
    Error err;
    cr_assert_eq(knownhosts_check_private(link, &err), 0, "%s", err.msg);
    chmod(shared, 0777);
    cr_assert_eq(knownhosts_check_private(link, &err), -1);
    cr_assert(strstr(err.msg, "known_hosts folder") && strstr(err.msg, "/shared is writable by"),
              "%s", err.msg);
}

/* A link is repointed by whoever owns it (also in a sticky folder such as /tmp) or can write
 * its folder: a link another user owns, and a link on the way whose folder others can write,
 * are not trusted, even when what they point to now is private. */
Test(knownhosts, a_link_another_user_owns_or_could_replace_is_not_private)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give the link away");
    char priv[128], file[160], shared[128], link[160], hop_dir[128], hop[160], first[160];
    snprintf(priv, sizeof priv, "%s/priv", dir);
    snprintf(file, sizeof file, "%s/priv/kh", dir);
    snprintf(shared, sizeof shared, "%s/tmp", dir);
    snprintf(link, sizeof link, "%s/tmp/kh", dir);
    cr_assert_eq(mkdir(priv, 0700), 0);
    cr_assert_eq(mkdir(shared, 0700), 0);
    chmod(shared, 01777);
    write_file(file, "h1 ssh-ed25519 AAAA\n");
    chmod(file, 0600);
    cr_assert_eq(symlink(file, link), 0);
    Error err;
    cr_assert_eq(knownhosts_check_private(link, &err), 0, "%s", err.msg);
    cr_assert_eq(lchown(link, 4242, 4242), 0);
    cr_assert_eq(knownhosts_check_private(link, &err), -1, "a link uid 4242 may repoint");
    cr_assert(strstr(err.msg, "the link") && strstr(err.msg, "/tmp/kh belongs to uid 4242"), "%s",
              err.msg);
    /* the same through a folder of the path that is such a link: tmp/sshdir -> priv */
    char sshdir[160], via[200];
    snprintf(sshdir, sizeof sshdir, "%s/tmp/sshdir", dir);
    snprintf(via, sizeof via, "%s/tmp/sshdir/kh", dir);
    cr_assert_eq(symlink(priv, sshdir), 0);
    cr_assert_eq(knownhosts_check_private(via, &err), 0, "%s", err.msg);
    cr_assert_eq(lchown(sshdir, 4242, 4242), 0);
    cr_assert_eq(knownhosts_check_private(via, &err), -1, "a folder link uid 4242 may repoint");
    cr_assert(strstr(err.msg, "/tmp/sshdir belongs to uid 4242"), "%s", err.msg);
    /* relative names and '..' are walked the same way */
    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(priv), 0);
    cr_assert_eq(knownhosts_check_private("../tmp/sshdir/kh", &err), -1);
    cr_assert(strstr(err.msg, "/tmp/sshdir belongs to uid 4242"), "%s", err.msg);
    cr_assert_eq(knownhosts_check_private("kh", &err), 0, "%s", err.msg);
    cr_assert_eq(chdir(cwd), 0);
    /* a link whose own folder is private, to a link in a group-writable folder, to the file */
    snprintf(hop_dir, sizeof hop_dir, "%s/grp", dir);
    snprintf(hop, sizeof hop, "%s/grp/kh", dir);
    snprintf(first, sizeof first, "%s/priv/first", dir);
    cr_assert_eq(mkdir(hop_dir, 0770), 0);
    chmod(hop_dir, 0770);
    cr_assert_eq(symlink(file, hop), 0);
    cr_assert_eq(symlink("../grp/kh", first), 0);
    cr_assert_eq(knownhosts_check_private(first, &err), -1, "the middle link's folder is shared");
    cr_assert(strstr(err.msg, "known_hosts folder") && strstr(err.msg, "/grp is writable by"),
              "%s", err.msg);
    chmod(hop_dir, 0700);
    cr_assert_eq(knownhosts_check_private(first, &err), 0, "%s", err.msg);
}

/* The file appended to is the file checked: one that another user owns or others can write
 * (put there after the check, in a shared folder) gets no key. */
Test(knownhosts, append_refuses_a_file_others_could_write)
{
    char file[128];
    snprintf(file, sizeof file, "%s/kh", dir);
    write_file(file, "a ssh-ed25519 AAAA1\n");
    chmod(file, 0666);
    Error err;
    cr_assert_eq(knownhosts_append(file, "b ssh-ed25519 AAAA2", &err), -1);
    cr_assert(strstr(err.msg, file) && strstr(err.msg, "nothing written"), "%s", err.msg);
    FILE *f = fopen(file, "r");
    char text[128];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    cr_assert_str_eq(text, "a ssh-ed25519 AAAA1\n");
    if (geteuid() == 0) {
        chmod(file, 0644);
        cr_assert_eq(chown(file, 4242, 4242), 0);
        cr_assert_eq(knownhosts_append(file, "b ssh-ed25519 AAAA2", &err), -1);
        cr_assert(strstr(err.msg, "uid 4242"), "%s", err.msg);
    }
}

/* HashKnownHosts: the name becomes |1|salt|HMAC-SHA1(salt, name), the rest of the line
 * stays (expected values from Python's hmac module; trust.sh has ssh-keygen -F find one). */
Test(knownhosts, an_entry_is_hashed_as_ssh_hashes_it)
{
    unsigned char salt[20];
    for (int i = 0; i < 20; i++)
        salt[i] = (unsigned char)i;
    char out[256];
    Error err;
    cr_assert_eq(knownhosts_hash_entry("[h1]:2222 ssh-ed25519 AAAAkey\n", salt, out, sizeof out,
                                       &err),
                 0, "%s", err.msg);
    cr_assert_str_eq(out, "|1|AAECAwQFBgcICQoLDA0ODxAREhM=|Ad3wqbikoQO0pnP7YEQOueKro6Q= "
                          "ssh-ed25519 AAAAkey");
    cr_assert_eq(knownhosts_hash_entry("login.example.org ecdsa-sha2-nistp256 AAAAe", salt, out,
                                       sizeof out, &err),
                 0, "%s", err.msg);
    cr_assert_str_eq(out, "|1|AAECAwQFBgcICQoLDA0ODxAREhM=|LPF65oOoBmUY3aZ1sc39DQN7yEU= "
                          "ecdsa-sha2-nistp256 AAAAe");
    cr_assert_eq(knownhosts_hash_entry("h1", salt, out, sizeof out, &err), -1);
    cr_assert(strstr(err.msg, "expected a host name and a key"), "%s", err.msg);
    cr_assert_eq(knownhosts_hash_entry("h1 ssh-ed25519 AAAAkey", salt, out, 40, &err), -1);
}

Test(knownhosts, a_cert_authority_line_for_the_host_is_found_by_its_number)
{
    char file[128];
    snprintf(file, sizeof file, "%s/kh", dir);
    write_file(file, "[h1]:2222 ssh-ed25519 AAAAgood\n"
                     "# @cert-authority * ssh-ed25519 AAAAcommented\n"
                     "@cert-authority *.lab,!login.lab ssh-ed25519 AAAAca\n"
                     "@revoked [h2]:2222 ssh-ed25519 AAAAbad\n"
                     "  @cert-authority  [h2]:2222,[h3]:* ssh-ed25519 AAAAca2\n");
    cr_assert_eq(knownhosts_cert_authority(file, "n1.LAB"), 3, "patterns match case-blind");
    cr_assert_eq(knownhosts_cert_authority(file, "login.lab"), 0, "a negated pattern rules it out");
    cr_assert_eq(knownhosts_cert_authority(file, "[h2]:2222"), 5);
    cr_assert_eq(knownhosts_cert_authority(file, "[h3]:22"), 5);
    cr_assert_eq(knownhosts_cert_authority(file, "[h1]:2222"), 0, "a plain key line is no CA");
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none", dir);
    cr_assert_eq(knownhosts_cert_authority(missing, "h1"), 0);
}
