/* Whether an ssh configuration may be read at all. libssh runs a config's `Match exec`
 * commands through the shell while it parses the file, and its HostName, User and
 * IdentityFile lines decide where tunedeck connects and as whom: a file that someone else
 * can write is a way to run their commands as you. So, as ssh itself requires, the file
 * and every file it Includes must belong to you or to root and be writable by no one else. */
#ifndef TUNEDECK_SSHCONFIG_H
#define TUNEDECK_SSHCONFIG_H

#include "core/base/error.h"

/* The same files' KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms and PubkeyAccepted*
 * lines, in any Host or Match block, must name no algorithm tunedeck refuses (sshalgos.h),
 * and no IdentityFile line may name a key of yours that others may read (identities.h):
 * refused with file:line otherwise. */

/* 0 when `path` and every file its Include lines name (followed as libssh follows them:
 * globbed, relative to /etc/ssh for the global file, else to ssh_dir, whose parent is what
 * "~/" means, as libssh reads it; 16 levels deep) may be
 * trusted, or are missing or not regular files (not ours to judge here). -1 with err naming
 * the file, who could write it and what to do, and the file that included it. */
int sshconfig_check_trusted(const char *path, const char *ssh_dir, Error *err);

#endif
