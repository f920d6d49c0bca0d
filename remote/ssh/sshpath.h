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

/* The host an IdentityFile is expanded for: its name after the config's HostName, its user
 * and port (0: libssh's 22), as libssh holds them when ssh_connect expands identities. */
typedef struct {
    const char *host, *user;
    unsigned port;
} SshpathHost;

/* The file an IdentityFile argument names for `host` once libssh expands it (`~` as
 * sshpath_tilde with `home`, `%d` ssh_dir, `%u`, `%%`, `%h`, `%r`, `%p`; `%l` is nothing in
 * libssh 0.10.6), into out: no glob, the one file libssh reads. 0, or -1 when libssh could
 * not expand it (it reads nothing then). */
int sshpath_identity_file(const char *arg, const char *home, const char *ssh_dir,
                          const SshpathHost *host, char *out, size_t cap);

#endif
