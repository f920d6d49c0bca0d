/* known_hosts: the revoked-key check and the append of an accepted key (knownhosts.h). */
#include "remote/ssh/knownhosts.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/ownpath.h"
#include "remote/ssh/sha1.h"

/* Splits off the next blank-separated field of *s. */
static const char *field(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return NULL;
    char *start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
        p++;
    if (*p)
        *p++ = 0;
    *s = p;
    return start;
}

int knownhosts_revoked(const char *file, const char *key_b64, Error *err)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        return error_set(err, "cannot read %s: %s", file, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int revoked = 0;
    while (!revoked && getline(&line, &cap, f) >= 0) {
        char *s = line;
        const char *marker = field(&s);
        if (!marker || strcmp(marker, "@revoked") != 0)
            continue;
        const char *hosts = field(&s), *type = field(&s), *blob = field(&s);
        (void)hosts, (void)type; /* the blob names the key type too */
        revoked = blob && strcmp(blob, key_b64) == 0;
    }
    free(line);
    fclose(f);
    return revoked;
}

static int check_path(const char *path, const char *what, int allow, Error *err)
{
    OwnpathCheck c = ownpath_check(path, OWNPATH_ROOT_OK | allow);
    if (c.verdict == OWNPATH_UNCHECKED)
        return error_set(err, "cannot check %s: %s", path, strerror(c.errno_value));
    char label[4200];
    snprintf(label, sizeof label, "known_hosts %s %s", what, path);
    return ownpath_refused(&c, label, "add a key for any host", err);
}

static int check_file_and_folder(const char *file, Error *err)
{
    char dir[4096];
    if (ownpath_folder(file, dir, sizeof dir) < 0)
        return error_set(err, "known_hosts file %.200s...: path too long", file);
    if (check_path(dir, "folder", OWNPATH_STICKY_OK, err) < 0 ||
        check_path(file, "file", 0, err) < 0)
        return -1;
    return 0;
}

/* Every link on the way from `file` to what it names, in any component (a folder of the
 * path may be a link too): a link is repointed by removing it and making another, which its
 * owner may do even in a sticky folder such as /tmp, and whoever can write its folder may
 * do too. So each link must be yours or root's, in a folder only you (or a sticky bit)
 * guard; else the file checked is not the file libssh then reads. A missing component ends
 * the walk: knownhosts_append creates the file and its own folder, private, or refuses. */
static int check_links(const char *file, Error *err)
{
    char done[4096], rest[8192], link[4096], next[8192];
    int hops = 0;
    if (file[0] == '/')
        snprintf(done, sizeof done, "%s", "");
    else if (!getcwd(done, sizeof done))
        return error_set(err, "cannot check %s: %s", file, strerror(errno));
    if (strcmp(done, "/") == 0)
        done[0] = 0;
    if (snprintf(rest, sizeof rest, "%s", file) >= (int)sizeof rest)
        return error_set(err, "known_hosts file %.200s...: path too long", file);
    char *r = rest;
    while (*r) {
        while (*r == '/')
            r++;
        if (!*r)
            break;
        size_t n = strcspn(r, "/");
        if ((n == 1 && r[0] == '.') || (n == 2 && r[0] == '.' && r[1] == '.')) {
            if (n == 2) { /* the folder above what is resolved so far: no link there */
                char *slash = strrchr(done, '/');
                if (slash)
                    *slash = 0;
            }
            r += n;
            continue;
        }
        size_t dl = strlen(done);
        if (dl + 1 + n >= sizeof done)
            return error_set(err, "known_hosts file %.200s...: path too long", file);
        char here[4096];
        snprintf(here, sizeof here, "%s/%.*s", done, (int)n, r);
        r += n;
        struct stat st;
        if (lstat(here, &st) < 0)
            return 0;
        if (!S_ISLNK(st.st_mode)) {
            snprintf(done, sizeof done, "%s", here);
            continue;
        }
        if (++hops > 40)
            return error_set(err, "known_hosts file %s: too many levels of links", file);
        if (st.st_uid != geteuid() && st.st_uid != 0)
            return error_set(err,
                             "known_hosts file %s: the link %s belongs to uid %u, not to you "
                             "(uid %u) or root: refused, its owner could point it at a file "
                             "that lists any key for any host; remove the link",
                             file, here, (unsigned)st.st_uid, (unsigned)geteuid());
        if (check_path(done[0] ? done : "/", "folder", OWNPATH_STICKY_OK, err) < 0)
            return -1;
        ssize_t k = readlink(here, link, sizeof link - 1);
        if (k < 0)
            return error_set(err, "cannot check %s: %s", here, strerror(errno));
        link[k] = 0;
        if (snprintf(next, sizeof next, "%s/%s", link, r) >= (int)sizeof next)
            return error_set(err, "known_hosts file %.200s...: path too long", file);
        snprintf(rest, sizeof rest, "%s", next);
        r = rest;
        if (link[0] == '/')
            done[0] = 0;
    }
    return 0;
}

