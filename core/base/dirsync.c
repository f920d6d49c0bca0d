/* Making a created or renamed name durable: fsync of the folder that holds it. */
#include "core/base/dirsync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int dirsync(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* Some file systems cannot sync a folder and say so; nothing more can be done there. */
    if (rc < 0 && (errno == EINVAL || errno == EROFS))
        rc = 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int dirsync_parent(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        return dirsync(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = 0;
    return dirsync(dir);
}
