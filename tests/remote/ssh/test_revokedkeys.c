/* RevokedHostKeys files as ssh-keygen writes them: key lists and KRLs, made here by the real
 * ssh-keygen, and the ways they can be wrong. */
#include <criterion/criterion.h>
#include <libssh/libssh.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/ssh/revokedkeys.h"

static char dir[64];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Two host keys (ed25519 and RSA) and a CA key, made fresh for each test. */
static void make_keys(void)
{
    snprintf(dir, sizeof dir, "/tmp/td-krl.XXXXXX");
    cr_assert(mkdtemp(dir));
    run("cd '%s' && ssh-keygen -q -t ed25519 -N '' -C one -f k1 && "
        "ssh-keygen -q -t rsa -b 2048 -N '' -C two -f k2 && "
        "ssh-keygen -q -t ed25519 -N '' -C ca -f ca",
        dir);
}

static void remove_dir(void)
{
    run("rm -rf '%s'", dir);
}

TestSuite(revokedkeys, .init = make_keys, .fini = remove_dir);

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* The query tunedeck builds for a host that offers `name`.pub: libssh's base64 and digests. */
static RevokedKeyQuery *query_for(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.pub", dir, name);
    ssh_key key = NULL;
    cr_assert_eq(ssh_pki_import_pubkey_file(path, &key), SSH_OK);
    char *b64 = NULL;
    cr_assert_eq(ssh_pki_export_pubkey_base64(key, &b64), SSH_OK);
    RevokedKeyQuery *q = calloc(1, sizeof *q);
    cr_assert(q);
    cr_assert_eq(revokedkeys_query_blob(q, b64), 0);
    unsigned char *hash;
    size_t len;
    cr_assert_eq(ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA1, &hash, &len), 0);
    cr_assert_eq(len, 20);
    memcpy(q->sha1, hash, 20);
    ssh_clean_pubkey_hash(&hash);
    cr_assert_eq(ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len), 0);
    cr_assert_eq(len, 32);
    memcpy(q->sha256, hash, 32);
    ssh_clean_pubkey_hash(&hash);
    ssh_string_free_char(b64);
    ssh_key_free(key);
    return q;
}

/* revokedkeys_file on dir/name for k1 and k2: 2 bits, k1 listed | k2 listed, or -1. */
static int listed(const char *name, Error *err)
{
    char path[128];
    path_of(path, sizeof path, name);
    RevokedKeyQuery *q1 = query_for("k1"), *q2 = query_for("k2");
    int a = revokedkeys_file(path, "config:7", q1, err);
    int b = a < 0 ? -1 : revokedkeys_file(path, "config:7", q2, err);
    free(q1);
    free(q2);
    return a < 0 || b < 0 ? -1 : a | b << 1;
}

Test(revokedkeys, a_plain_list_revokes_the_keys_it_holds_and_no_other)
{
    run("cd '%s' && { echo '# retired'; echo; cat k2.pub; echo '   '; } > list", dir);
    Error err;
    cr_assert_eq(listed("list", &err), 2, "%s", err.msg);
    run("cd '%s' && cat k1.pub k2.pub > both && printf '%%s' \"$(cat k1.pub)\" > noeol", dir);
    cr_assert_eq(listed("both", &err), 3, "%s", err.msg);
    cr_assert_eq(listed("noeol", &err), 1, "%s", err.msg);
    run(": > '%s/empty'", dir);
    cr_assert_eq(listed("empty", &err), 0, "%s", err.msg);
}

Test(revokedkeys, a_line_that_is_not_a_key_fails_the_whole_file_naming_its_line)
{
    Error err;
    /* a fingerprint where a key belongs: ssh skips it, and so revokes nothing */
    run("cd '%s' && { cat k1.pub; echo; ssh-keygen -lf k2.pub; } > fp", dir);
    cr_assert_eq(listed("fp", &err), -1);
    cr_assert(strstr(err.msg, "config:7: RevokedHostKeys ") && strstr(err.msg, "/fp:3: expected "
                                                                                "a public key"),
              "%s", err.msg);
    /* the type the line names must be the blob's own */
    run("cd '%s' && sed 's/^ssh-ed25519/ssh-rsa/' k1.pub > wrongtype", dir);
    cr_assert_eq(listed("wrongtype", &err), -1);
    cr_assert(strstr(err.msg, "wrongtype:1:"), "%s", err.msg);
    /* one character off the base64 */
    run("cd '%s' && sed 's/ \\(AAAA[^ ]*\\)./ \\1/' k1.pub > cut", dir);
    cr_assert_eq(listed("cut", &err), -1);
}