/* A folder or an unreadable file named as known_hosts would read as empty, every host
 * "not in" it, the setting's mistake shown as an unknown key (and, accepting new keys, a
 * write into a folder): said here, with the path and what was expected. Missing is fine:
 * knownhosts_append creates it. */
static int check_readable(const char *file, Error *err)
{
    struct stat st;
    if (stat(file, &st) < 0)
        return errno == ENOENT ? 0 : error_set(err, "cannot read known_hosts file %s: %s", file,
                                               strerror(errno));
    if (S_ISDIR(st.st_mode))
        return error_set(err, "known_hosts file %s is a directory, not a known_hosts file",
                         file);
    if (!S_ISREG(st.st_mode))
        return error_set(err, "known_hosts file %s is not a regular file", file);
    if (access(file, R_OK) < 0)
        return error_set(err, "cannot read known_hosts file %s: %s", file, strerror(errno));
    return 0;
}

int knownhosts_check_private(const char *file, Error *err)
{
    if (check_file_and_folder(file, err) < 0 || check_links(file, err) < 0 ||
        check_readable(file, err) < 0)
        return -1;
    /* A link is only as safe as the folder of what it points to: whoever can write that
     * folder can put another file in its place. */
    char *real = realpath(file, NULL);
    int rc = real && strcmp(real, file) != 0 ? check_file_and_folder(real, err) : 0;
    free(real);
    return rc;
}

/* fnmatch-like for one known_hosts pattern: '*' and '?', case-insensitive (as ssh does). */
static int pattern_matches(const char *s, const char *p, size_t plen)
{
    if (!plen)
        return !*s;
    if (*p == '*') {
        for (;; s++) {
            if (pattern_matches(s, p + 1, plen - 1))
                return 1;
            if (!*s)
                return 0;
        }
    }
    if (!*s || (*p != '?' && tolower((unsigned char)*p) != tolower((unsigned char)*s)))
        return 0;
    return pattern_matches(s + 1, p + 1, plen - 1);
}

int knownhosts_line_excludes(const char *line, const char *host_port)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line == '#' || *line == '@' || *line == '|')
        return 0;
    size_t n = strcspn(line, " \t\r\n");
    char bare22[300];
    snprintf(bare22, sizeof bare22, "[%s]:22", host_port);
    for (const char *p = line, *end = line + n; p < end;) {
        size_t len = strcspn(p, ",");
        if (p + len > end)
            len = (size_t)(end - p);
        if (len > 1 && p[0] == '!') {
            /* libssh's own corner case: a bracketed pattern meets a host on port 22 */
            const char *subject = p[1] == '[' && host_port[0] != '[' ? bare22 : host_port;
            if (pattern_matches(subject, p + 1, len - 1))
                return 1;
        }
        p += len + 1;
    }
    return 0;
}

