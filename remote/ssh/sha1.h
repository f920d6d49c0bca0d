/* SHA-1 (RFC 3174) and HMAC-SHA1 (RFC 2104), for one use: the host names of a hashed
 * known_hosts line (`|1|salt|HMAC-SHA1(salt, host)`), which ssh's HashKnownHosts writes.
 * libssh computes them too but exports neither; tunedeck depends on libssh, not on the
 * crypto library libssh happens to be built on. Not for signatures: SHA-1 collides. */
#ifndef TUNEDECK_SHA1_H
#define TUNEDECK_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_BYTES 20

typedef struct {
    uint32_t h[5];
    uint64_t length_bytes;
    unsigned char block[64];
    size_t used;
} Sha1;

void sha1_init(Sha1 *c);
void sha1_update(Sha1 *c, const void *data, size_t n);
void sha1_final(Sha1 *c, unsigned char out[SHA1_BYTES]);

/* HMAC-SHA1 of msg under key (any length). */
void sha1_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
               unsigned char out[SHA1_BYTES]);

#endif
