/* The parts of known_hosts that tunedeck decides itself rather than leave to libssh, which
 * treats an `@revoked` line as an unknown host and writes wherever the ssh config points:
 * whether a key is revoked, and adding the exact line for a key the operator accepted. */
#ifndef TUNEDECK_KNOWNHOSTS_H
#define TUNEDECK_KNOWNHOSTS_H

#include "core/base/error.h"

/* 1 when `file` has an `@revoked` line for the key whose base64 blob is key_b64 (whatever
 * host patterns the line names: a revoked key is refused for every host), 0 when not or
 * when the file does not exist, -1 (err names the file) when it cannot be read. */
int knownhosts_revoked(const char *file, const char *key_b64, Error *err);

/* 0 when `file` can be trusted to say which keys are known: it and its folder belong to
 * you or to root and no one else can write them (a sticky folder such as /tmp may be
 * shared); a missing file or folder is fine (knownhosts_append creates them private).
 * -1 (err names the path, its owner or mode, and what to do) when not: anyone who can
 * write it could add their own key for any host. */
int knownhosts_check_private(const char *file, Error *err);

/* Appends `line` (one known_hosts entry, a newline is added) to `file`, creating the file
 * (0600) and its folder (0700) when missing, and starting a new line when the file does
 * not end with one. */
int knownhosts_append(const char *file, const char *line, Error *err);

#endif