Test(revokedkeys, a_krl_revokes_by_key_by_sha1_and_by_sha256)
{
    Error err;
    run("cd '%s' && ssh-keygen -q -k -f explicit k1.pub 2>/dev/null", dir);
    cr_assert_eq(listed("explicit", &err), 1, "%s", err.msg);
    run("cd '%s' && echo \"sha1: $(cat k2.pub)\" > spec && "
        "ssh-keygen -q -k -f bysha1 spec 2>/dev/null",
        dir);
    cr_assert_eq(listed("bysha1", &err), 2, "%s", err.msg);
    run("cd '%s' && echo \"hash: $(ssh-keygen -lf k2.pub | cut -d' ' -f2)\" > spec && "
        "ssh-keygen -q -k -f bysha256 spec 2>/dev/null && "
        "ssh-keygen -q -k -u -f bysha256 k1.pub 2>/dev/null",
        dir);
    cr_assert_eq(listed("bysha256", &err), 3, "%s", err.msg);
    /* ssh-keygen agrees with each verdict */
    run("cd '%s' && ssh-keygen -Q -f explicit k2.pub >/dev/null && "
        "! ssh-keygen -Q -f explicit k1.pub >/dev/null",
        dir);
}

Test(revokedkeys, certificate_sections_are_read_past_and_revoke_no_plain_key)
{
    Error err;
    run("cd '%s' && printf 'serial: 1-10\\nserial: 77\\nid: build-*\\nid: ops\\n' > spec && "
        "ssh-keygen -q -k -s ca.pub -f certs spec 2>/dev/null && "
        "ssh-keygen -q -k -u -f certs k2.pub 2>/dev/null",
        dir);
    cr_assert_eq(listed("certs", &err), 2, "%s", err.msg);
}

