/* The parts of known_hosts that tunedeck decides itself rather than leave to libssh, which
 * treats an `@revoked` line as an unknown host and writes wherever the ssh config points:
 * whether a key is revoked, and adding the exact line for a key the operator accepted. */
#ifndef TUNEDECK_KNOWNHOSTS_H
#define TUNEDECK_KNOWNHOSTS_H

#include <stddef.h>

#include "core/base/error.h"

/* 1 when `file` has an `@revoked` line for the key whose base64 blob is key_b64 (whatever
 * host patterns the line names: a revoked key is refused for every host), 0 when not or
 * when the file does not exist, -1 (err names the file) when it cannot be read. */
int knownhosts_revoked(const char *file, const char *key_b64, Error *err);

/* 0 when `file` can be trusted to say which keys are known: it and its folder belong to
 * you or to root and no one else can write them (a sticky folder such as /tmp may be
 * shared); a missing file or folder is fine (knownhosts_append creates them private).
 * -1 (err names the path, its owner or mode, and what to do) when not: anyone who can
 * write it could add their own key for any host. A symbolic link is followed and what it
 * points to, and that folder, must pass too. */
int knownhosts_check_private(const char *file, Error *err);

/* 1 when `line` of a known_hosts file names `host_port` (the host, or "[host]:port" off
 * port 22) in a negated pattern (`!h1,*.example.org ...`): ssh ignores such a line for that
 * host, but libssh 0.10 reads each pattern alone and takes the line for the host anyway. */
int knownhosts_line_excludes(const char *line, const char *host_port);

/* The number of the first line of `file` that trusts a certificate authority for
 * `host_port` (`@cert-authority PATTERNS KEY`, a plain pattern naming it and no negated one);
 * 0 when none, or the file cannot be read. libssh 0.10 reads no such line (it checks no
 * certificate), so a host trusted only through one is unknown: this names the line in the
 * refusal. A hashed pattern is not read (ssh-keygen -H leaves marked lines in clear). */
int knownhosts_cert_authority(const char *file, const char *host_port);

/* The known_hosts that libssh should read for `host_port`: `file` itself (view_fd -1) when
 * no line excludes the host, else an in-memory copy without those lines, named
 * /proc/self/fd/N in view (close *view_fd after the check). -1 (err) when the copy fails. */
int knownhosts_view(const char *file, const char *host_port, char *view, size_t cap,
                    int *view_fd, Error *err);

/* An exclusive flock(2) on `file` (opened, and created private when missing, as
 * knownhosts_append does), held until knownhosts_unlock: tunedeck re-checks an unknown key
 * and appends it under it, so two processes accepting keys for one host at once (a MITM
 * offering each a different key) cannot both write. Waits for another holder. Returns the
 * descriptor, or -1 (err names the file). */
int knownhosts_lock(const char *file, Error *err);
/* Lets go of knownhosts_lock's lock (-1: nothing). */
void knownhosts_unlock(int fd);

/* `entry` (one known_hosts line, "host type key", as libssh exports it) with its host name
 * hashed as ssh's HashKnownHosts hashes it: "|1|base64(salt)|base64(HMAC-SHA1(salt, name))
 * type key", name being the host or "[host]:port". `salt` is 20 random bytes (the caller's:
 * getrandom). -1 (err) when the entry has no key after its name or out is too small. */
int knownhosts_hash_entry(const char *entry, const unsigned char salt[20], char *out, size_t cap,
                          Error *err);

/* Appends `line` (one known_hosts entry, a newline is added) to `file`, creating the file
 * (0600) and its folder (0700) when missing, and starting a new line when the file does
 * not end with one. Its folder is created only inside one that exists and that the trust
 * rules pass; with more than one folder missing nothing is created (err names them and says
 * how to make the folder). */
int knownhosts_append(const char *file, const char *line, Error *err);

#endif
