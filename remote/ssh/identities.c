/* Which private key files may be used (identities.h). */
#include "remote/ssh/identities.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const IDENTITY_DEFAULT_NAMES[IDENTITY_N_DEFAULTS] = {"id_ed25519", "id_ecdsa",
                                                                 "id_rsa", "id_dsa"};

unsigned identity_too_open(const char *path)
{
    struct stat st;
    if (!path || !path[0] || stat(path, &st) < 0 || st.st_uid != geteuid())
        return 0;
    return st.st_mode & 077 ? (unsigned)(st.st_mode & 0777) : 0;
}

const char *file_would_block(const char *path)
{
    struct stat st, null_st;
    if (!path || !path[0] || stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return NULL;
    if (S_ISCHR(st.st_mode) && stat("/dev/null", &null_st) == 0 && st.st_rdev == null_st.st_rdev)
        return NULL;
    return S_ISFIFO(st.st_mode)  ? "a FIFO, not a regular file"
           : S_ISSOCK(st.st_mode) ? "a socket, not a regular file"
           : S_ISCHR(st.st_mode)  ? "a character device, not a regular file"
           : S_ISBLK(st.st_mode)  ? "a block device, not a regular file"
                                  : "not a regular file";
}

void identity_ssh_dir(char *out, size_t cap)
{
    const struct passwd *pw = getpwuid(getuid());
    const char *home = pw && pw->pw_dir ? pw->pw_dir : getenv("HOME");
    snprintf(out, cap, "%s/.ssh", home ? home : "");
}
