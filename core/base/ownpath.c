/* Whether a file or folder can be trusted as ours (core/base/ownpath.h): the one check the
 * known_hosts file, the journal and the Slurm job folder share. */
#include "core/base/ownpath.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

OwnpathCheck ownpath_check(const char *path, int allow)
{
    OwnpathCheck c = {.verdict = OWNPATH_OK};
    struct stat st;
    if (stat(path, &st) < 0) {
        c.errno_value = errno;
        c.verdict = errno == ENOENT ? OWNPATH_MISSING : OWNPATH_UNCHECKED;
        return c;
    }
    c.uid = (unsigned)st.st_uid;
    c.mode = (unsigned)(st.st_mode & 0777);
    if (st.st_uid != geteuid() && !((allow & OWNPATH_ROOT_OK) && st.st_uid == 0))
        c.verdict = OWNPATH_NOT_OURS;
    else if ((st.st_mode & 022) && !((allow & OWNPATH_STICKY_OK) && (st.st_mode & S_ISVTX)))
        c.verdict = OWNPATH_WRITABLE;
    return c;
}

const char *ownpath_writers(unsigned mode)
{
    /* others first: 0666 is not only its group's to write (it said so) */
    return mode & 002 ? "others" : "its group";
}

const char *ownpath_writable_word(unsigned mode)
{
    return mode & 002 ? "world-writable" : "group-writable";
}

int ownpath_refused(const OwnpathCheck *c, const char *label, const char *harm, Error *err)
{
    if (c->verdict == OWNPATH_NOT_OURS)
        return error_set(err,
                         "%s belongs to uid %u, not to you (uid %u) or root: refused, its owner "
                         "could %s",
                         label, c->uid, (unsigned)geteuid(), harm);
    if (c->verdict == OWNPATH_WRITABLE)
        return error_set(err,
                         "%s is writable by %s (mode %03o): refused, anyone who can write it "
                         "could %s; check it, then chmod go-w it",
                         label, ownpath_writers(c->mode), c->mode, harm);
    return 0;
}

int ownpath_folder(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    int n;
    if (!slash)
        n = snprintf(dir, cap, ".");
    else if (slash == path)
        n = snprintf(dir, cap, "/");
    else
        n = snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}
