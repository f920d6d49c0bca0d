/* The live Slurm backend's job folders, DIR/NAME on this machine's shared file system: made
 * at a run's start, and trusted only when ours and no one else's to write, each one checked
 * before the run begins and again at every start (remote/live/liverun_slurm_priv.h). */
#include "remote/live/liverun_slurm_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/ownpath.h"

/* The folder's absolute path: the nodes see the same file system, not our cwd. */
static char *folder_path(const char *job_dir, const char *name, Error *err)
{
    char cwd[4096] = "";
    if (job_dir[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        error_set(err, "job folder: %s", strerror(errno));
        return NULL;
    }
    char *path = NULL;
    if (asprintf(&path, "%s%s%s/%s", cwd, cwd[0] ? "/" : "", job_dir, name) < 0) {
        error_set(err, "job: out of memory");
        return NULL;
    }
    return path;
}

char *liveslurm_folder_make(const char *job_dir, const char *name, Error *err)
{
    char *path = folder_path(job_dir, name, err);
    if (!path)
        return NULL;
    for (char *p = path + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                error_set(err, "job folder %s: %s", path, strerror(errno));
                free(path);
                return NULL;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return path;
}

/* The folder holds the script sbatch runs as us, on a file system others share: it must be
 * ours and no one else's to write, and so must the folder it is in (unless sticky, like
 * /tmp; root's will do), or another user could plant or swap the script. */
int liveslurm_folder_trusted(const char *dir, int missing_ok, Error *err)
{
    char parent[4096];
    if (ownpath_folder(dir, parent, sizeof parent) < 0) {
        error_set(err, "job folder %s: path too long", dir);
        return error_mark(err, ERROR_INPUT);
    }
    const char *what[] = {"its folder", "the folder its folder is in,"}, *path[] = {dir, parent};
    const char *comma[] = {"", ","};
    const char *expected[] = {"expected no group/other write",
                              "expected no group/other write (or the sticky bit, like /tmp)"};
    const int allow[] = {0, OWNPATH_ROOT_OK | OWNPATH_STICKY_OK};
    for (int i = 1; i >= 0; i--) { /* the parent first: it is every job's */
        OwnpathCheck c = ownpath_check(path[i], allow[i]);
        if (c.verdict == OWNPATH_MISSING && missing_ok)
            continue; /* made at the start, ours and 0755 */
        if (c.verdict == OWNPATH_MISSING || c.verdict == OWNPATH_UNCHECKED)
            return error_set(err, "cannot check %s %s%s %s", what[i], path[i], comma[i],
                             strerror(c.errno_value));
        /* not ours, or others can write it: the same at every start until someone fixes
         * it (bad input); a folder that could not be checked may be checked next time */
        if (c.verdict == OWNPATH_NOT_OURS) {
            error_set(err,
                      "%s %s%s belongs to uid %u, not to you (uid %u): refused, its owner "
                      "could change the batch script sbatch runs as you; use a folder of "
                      "your own (--job-dir)",
                      what[i], path[i], comma[i], c.uid, (unsigned)geteuid());
            return error_mark(err, ERROR_INPUT);
        }
        if (c.verdict == OWNPATH_WRITABLE) {
            error_set(err,
                      "%s %s%s is %s (mode %04o); %s: chmod go-w %s (anyone who can "
                      "write it could change the batch script sbatch runs as you)",
                      what[i], path[i], comma[i], ownpath_writable_word(c.mode), c.mode,
                      expected[i], path[i]);
            return error_mark(err, ERROR_INPUT);
        }
    }
    return 0;
}

int liveslurm_check_folders(void *ctx, const char *job_dir, const char *const *names, size_t n,
                            Error *err)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++) {
        char *dir = folder_path(job_dir, names[i], err);
        int ok = dir && liveslurm_folder_trusted(dir, 1, err) == 0;
        free(dir);
        if (!ok) {
            error_prefix(err, "job %s", names[i]);
            return error_mark(err, ERROR_INPUT);
        }
    }
    return 0;
}
