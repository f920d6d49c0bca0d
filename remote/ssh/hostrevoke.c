/* Whether the key a host offers is revoked: by an `@revoked` line in its known_hosts file
 * (knownhosts.h), or in a file a RevokedHostKeys line of its ssh config names
 * (revokedkeys.h), which libssh does not read at all. */
#include "remote/ssh/hostpool_priv.h"

#include <stdlib.h>
#include <string.h>

#include "remote/ssh/knownhosts.h"
#include "remote/ssh/revokedkeys.h"

/* The digest of the key's blob that a KRL's fingerprint sections list. */
static int key_digest(ssh_key key, enum ssh_publickey_hash_type type, unsigned char *out,
                      size_t len)
{
    unsigned char *hash = NULL;
    size_t hlen = 0;
    int ok = ssh_get_publickey_hash(key, type, &hash, &hlen) == 0 && hlen == len;
    if (ok)
        memcpy(out, hash, len);
    ssh_clean_pubkey_hash(&hash);
    return ok ? 0 : -1;
}

int host_key_revoked(const Host *h, ssh_key key, const char *b64, Error *err)
{
    int revoked = knownhosts_revoked(h->known_file, b64, err);
    if (revoked > 0)
        error_set(err, "is marked @revoked in %s", h->known_file);
    if (revoked != 0 || h->cfg.n_revoked == 0)
        return revoked;
    RevokedKeyQuery *q = calloc(1, sizeof *q);
    if (!q)
        return error_set(err, "cannot check the host key: out of memory");
    int rc = 0;
    if (revokedkeys_query_blob(q, b64) < 0 ||
        key_digest(key, SSH_PUBLICKEY_HASH_SHA1, q->sha1, sizeof q->sha1) < 0 ||
        key_digest(key, SSH_PUBLICKEY_HASH_SHA256, q->sha256, sizeof q->sha256) < 0)
        rc = error_set(err, "cannot read the host key's blob and digests");
    for (size_t i = 0; rc == 0 && i < h->cfg.n_revoked; i++) {
        const SshconfigFile *f = &h->cfg.revoked[i];
        rc = revokedkeys_file(f->file, f->where, q, err);
        if (rc > 0)
            error_set(err, "is listed in RevokedHostKeys %s (%s)", f->file, f->where);
    }
    free(q);
    return rc;
}
