/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) for the parameter-server handshake
 * (tools/worker/psauth.h): a few hundred bytes per connection, so a plain portable
 * implementation, with no dependency of our own on a crypto library. */
#ifndef TUNEDECK_SHA256_H
#define TUNEDECK_SHA256_H

#include <stddef.h>
#include <stdint.h>

enum { SHA256_BYTES = 32, SHA256_BLOCK_BYTES = 64 };

typedef struct {
    uint32_t h[8];
    uint64_t total_bytes;
    unsigned char block[SHA256_BLOCK_BYTES];
    size_t fill;
} Sha256;

void sha256_init(Sha256 *c);
void sha256_update(Sha256 *c, const void *data, size_t n);
void sha256_final(Sha256 *c, unsigned char out[SHA256_BYTES]); /* wipes c */
void sha256(const void *data, size_t n, unsigned char out[SHA256_BYTES]);

typedef struct {
    Sha256 inner, outer; /* both already keyed: update feeds inner */
} HmacSha256;

/* A key longer than a block is hashed first (RFC 2104 §2). */
void hmac_sha256_init(HmacSha256 *h, const unsigned char *key, size_t key_len);
void hmac_sha256_update(HmacSha256 *h, const void *data, size_t n);
void hmac_sha256_final(HmacSha256 *h, unsigned char out[SHA256_BYTES]); /* wipes h */
void hmac_sha256(const unsigned char *key, size_t key_len, const void *data, size_t n,
                 unsigned char out[SHA256_BYTES]);

#endif