static size_t read_all(const char *name, unsigned char *buf, size_t cap)
{
    char path[128];
    path_of(path, sizeof path, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* Cut anywhere, a KRL never reads as revoking what it does not hold, and a cut inside a
 * field is an error naming a byte offset. */
Test(revokedkeys, a_cut_krl_is_an_error_wherever_it_is_cut_inside_a_field)
{
    run("cd '%s' && printf 'serial: 5\\n' > spec && ssh-keygen -q -k -s ca.pub -f krl spec "
        "2>/dev/null && ssh-keygen -q -k -u -f krl k1.pub 2>/dev/null",
        dir);
    unsigned char buf[4096];
    size_t n = read_all("krl", buf, sizeof buf);
    RevokedKeyQuery *q = query_for("k1");
    Error err;
    cr_assert_eq(revokedkeys_parse(buf, n, "krl", q, &err), 1, "%s", err.msg);
    size_t errors = 0;
    for (size_t cut = 8; cut < n; cut++) {
        int rc = revokedkeys_parse(buf, cut, "krl", q, &err);
        cr_assert(rc <= 0, "cut at %zu reads as revoked", cut);
        if (rc < 0) {
            cr_assert(strstr(err.msg, "krl: byte ") && strstr(err.msg, "expected "),
                      "cut at %zu: %s", cut, err.msg);
            errors++;
        }
    }
    /* only a cut between sections leaves a shorter KRL, every other one is an error */
    cr_assert_geq(errors, n - 8 - 2);
    free(q);
}

Test(revokedkeys, an_unknown_section_a_critical_extension_or_another_version_fails_closed)
{
    run("cd '%s' && ssh-keygen -q -k -f krl k2.pub 2>/dev/null", dir);
    unsigned char buf[4096];
    size_t n = read_all("krl", buf, sizeof buf);
    RevokedKeyQuery *q = query_for("k2");
    Error err;
    /* a section of type 9 with an empty body, after the header (44 bytes, no comment) */
    unsigned char more[4096];
    memcpy(more, buf, n);
    memcpy(more + n, "\x09\0\0\0\0", 5);
    cr_assert_eq(revokedkeys_parse(more, n + 5, "krl", q, &err), -1);
    cr_assert(strstr(err.msg, "section type 9: expected 1-5 or 255"), "%s", err.msg);
    /* an extension: critical fails, not critical is skipped */
    static const unsigned char ext[] = "\xff\0\0\0\x0c\0\0\0\x03new\x01\0\0\0\0";
    memcpy(more + n, ext, sizeof ext - 1);
    cr_assert_eq(revokedkeys_parse(more, n + sizeof ext - 1, "krl", q, &err), -1);
    cr_assert(strstr(err.msg, "critical KRL extension \"new\""), "%s", err.msg);
    more[n + 12] = 0;
    cr_assert_eq(revokedkeys_parse(more, n + sizeof ext - 1, "krl", q, &err), 1, "%s", err.msg);
    /* format version 2 */
    memcpy(more, buf, n);
    more[11] = 2;
    cr_assert_eq(revokedkeys_parse(more, n, "krl", q, &err), -1);
    cr_assert(strstr(err.msg, "format version 2: expected 1"), "%s", err.msg);
    free(q);
}

Test(revokedkeys, a_file_that_cannot_be_read_or_that_others_can_write_refuses)
{
    Error err;
    cr_assert_eq(listed("missing", &err), -1);
    cr_assert(strstr(err.msg, "config:7: RevokedHostKeys ") &&
                  strstr(err.msg, "missing: cannot read it (No such file or directory)"),
              "%s", err.msg);
    run("cd '%s' && cp k1.pub open && chmod 646 open", dir);
    cr_assert_eq(listed("open", &err), -1);
    cr_assert(strstr(err.msg, "is writable by others (mode 646)"), "%s", err.msg);
    run("mkdir '%s/sub'", dir);
    cr_assert_eq(listed("sub", &err), -1);
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
}

/* PROTOCOL.krl section 5: a signature section is a signing key and a signature, two strings.
 * Regression: the signature was read as the next section's type and length, so a signed KRL
 * failed as "section type 0" and refused every host. */
Test(revokedkeys, a_signature_section_is_two_strings_and_only_signatures_follow_it)
{
    run("cd '%s' && ssh-keygen -q -k -f krl k1.pub 2>/dev/null", dir);
    unsigned char buf[4096];
    size_t n = read_all("krl", buf, sizeof buf);
    RevokedKeyQuery *q = query_for("k1");
    Error err;
    static const unsigned char sig[] = "\x04\0\0\0\x03key\0\0\0\x04sig!";
    unsigned char more[4096];
    memcpy(more, buf, n);
    memcpy(more + n, sig, sizeof sig - 1);
    memcpy(more + n + sizeof sig - 1, sig, sizeof sig - 1);
    size_t signed_len = n + 2 * (sizeof sig - 1);
    cr_assert_eq(revokedkeys_parse(more, signed_len, "krl", q, &err), 1, "%s", err.msg);
    /* its signature cut off */
    cr_assert_eq(revokedkeys_parse(more, n + 8, "krl", q, &err), -1);
    cr_assert(strstr(err.msg, "expected signature"), "%s", err.msg);
    /* a key section after it */
    memcpy(more + signed_len, "\x02\0\0\0\0", 5);
    cr_assert_eq(revokedkeys_parse(more, signed_len + 5, "krl", q, &err), -1);
    cr_assert(strstr(err.msg, "section type 2 after a signature"), "%s", err.msg);
    free(q);
}

/* Regression: a line cut short by 4 base64 characters (3 bytes) still decoded with its type
 * intact and read as a key that revokes nothing; ssh-keygen refuses it. Its fields must fill
 * the blob. */
Test(revokedkeys, a_key_line_cut_by_whole_base64_quads_fails_the_file)
{
    Error err;
    run("cd '%s' && sed 's/ \\(AAAA[^ ]*\\).... / \\1 /' k1.pub > cut4 && "
        "! ssh-keygen -lf cut4 >/dev/null 2>&1",
        dir);
    cr_assert_eq(listed("cut4", &err), -1);
    cr_assert(strstr(err.msg, "cut4:1: expected a public key"), "%s", err.msg);
    /* the type alone, every field cut */
    run("cd '%s' && echo 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 typeonly' > typeonly", dir);
    cr_assert_eq(listed("typeonly", &err), -1);
    /* RSA and a certificate still read */
    run("cd '%s' && ssh-keygen -q -s ca -I host -h k1.pub && cat k2.pub k1-cert.pub > mixed", dir);
    cr_assert_eq(listed("mixed", &err), 2, "%s", err.msg);
}
