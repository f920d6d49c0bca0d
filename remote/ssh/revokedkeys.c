/* RevokedHostKeys files: a list of public keys or an OpenSSH KRL (revokedkeys.h). */
#include "remote/ssh/revokedkeys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/ownpath.h"

static const unsigned char KRL_MAGIC[8] = {'S', 'S', 'H', 'K', 'R', 'L', '\n', 0};
enum { KRL_FORMAT_VERSION = 1 };
/* PROTOCOL.krl's section types */
enum {
    KRL_CERTIFICATES = 1,
    KRL_EXPLICIT_KEY = 2,
    KRL_FINGERPRINT_SHA1 = 3,
    KRL_SIGNATURE = 4,
    KRL_FINGERPRINT_SHA256 = 5,
    KRL_EXTENSION = 255,
};
enum { MAX_FILE = 64 << 20 }; /* a revocation list of millions of keys still fits */

/* A cursor over the KRL's bytes: every read says what it expected, so that a malformed file
 * names the offset and the field. */
typedef struct {
    const unsigned char *p;
    size_t len, at;
    size_t base; /* where p starts in the file: messages name the file's offsets */
    const char *name;
    Error *err;
} Wire;

static int wire_short(Wire *w, const char *what, size_t need)
{
    error_set(w->err,
              "RevokedHostKeys %s: byte %zu: expected %s (%zu bytes), found %zu: "
              "not a well-formed KRL (ssh-keygen -k writes one)",
              w->name, w->base + w->at, what, need, w->len - w->at);
    return error_mark(w->err, ERROR_INPUT);
}

static int wire_u32(Wire *w, const char *what, uint32_t *v)
{
    if (w->len - w->at < 4)
        return wire_short(w, what, 4);
    const unsigned char *b = w->p + w->at;
    *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    w->at += 4;
    return 0;
}

static int wire_skip(Wire *w, const char *what, size_t n)
{
    if (w->len - w->at < n)
        return wire_short(w, what, n);
    w->at += n;
    return 0;
}

/* An SSH `string`: a 32-bit length, then that many bytes; *s points into the file. */
static int wire_string(Wire *w, const char *what, const unsigned char **s, size_t *n)
{
    uint32_t len = 0;
    size_t start = w->at;
    if (wire_u32(w, what, &len) < 0)
        return -1;
    if (w->len - w->at < len) {
        w->at = start;
        return wire_short(w, what, (size_t)len + 4);
    }
    *s = w->p + w->at;
    *n = len;
    w->at += len;
    return 0;
}

/* A section's body is a sequence of strings (key blobs, or digests of one size): 1 when
 * one of them is `want`. */
static int section_lists(Wire *w, const char *what, size_t size, const unsigned char *want,
                         size_t want_len)
{
    int found = 0;
    while (w->at < w->len) {
        const unsigned char *s;
        size_t n, at = w->at;
        if (wire_string(w, what, &s, &n) < 0)
            return -1;
        if (size && n != size) {
            error_set(w->err,
                      "RevokedHostKeys %s: byte %zu: expected a %s of %zu bytes, found %zu "
                      "bytes: not a well-formed KRL",
                      w->name, w->base + at, what, size, n);
            return error_mark(w->err, ERROR_INPUT);
        }
        found |= n == want_len && memcmp(s, want, n) == 0;
    }
    return found;
}

/* A certificate section: the CA's key, a reserved string, then sub-sections (a type byte and
 * a string each). Their contents revoke certificates only, so their form is all that counts. */
static int section_certificates(Wire *w)
{
    const unsigned char *s;
    size_t n;
    if (wire_string(w, "certificate section's CA key", &s, &n) < 0 ||
        wire_string(w, "certificate section's reserved field", &s, &n) < 0)
        return -1;
    while (w->at < w->len)
        if (wire_skip(w, "certificate sub-section type", 1) < 0 ||
            wire_string(w, "certificate sub-section", &s, &n) < 0)
            return -1;
    return 0;
}

/* An extension section: its name, whether it is critical, its contents. One tunedeck does
 * not know that says it is critical may revoke keys in a way this reader cannot see: fail. */
static int section_extension(Wire *w)
{
    const unsigned char *name, *s;
    size_t name_len, n;
    if (wire_string(w, "extension name", &name, &name_len) < 0 ||
        wire_skip(w, "extension's critical flag", 1) < 0)
        return -1;
    int critical = w->p[w->at - 1] != 0;
    if (wire_string(w, "extension contents", &s, &n) < 0)
        return -1;
    if (critical) {
        error_set(w->err,
                  "RevokedHostKeys %s: a critical KRL extension \"%.*s\" that tunedeck does "
                  "not know: it cannot tell which keys it revokes, so every host is refused",
                  w->name, (int)(name_len > 60 ? 60 : name_len), (const char *)name);
        return error_mark(w->err, ERROR_INPUT);
    }
    return 0;
}

