/* Whether an ssh configuration may be read at all. libssh runs a config's `Match exec`
 * commands through the shell while it parses the file, and its HostName, User and
 * IdentityFile lines decide where tunedeck connects and as whom: a file that someone else
 * can write is a way to run their commands as you. So, as ssh itself requires, the file
 * and every file it Includes must belong to you or to root and be writable by no one else. */
#ifndef TUNEDECK_SSHCONFIG_H
#define TUNEDECK_SSHCONFIG_H

#include <stddef.h>

#include "core/base/error.h"
#include "remote/ssh/sshmatch.h"
#include "remote/ssh/sshpath.h"

/* The same files' KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms and PubkeyAccepted*
 * lines, in any Host or Match block, must name no algorithm tunedeck refuses (sshalgos.h):
 * refused with file:line otherwise. IdentityFile lines name another file per host, and only
 * the blocks that apply to a host count for it: they are checked per host
 * (sshconfig_identities). */

/* 0 when `path` and every file its Include lines name (followed as libssh follows them:
 * globbed, relative to /etc/ssh for the global file, else to ssh_dir, whose parent is what
 * "~/" means, as libssh reads it; 16 levels deep) may be
 * trusted, or are missing or not regular files (not ours to judge here). -1 with err naming
 * the file, who could write it and what to do, and the file that included it. */
int sshconfig_check_trusted(const char *path, const char *ssh_dir, Error *err);

/* One IdentityFile line as libssh reads it for one host: the file, and "config:line". */
typedef struct {
    char file[1024];
    char where[1100];
} SshconfigIdentity;

/* The IdentityFile lines of `path` and its Includes that libssh 0.10.6 applies to one host
 * (under a Host or Match line that holds for it as libssh decides, sshmatch.h; a Match exec
 * block counts as applying), expanded for `host` as libssh expands them when it connects
 * (sshpath.h), appended to *ids (realloc'd, *n of them; the caller frees it), in the files'
 * order. `match` carries what libssh matches from this file to the next one of the same parse
 * (sshmatch_begin before the first). -1 with err naming config:line, the line, the file and
 * its mode when a file others may read is one of them (or the config may not be trusted, as
 * sshconfig_check_trusted). A "pkcs11:" line or one libssh cannot expand names no file and is
 * left out. */
int sshconfig_identities(const char *path, const char *ssh_dir, const SshpathHost *host,
                         SshmatchHost *match, SshconfigIdentity **ids, size_t *n, Error *err);

#endif