int knownhosts_cert_authority(const char *file, const char *host_port)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    int n = 0, found = 0;
    while (!found && getline(&line, &cap, f) >= 0) {
        n++;
        char *s = line;
        const char *marker = field(&s), *hosts = field(&s);
        if (!marker || !hosts || strcmp(marker, "@cert-authority") != 0)
            continue;
        /* as ssh's match_hostname: a negated pattern that matches rules the line out */
        int named = 0, excluded = 0;
        for (const char *p = hosts; *p && !excluded;) {
            size_t len = strcspn(p, ",");
            int neg = p[0] == '!';
            if (len > (size_t)neg && pattern_matches(host_port, p + neg, len - neg)) {
                named |= !neg;
                excluded |= neg;
            }
            p += len + (p[len] == ',');
        }
        found = named && !excluded ? n : 0;
    }
    free(line);
    fclose(f);
    return found;
}

int knownhosts_view(const char *file, const char *host_port, char *view, size_t cap,
                    int *view_fd, Error *err)
{
    *view_fd = -1;
    snprintf(view, cap, "%s", file);
    FILE *f = fopen(file, "r");
    if (!f)
        return 0; /* missing: libssh says so itself; unreadable: the check reports it */
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int excludes = 0;
    while (!excludes && getline(&line, &lcap, f) >= 0)
        excludes = knownhosts_line_excludes(line, host_port);
    int fd = -1;
    FILE *out = NULL;
    if (excludes) { /* the common case reads the file once and copies nothing */
        fd = memfd_create("tunedeck-known_hosts", MFD_CLOEXEC);
        int wfd = fd >= 0 ? dup(fd) : -1;
        out = wfd >= 0 ? fdopen(wfd, "w") : NULL;
        if (!out && wfd >= 0)
            close(wfd);
        rewind(f);
        while (out && (len = getline(&line, &lcap, f)) >= 0)
            if (!knownhosts_line_excludes(line, host_port))
                fwrite(line, 1, (size_t)len, out);
    }
    free(line);
    fclose(f);
    if (excludes && (!out || fclose(out) != 0)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return error_set(err, "cannot check the host key against %s: %s", file, strerror(e));
    }
    if (fd >= 0) {
        *view_fd = fd;
        snprintf(view, cap, "/proc/self/fd/%d", fd);
    }
    return 0;
}

/* RFC 4648 base64 with padding, as OpenSSH writes a hashed name's two fields. */
static void base64(const unsigned char *in, size_t n, char *out)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (; n >= 3; in += 3, n -= 3) {
        *out++ = A[in[0] >> 2];
        *out++ = A[(in[0] & 3) << 4 | in[1] >> 4];
        *out++ = A[(in[1] & 15) << 2 | in[2] >> 6];
        *out++ = A[in[2] & 63];
    }
    if (n) {
        *out++ = A[in[0] >> 2];
        *out++ = A[(in[0] & 3) << 4 | (n == 2 ? in[1] >> 4 : 0)];
        *out++ = n == 2 ? A[(in[1] & 15) << 2] : '=';
        *out++ = '=';
    }
    *out = 0;
}

int knownhosts_hash_entry(const char *entry, const unsigned char salt[20], char *out, size_t cap,
                          Error *err)
{
    while (*entry == ' ' || *entry == '\t')
        entry++;
    size_t name_len = strcspn(entry, " \t\r\n");
    const char *rest = entry + name_len;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    size_t rest_len = strcspn(rest, "\r\n");
    /* One name: a list ("a,b") would need one hashed line per name, libssh never exports it. */
    if (!name_len || !rest_len || memchr(entry, ',', name_len) || entry[0] == '|')
        return error_set(err,
                         "cannot hash the known_hosts entry \"%.80s\": expected a host "
                         "name and a key",
                         entry);
    unsigned char mac[SHA1_BYTES];
    sha1_hmac(salt, SHA1_BYTES, entry, name_len, mac);
    char salt64[32], mac64[32];
    base64(salt, SHA1_BYTES, salt64);
    base64(mac, SHA1_BYTES, mac64);
    if (snprintf(out, cap, "|1|%s|%s %.*s", salt64, mac64, (int)rest_len, rest) >= (int)cap)
        return error_set(err, "cannot hash the known_hosts entry: longer than %zu bytes", cap);
    return 0;
}

