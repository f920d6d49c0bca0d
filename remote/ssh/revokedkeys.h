/* The files an ssh config's RevokedHostKeys lines name, read as OpenSSH reads them: a plain
 * list of public keys, one per line, or a binary Key Revocation List (KRL, OpenSSH's
 * PROTOCOL.krl) as `ssh-keygen -k` writes it. libssh reads neither, so tunedeck does: a key
 * listed there is refused like an `@revoked` one. Both fail closed, as ssh does: a file that
 * cannot be read or parsed refuses every host that names it. */
#ifndef TUNEDECK_REVOKEDKEYS_H
#define TUNEDECK_REVOKEDKEYS_H

#include <stddef.h>

#include "core/base/error.h"

/* A host key as a revocation list can name it: its wire blob (what a `.pub` line carries in
 * base64) and the SHA-1 and SHA-256 digests of that blob (what `ssh-keygen -l` prints). */
typedef struct {
    unsigned char blob[8192]; /* a 16384-bit RSA key's is about 2 KiB */
    size_t len;
    unsigned char sha1[20];
    unsigned char sha256[32];
} RevokedKeyQuery;

/* q's blob from the key's base64 (a `.pub` line's second field, or what libssh's
 * ssh_pki_export_pubkey_base64 gives); the digests are the caller's to fill. -1 when b64 is
 * not base64 or the blob does not fit. */
int revokedkeys_query_blob(RevokedKeyQuery *q, const char *b64);

/* 1 when `data` (a whole file's contents, `name` for messages) lists the key, 0 when not,
 * -1 with err naming the file, the line or byte offset, and what was expected there when it
 * is neither a key list nor a well-formed KRL. A KRL's certificate sections are checked for
 * form and skipped: they revoke certificates, and tunedeck accepts no host certificate. */
int revokedkeys_parse(const unsigned char *data, size_t len, const char *name,
                      const RevokedKeyQuery *key, Error *err);

/* revokedkeys_parse over the file `path`, which the config line `where` ("config:line")
 * names. A missing or unreadable file, or one that someone other than you or root can
 * write (they could take a revocation out), is -1 with err naming both. */
int revokedkeys_file(const char *path, const char *where, const RevokedKeyQuery *key,
                     Error *err);

#endif
