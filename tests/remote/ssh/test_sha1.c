#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/ssh/sha1.h"

static void hex(const unsigned char *d, char *out)
{
    for (int i = 0; i < SHA1_BYTES; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void check_sha1(const char *msg, size_t n, long repeat, const char *want)
{
    Sha1 c;
    unsigned char d[SHA1_BYTES];
    char got[41];
    sha1_init(&c);
    for (long i = 0; i < repeat; i++)
        sha1_update(&c, msg, n);
    sha1_final(&c, d);
    hex(d, got);
    cr_assert_str_eq(got, want, "SHA-1 of \"%.20s\" x%ld", msg, repeat);
}

/* RFC 3174 §7.3's four tests, and the empty message. */
Test(sha1, the_rfc_3174_test_vectors)
{
    check_sha1("abc", 3, 1, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *t2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha1(t2, strlen(t2), 1, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    check_sha1("a", 1, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    const char *t4 = "0123456701234567012345670123456701234567012345670123456701234567";
    check_sha1(t4, strlen(t4), 10, "dea356a2cddd90c7a7ecedc5ebb563934f460452");
    check_sha1("", 0, 1, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

static void check_hmac(const void *key, size_t kn, const void *msg, size_t mn, const char *want)
{
    unsigned char d[SHA1_BYTES];
    char got[41];
    sha1_hmac(key, kn, msg, mn, d);
    hex(d, got);
    cr_assert_str_eq(got, want);
}

/* RFC 2202 §3's seven HMAC-SHA1 cases (keys shorter than, equal to and longer than a block). */
Test(sha1, the_rfc_2202_hmac_test_vectors)
{
    unsigned char k[80];
    unsigned char m[50];
    memset(k, 0x0b, 20);
    check_hmac(k, 20, "Hi There", 8, "b617318655057264e28bc0b6fb378c8ef146be00");
    check_hmac("Jefe", 4, "what do ya want for nothing?", 28,
               "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    memset(k, 0xaa, 20);
    memset(m, 0xdd, 50);
    check_hmac(k, 20, m, 50, "125d7342b9ac11cd91a39af48aa17b4f63f175d3");
    for (int i = 0; i < 25; i++)
        k[i] = (unsigned char)(i + 1);
    memset(m, 0xcd, 50);
    check_hmac(k, 25, m, 50, "4c9007f4026250c6bc8414f9bf50c86c2d7235da");
    memset(k, 0x0c, 20);
    check_hmac(k, 20, "Test With Truncation", 20, "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04");
    memset(k, 0xaa, 80);
    check_hmac(k, 80, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
               "aa4ae5e15272d00e95705637ce8a3b55ed402112");
    check_hmac(k, 80, "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data",
               73, "e8e99d0f45237d786d6bbaa7965c7808bbff1a91");
}