/* The known_hosts file's own folder, created 0700 when it is missing, inside a folder that
 * exists and passes the trust rules (yours or root's, writable by no group or others but
 * for a sticky one); 0, or -1 with err. A deeper missing path is refused, naming what is
 * missing: a mistyped known_hosts path would become a tree of new folders, the accepted key
 * kept where no later run looks, and the folders tunedeck made on the way would be checked
 * by nothing (only the file's own folder is). */
static int make_folder(const char *file, Error *err)
{
    char dir[4096], above[4096];
    if (ownpath_folder(file, dir, sizeof dir) < 0 || ownpath_folder(dir, above, sizeof above) < 0)
        return error_set(err, "known_hosts file %.200s...: path too long", file);
    struct stat st;
    if (stat(above, &st) < 0 && errno == ENOENT)
        return error_set(err,
                         "cannot add the host key to %s: its folder %s is missing, and so is "
                         "%s above it: tunedeck creates the known_hosts folder (0700) only in "
                         "a folder that exists; create it yourself (mkdir -p -m 700 %s), or "
                         "correct the known_hosts path; nothing written",
                         file, dir, above, dir);
    if (check_path(above, "folder", OWNPATH_STICKY_OK, err) < 0)
        return -1;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return error_set(err, "cannot create the known_hosts folder %s: %s", dir, strerror(errno));
    /* One another user made in a shared folder since the check is not ours to write into. */
    return check_path(dir, "folder", OWNPATH_STICKY_OK, err);
}

static int open_checked(const char *file, struct stat *st, Error *err)
{
    int fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
        if (make_folder(file, err) < 0)
            return -1;
        fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return error_set(err, "cannot open %s to add the host key: %s", file, strerror(errno));
    if (fstat(fd, st) < 0) {
        int e = errno;
        close(fd);
        return error_set(err, "cannot check %s to add the host key: %s", file, strerror(e));
    }
    if (!S_ISREG(st->st_mode) || (st->st_uid != geteuid() && st->st_uid != 0) ||
        (st->st_mode & 022)) {
        close(fd);
        return error_set(err,
                         "known_hosts file %s changed before the host key was added: it is not "
                         "a regular file of yours or root's that only its owner can write "
                         "(uid %u, mode %03o); nothing written",
                         file, (unsigned)st->st_uid, (unsigned)(st->st_mode & 0777));
    }
    return fd;
}

int knownhosts_lock(const char *file, Error *err)
{
    struct stat st;
    int fd = open_checked(file, &st, err);
    if (fd < 0)
        return -1;
    int rc;
    while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (rc < 0) {
        int e = errno;
        close(fd);
        return error_set(err, "cannot lock %s to add the host key: %s", file, strerror(e));
    }
    return fd;
}

void knownhosts_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* the lock goes with its last descriptor */
}

int knownhosts_append(const char *file, const char *line, Error *err)
{
    struct stat st;
    int fd = open_checked(file, &st, err);
    if (fd < 0)
        return -1;
    char last = '\n';
    if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
        last = '\n';
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    char *buf = malloc(n + 3);
    if (!buf) {
        close(fd);
        return error_set(err, "cannot add the host key to %s: out of memory", file);
    }
    size_t len = 0;
    if (last != '\n')
        buf[len++] = '\n';
    memcpy(buf + len, line, n);
    len += n;
    buf[len++] = '\n';
    ssize_t w = write(fd, buf, len);
    int e = errno;
    free(buf);
    if (close(fd) < 0 && w == (ssize_t)len) {
        w = -1;
        e = errno;
    }
    if (w != (ssize_t)len)
        return error_set(err, "cannot add the host key to %s: %s", file,
                         w < 0 ? strerror(e) : "short write");
    return 0;
}
