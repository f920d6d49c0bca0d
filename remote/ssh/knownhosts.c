/* known_hosts: the revoked-key check and the append of an accepted key (knownhosts.h). */
#include "remote/ssh/knownhosts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/ownpath.h"

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
    if (c.verdict == OWNPATH_NOT_OURS)
        return error_set(err,
                         "known_hosts %s %s belongs to uid %u, not to you (uid %u) or root: "
                         "refused, its owner could add a key for any host",
                         what, path, c.uid, (unsigned)geteuid());
    if (c.verdict == OWNPATH_WRITABLE)
        return error_set(err,
                         "known_hosts %s %s is writable by %s (mode %03o): refused, anyone who "
                         "can write it could add a key for any host; check it, then chmod go-w it",
                         what, path, ownpath_writers(c.mode), c.mode);
    return 0;
}

int knownhosts_check_private(const char *file, Error *err)
{
    char dir[4096];
    if (ownpath_folder(file, dir, sizeof dir) < 0)
        return error_set(err, "known_hosts file %.200s...: path too long", file);
    if (check_path(dir, "folder", OWNPATH_STICKY_OK, err) < 0 ||
        check_path(file, "file", 0, err) < 0)
        return -1;
    return 0;
}

static int make_parent(const char *file)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int knownhosts_append(const char *file, const char *line, Error *err)
{
    int fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT && make_parent(file) == 0)
        fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return error_set(err, "cannot open %s to add the host key: %s", file, strerror(errno));
    struct stat st;
    char last = '\n';
    if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
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