static int parse_krl(const unsigned char *data, size_t len, const char *name,
                     const RevokedKeyQuery *key, Error *err)
{
    Wire w = {data, len, sizeof KRL_MAGIC, 0, name, err};
    uint32_t version = 0;
    const unsigned char *s;
    size_t n;
    if (wire_u32(&w, "format version", &version) < 0)
        return -1;
    if (version != KRL_FORMAT_VERSION) {
        error_set(err, "RevokedHostKeys %s: KRL format version %u: expected %d", name,
                  (unsigned)version, KRL_FORMAT_VERSION);
        return error_mark(err, ERROR_INPUT);
    }
    if (wire_skip(&w, "KRL version, date and flags", 24) < 0 ||
        wire_string(&w, "reserved field", &s, &n) < 0 || wire_string(&w, "comment", &s, &n) < 0)
        return -1;
    int found = 0, signed_from = 0;
    while (w.at < len) {
        size_t at = w.at;
        int type = data[w.at++];
        if (wire_string(&w, "section body", &s, &n) < 0)
            return -1;
        Wire body = {s, n, 0, (size_t)(s - data), name, err};
        int rc = 0;
        if (signed_from && type != KRL_SIGNATURE) {
            error_set(err,
                      "RevokedHostKeys %s: byte %zu: section type %d after a signature: "
                      "expected only signature sections there",
                      name, at, type);
            return error_mark(err, ERROR_INPUT);
        }
        switch (type) {
        case KRL_CERTIFICATES:
            rc = section_certificates(&body);
            break;
        case KRL_EXPLICIT_KEY:
            rc = section_lists(&body, "revoked key", 0, key->blob, key->len);
            break;
        case KRL_FINGERPRINT_SHA1:
            rc = section_lists(&body, "SHA-1 digest", 20, key->sha1, 20);
            break;
        case KRL_FINGERPRINT_SHA256:
            rc = section_lists(&body, "SHA-256 digest", 32, key->sha256, 32);
            break;
        case KRL_SIGNATURE:
            /* A signature vouches for the file; this one is yours already (revokedkeys_file).
             * Its section is two strings, the signing key (read as the body) and the
             * signature (PROTOCOL.krl section 5): the second is skipped here, or it would be
             * read as the next section. */
            signed_from = 1;
            rc = wire_string(&w, "signature", &s, &n);
            break;
        case KRL_EXTENSION:
            rc = section_extension(&body);
            break;
        default:
            error_set(err,
                      "RevokedHostKeys %s: byte %zu: KRL section type %d: expected 1-5 or "
                      "255 (PROTOCOL.krl)",
                      name, at, type);
            return error_mark(err, ERROR_INPUT);
        }
        if (rc < 0)
            return -1;
        found |= rc;
    }
    return found;
}

/* Standard base64 (RFC 4648, with padding, as `.pub` lines carry it) into out; -1 when s is
 * not that. */
static int base64_decode(const char *s, size_t n, unsigned char *out, size_t cap, size_t *len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n == 0 || n % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            char c = s[i + (size_t)j];
            const char *at = c ? strchr(alphabet, c) : NULL;
            if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '=')) {
                pad++;
                v <<= 6;
            } else if (at && !pad)
                v = v << 6 | (uint32_t)(at - alphabet);
            else
                return -1;
        }
        for (int j = 0; j < 3 - pad; j++) {
            if (o == cap)
                return -1;
            out[o++] = (unsigned char)(v >> (16 - 8 * j));
        }
    }
    *len = o;
    return 0;
}

/* A plain key's blob (RFC 4253 6.6, RFC 5656 3.1, RFC 8709 4, PROTOCOL.u2f) is its type
 * and one or more fields, each a length-prefixed string or mpint, that fill it exactly: a
 * line cut short by a multiple of 4 base64 characters still decodes, with its type intact,
 * and must not pass for a key that revokes nothing. A certificate's blob holds fixed-size
 * fields as well, and is left to the type check. */
static int blob_fields_ok(const unsigned char *b, size_t n, const char *type, size_t type_len)
{
    static const char CERT[] = "-cert-";
    for (size_t i = 0; i + sizeof CERT - 1 <= type_len; i++)
        if (memcmp(type + i, CERT, sizeof CERT - 1) == 0)
            return 1;
    size_t at = 0, fields = 0;
    while (at < n) {
        if (n - at < 4)
            return 0;
        size_t len = (size_t)b[at] << 24 | (size_t)b[at + 1] << 16 | (size_t)b[at + 2] << 8 |
                     b[at + 3];
        if (n - at - 4 < len)
            return 0;
        at += 4 + len;
        fields++;
    }
    return fields >= 2;
}

/* One `type base64 [comment]` line per key; '#' comments and blank lines are skipped. A line
 * that is not a key fails the file: ssh would skip it, and a mistyped revocation that
 * revokes nothing is what an operator must hear about. */
