/* File names in ssh configuration as libssh 0.10 expands them, so that what tunedeck checks
 * is exactly what libssh reads. libssh expands the config file it is given (`~`, then `%d`,
 * `%u`, `%h`, `%r`, `%p`, `%l`, `%%`: ssh_path_expand_escape) and an Include's path (`~` only,
 * after '/' and the global file's /etc/ssh: ssh_config_make_absolute). */
#ifndef TUNEDECK_SSHPATH_H
#define TUNEDECK_SSHPATH_H

#include <stddef.h>

#include "core/base/error.h"

/* `in` with a leading `~` or `~user` replaced as libssh does (`~` is `home`, libssh's being
 * the password database's home of this user, else $HOME, as when `home` is NULL; `~name/`
 * that user's; `~rest` with no '/' is home + "rest"). 0, or -1 when the user is unknown or
 * out is too small (libssh reads nothing then). */
int sshpath_tilde(const char *in, const char *home, char *out, size_t cap);

/* The file libssh reads for TUNEDECK_SSH_CONFIG `named` into path, and a name that libssh
 * expands to exactly that file into for_libssh (every '%' doubled). `~`, `%d` (ssh_dir),
 * `%u` and `%%` expand as in libssh; `%h`, `%r`, `%p` and `%l` would name another file per
 * host (or, `%l`, expand to nothing in libssh 0.10): -1 with err saying so. */
int sshpath_config_name(const char *named, const char *ssh_dir, char *path, size_t cap,
                        char *for_libssh, size_t cap_libssh, Error *err);

/* A name that libssh expands (ssh_path_expand_escape: the identities it is handed, the
 * known_hosts files, the config file) to exactly the file `path`, into out: every '%'
 * doubled, "./" before a leading '~'. 0, or -1 when out is too small. Whatever tunedeck
 * checks, reads or writes at `path` is then what libssh reads. */
int sshpath_for_libssh(const char *path, char *out, size_t cap);

/* The files an IdentityFile argument may name once libssh expands it (when it connects:
 * `~` as sshpath_tilde with `home`, `%d` ssh_dir, `%u`, `%%`; `%h`, `%r`, `%p` and `%l`,
 * which differ per host, as '*'), into out: 1 when out is a glob pattern (it had those), 0
 * when it is one file, -1 when libssh could not expand it (it reads nothing then). */
int sshpath_identity_pattern(const char *arg, const char *home, const char *ssh_dir, char *out,
                             size_t cap);

#endif
