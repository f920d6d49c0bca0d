/* Whether the key a host offers is revoked: by an `@revoked` line in its known_hosts file
 * (knownhosts.h) or in one of the known_hosts files ssh reads by default, or in a file a
 * RevokedHostKeys line of its ssh config names (revokedkeys.h), which libssh does not read
 * at all. */
#include "remote/ssh/hostpool_priv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The known_hosts files ssh reads when no config names others: the site's, where an
 * administrator revokes a key for every user. Their keys are never trusted here (one file
 * decides, docs/remote.md), but a revocation in them must hold as it holds for ssh. */
static const char *const SYSTEM_KNOWN_HOSTS[] = {"/etc/ssh/ssh_known_hosts",
                                                 "/etc/ssh/ssh_known_hosts2"};

/* 1 when `file`, a known_hosts tunedeck reads for revocations only, has an @revoked line
 * for the key. Skipped like ssh skips it when it is missing or cannot be read, and when it
 * is no regular file (a FIFO would block the read). */
static int revoked_in(const char *file, const char *b64)
{
    struct stat st;
    if (!file[0] || stat(file, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    Error ignored;
    return knownhosts_revoked(file, b64, &ignored) > 0;
}

int host_key_revoked(const Host *h, ssh_key key, const char *b64, Error *err)
{
    int revoked = knownhosts_revoked(h->known_file, b64, err);
    if (revoked > 0)
        error_set(err, "is marked @revoked in %s", h->known_file);
    const char *elsewhere[4] = {h->user_known[0], h->user_known[1], SYSTEM_KNOWN_HOSTS[0],
                                SYSTEM_KNOWN_HOSTS[1]};
    for (size_t i = 0; revoked == 0 && i < 4; i++)
        if (strcmp(elsewhere[i], h->known_file) != 0 && revoked_in(elsewhere[i], b64)) {
            revoked = 1;
            error_set(err, "is marked @revoked in %s", elsewhere[i]);
        }
    for (size_t i = 0; revoked == 0 && i < h->cfg.n_known; i++)
        if (strcmp(h->cfg.known[i].file, h->known_file) != 0 &&
            revoked_in(h->cfg.known[i].file, b64)) {
            revoked = 1;
            error_set(err, "is marked @revoked in %s (%s)", h->cfg.known[i].file,
                      h->cfg.known[i].where);
        }
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
