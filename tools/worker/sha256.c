/* Straight from FIPS 180-4 §6.2 (the round constants of §4.2.2, the initial hash of §5.3.3)
 * and RFC 2104 §2; tests/tools/worker/test_sha256.c checks the published vectors (FIPS 180-4
 * examples, RFC 4231). Keyed states are wiped when done, since they derive from the secret. */
#include "tools/worker/sha256.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return x >> n | x << (32 - n);
}

static void compress(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ w[t - 15] >> 3;
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ w[t - 2] >> 10;
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] +
                      w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
    explicit_bzero(w, sizeof w);
}

void sha256_init(Sha256 *c)
{
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, H0, sizeof H0);
    c->total_bytes = 0;
    c->fill = 0;
}

void sha256_update(Sha256 *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->total_bytes += n;
    if (c->fill > 0) {
        size_t take = SHA256_BLOCK_BYTES - c->fill < n ? SHA256_BLOCK_BYTES - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill < SHA256_BLOCK_BYTES)
            return;
        compress(c->h, c->block);
        c->fill = 0;
    }
    for (; n >= SHA256_BLOCK_BYTES; p += SHA256_BLOCK_BYTES, n -= SHA256_BLOCK_BYTES)
        compress(c->h, p);
    memcpy(c->block, p, n);
    c->fill = n;
}

void sha256_final(Sha256 *c, unsigned char out[SHA256_BYTES])
{
    /* §5.1.1: a 1 bit, zeros up to 56 bytes mod 64, the length in bits, big-endian */
    uint64_t bits = c->total_bytes * 8;
    c->block[c->fill++] = 0x80;
    if (c->fill > 56) {
        memset(c->block + c->fill, 0, SHA256_BLOCK_BYTES - c->fill);
        compress(c->h, c->block);
        c->fill = 0;
    }
    memset(c->block + c->fill, 0, 56 - c->fill);
    for (int i = 0; i < 8; i++)
        c->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    compress(c->h, c->block);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(c->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)c->h[i];
    }
    explicit_bzero(c, sizeof *c);
}

void sha256(const void *data, size_t n, unsigned char out[SHA256_BYTES])
{
    Sha256 c;
    sha256_init(&c);
    sha256_update(&c, data, n);
    sha256_final(&c, out);
}

void hmac_sha256_init(HmacSha256 *h, const unsigned char *key, size_t key_len)
{
    unsigned char k[SHA256_BLOCK_BYTES] = {0}, pad[SHA256_BLOCK_BYTES];
    if (key_len > SHA256_BLOCK_BYTES)
        sha256(key, key_len, k);
    else
        memcpy(k, key, key_len);
    for (int i = 0; i < SHA256_BLOCK_BYTES; i++)
        pad[i] = k[i] ^ 0x36;
    sha256_init(&h->inner);
    sha256_update(&h->inner, pad, sizeof pad);
    for (int i = 0; i < SHA256_BLOCK_BYTES; i++)
        pad[i] = k[i] ^ 0x5c;
    sha256_init(&h->outer);
    sha256_update(&h->outer, pad, sizeof pad);
    explicit_bzero(k, sizeof k);
    explicit_bzero(pad, sizeof pad);
}

void hmac_sha256_update(HmacSha256 *h, const void *data, size_t n)
{
    sha256_update(&h->inner, data, n);
}

void hmac_sha256_final(HmacSha256 *h, unsigned char out[SHA256_BYTES])
{
    unsigned char inner[SHA256_BYTES];
    sha256_final(&h->inner, inner);
    sha256_update(&h->outer, inner, sizeof inner);
    sha256_final(&h->outer, out);
    explicit_bzero(inner, sizeof inner);
}

void hmac_sha256(const unsigned char *key, size_t key_len, const void *data, size_t n,
                 unsigned char out[SHA256_BYTES])
{
    HmacSha256 h;
    hmac_sha256_init(&h, key, key_len);
    hmac_sha256_update(&h, data, n);
    hmac_sha256_final(&h, out);
}
