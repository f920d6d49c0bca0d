/* SHA-1 and HMAC-SHA1 (sha1.h), straight from RFC 3174 §6.1 and RFC 2104 §2. */
#include "remote/ssh/sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n)
{
    return x << n | x >> (32 - n);
}

static void compress(Sha1 *c, const unsigned char *b)
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)b[4 * t] << 24 | (uint32_t)b[4 * t + 1] << 16 |
               (uint32_t)b[4 * t + 2] << 8 | b[4 * t + 3];
    for (int t = 16; t < 80; t++)
        w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = c->h[0], bb = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20)
            f = (bb & cc) | (~bb & d), k = 0x5A827999;
        else if (t < 40)
            f = bb ^ cc ^ d, k = 0x6ED9EBA1;
        else if (t < 60)
            f = (bb & cc) | (bb & d) | (cc & d), k = 0x8F1BBCDC;
        else
            f = bb ^ cc ^ d, k = 0xCA62C1D6;
        uint32_t tmp = rol(a, 5) + f + e + w[t] + k;
        e = d;
        d = cc;
        cc = rol(bb, 30);
        bb = a;
        a = tmp;
    }
    c->h[0] += a;
    c->h[1] += bb;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
}

void sha1_init(Sha1 *c)
{
    static const uint32_t H0[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    memcpy(c->h, H0, sizeof H0);
    c->length_bytes = 0;
    c->used = 0;
}

void sha1_update(Sha1 *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->length_bytes += n;
    while (n) {
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, p, take);
        c->used += take;
        p += take;
        n -= take;
        if (c->used == 64) {
            compress(c, c->block);
            c->used = 0;
        }
    }
}

void sha1_final(Sha1 *c, unsigned char out[SHA1_BYTES])
{
    uint64_t bits = c->length_bytes * 8;
    static const unsigned char PAD[64] = {0x80};
    size_t pad = c->used < 56 ? 56 - c->used : 120 - c->used;
    sha1_update(c, PAD, pad);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_update(c, len, 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(c->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)c->h[i];
    }
}

void sha1_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
               unsigned char out[SHA1_BYTES])
{
    unsigned char k[64] = {0}, pad[64], inner[SHA1_BYTES];
    Sha1 c;
    if (key_len > 64) { /* a long key is hashed first (RFC 2104 §2) */
        sha1_init(&c);
        sha1_update(&c, key, key_len);
        sha1_final(&c, k);
    } else {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    sha1_init(&c);
    sha1_update(&c, pad, 64);
    sha1_update(&c, msg, msg_len);
    sha1_final(&c, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    sha1_init(&c);
    sha1_update(&c, pad, 64);
    sha1_update(&c, inner, SHA1_BYTES);
    sha1_final(&c, out);
}
