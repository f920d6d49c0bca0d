/* Whether a file or folder can be trusted as ours: owned by us (or root, where the caller
 * allows it) and not writable by group or others (a sticky folder, where allowed). */
#ifndef TUNEDECK_OWNPATH_H
#define TUNEDECK_OWNPATH_H

#include <stddef.h>

#include "core/base/error.h"

typedef enum {
    OWNPATH_OK,
    OWNPATH_MISSING,   /* nothing there (ENOENT): not an error here, the caller decides */
    OWNPATH_UNCHECKED, /* stat failed otherwise: errno_value says why */
    OWNPATH_NOT_OURS,  /* owner is uid, not geteuid() (nor root where allowed) */
    OWNPATH_WRITABLE,  /* mode has 022 (and is not an allowed sticky folder) */
} OwnpathVerdict;

/* What ownpath_check may accept beyond "ours, not writable by group or others". */
enum {
    OWNPATH_ROOT_OK = 1,   /* owned by root */
    OWNPATH_STICKY_OK = 2, /* writable by group or others with the sticky bit (like /tmp) */
};

typedef struct {
    OwnpathVerdict verdict;
    unsigned uid;  /* the owner, when stat worked */
    unsigned mode; /* the permission bits (& 0777), when stat worked */
    int errno_value;
} OwnpathCheck;

/* stat(path) (following symlinks) and judge it; allow is OWNPATH_* flags. */
OwnpathCheck ownpath_check(const char *path, int allow);

/* Who can write a mode ownpath_check refused: "others" when they can (0666, 0602: whatever
 * its group may do), else "its group" (0664). */
const char *ownpath_writers(unsigned mode);
/* The same as one word: "world-writable" when others can write (0777, 0602: whatever its
 * group may do), else "group-writable" (0775). */
const char *ownpath_writable_word(unsigned mode);

/* The refusal of a path ownpath_check found not ours (NOT_OURS, WRITABLE): -1 with err
 * "LABEL belongs to uid U, not to you (uid V) or root: refused, its owner could HARM" or
 * "LABEL is writable by others (mode 646): refused, anyone who can write it could HARM;
 * check it, then chmod go-w it" (label names the path: "known_hosts file /x"); 0 for any
 * other verdict, which the caller judges. */
int ownpath_refused(const OwnpathCheck *c, const char *label, const char *harm, Error *err);

/* The folder path is in ("." for a bare name, "/" for a name under the root) into dir;
 * -1 when it does not fit cap. */
int ownpath_folder(const char *path, char *dir, size_t cap);

#endif