static int parse_list(const unsigned char *data, size_t len, const char *name,
                      const RevokedKeyQuery *key, Error *err)
{
    int found = 0;
    long lineno = 0;
    unsigned char *blob = NULL;
    size_t cap = 0;
    for (size_t at = 0; at < len;) {
        const unsigned char *nl = memchr(data + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - data) : len;
        const char *p = (const char *)data + at, *stop = (const char *)data + end;
        at = end + 1;
        lineno++;
        while (p < stop && (*p == ' ' || *p == '\t'))
            p++;
        if (p == stop || *p == '#' || *p == '\r')
            continue;
        const char *type = p;
        while (p < stop && *p != ' ' && *p != '\t')
            p++;
        size_t type_len = (size_t)(p - type);
        while (p < stop && (*p == ' ' || *p == '\t'))
            p++;
        const char *b64 = p;
        while (p < stop && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        size_t b64_len = (size_t)(p - b64), got = 0;
        if (b64_len / 4 * 3 > cap) {
            cap = b64_len / 4 * 3;
            unsigned char *grown = realloc(blob, cap);
            if (!grown) {
                free(blob);
                return error_no_memory(err, "RevokedHostKeys %s", name);
            }
            blob = grown;
        }
        /* the blob starts with its own type name: the line's must be the same */
        if (base64_decode(b64, b64_len, blob, cap, &got) < 0 || got < 4 + type_len ||
            ((size_t)blob[0] << 24 | (size_t)blob[1] << 16 | (size_t)blob[2] << 8 | blob[3]) !=
                type_len ||
            memcmp(blob + 4, type, type_len) != 0 ||
            !blob_fields_ok(blob, got, type, type_len)) {
            free(blob);
            error_set(err,
                      "RevokedHostKeys %s:%ld: expected a public key (\"TYPE BASE64 "
                      "[comment]\", as in a .pub file), found \"%.*s\"",
                      name, lineno, (int)((size_t)(stop - type) > 60 ? 60 : stop - type), type);
            return error_mark(err, ERROR_INPUT);
        }
        found |= got == key->len && memcmp(blob, key->blob, got) == 0;
    }
    free(blob);
    return found;
}

int revokedkeys_query_blob(RevokedKeyQuery *q, const char *b64)
{
    return base64_decode(b64, strlen(b64), q->blob, sizeof q->blob, &q->len);
}

int revokedkeys_parse(const unsigned char *data, size_t len, const char *name,
                      const RevokedKeyQuery *key, Error *err)
{
    if (len >= sizeof KRL_MAGIC && memcmp(data, KRL_MAGIC, sizeof KRL_MAGIC) == 0)
        return parse_krl(data, len, name, key, err);
    return parse_list(data, len, name, key, err);
}

/* Who could take a revocation out: the file's owner and, if not you or root, that is
 * refused; anyone who can write it or its folder (a sticky one such as /tmp is shared, and
 * keeps others from replacing a file they do not own). */
static int check_private(const char *path, const char *what, int allow, const char *where,
                         Error *err)
{
    OwnpathCheck c = ownpath_check(path, OWNPATH_ROOT_OK | allow);
    char label[4200];
    snprintf(label, sizeof label, "%s: RevokedHostKeys %s %s", where, what, path);
    if (ownpath_refused(&c, label, "take a revocation out", err) == 0)
        return 0;
    return error_mark(err, ERROR_INPUT);
}

int revokedkeys_file(const char *path, const char *where, const RevokedKeyQuery *key,
                     Error *err)
{
    char *null = realpath(path, NULL);
    int empty = null && strcmp(null, "/dev/null") == 0;
    free(null);
    if (empty)
        return 0; /* ssh reads it as an empty list, and so revokes nothing */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size > MAX_FILE)
        why = "larger than 64 MiB";
    if (why) {
        error_set(err,
                  "%s: RevokedHostKeys %s: cannot read it (%s): every host is refused, as "
                  "ssh refuses them, until it can be read",
                  where, path, why);
        if (fd >= 0)
            close(fd);
        return error_mark(err, ERROR_INPUT);
    }
    char dir[4096];
    char *real = realpath(path, NULL);
    int rc = check_private(real ? real : path, "file", 0, where, err);
    if (rc == 0 && ownpath_folder(real ? real : path, dir, sizeof dir) == 0)
        rc = check_private(dir, "folder", OWNPATH_STICKY_OK, where, err);
    free(real);
    unsigned char *data = NULL;
    size_t got = 0;
    if (rc == 0 && st.st_size > 0) {
        data = malloc((size_t)st.st_size);
        if (!data)
            rc = error_no_memory(err, "RevokedHostKeys %s", path);
        while (rc == 0 && got < (size_t)st.st_size) {
            ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                rc = error_set(err, "%s: RevokedHostKeys %s: cannot read it (%s)", where, path,
                               r < 0 ? strerror(errno) : "it shrank while read");
                break;
            }
            got += (size_t)r;
        }
    }
    close(fd);
    if (rc == 0) {
        rc = revokedkeys_parse(data ? data : (const unsigned char *)"", got, path, key, err);
        if (rc < 0)
            error_prefix(err, "%s", where);
    }
    free(data);
    return rc;
}
