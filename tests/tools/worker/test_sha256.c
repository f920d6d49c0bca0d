/* SHA-256 and HMAC-SHA256 (tools/worker/sha256.c) against the published vectors: the FIPS
 * 180-4 examples (NIST's "abc", the 448-bit two-block message, a million 'a') and every
 * test case of RFC 4231. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tools/worker/sha256.h"

static void hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void expect_sha(const void *msg, size_t n, const char *want)
{
    unsigned char d[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    sha256(msg, n, d);
    hex(d, sizeof d, got);
    cr_assert_str_eq(got, want, "SHA-256 of %zu bytes", n);
}

Test(sha256, fips_180_4_examples)
{
    expect_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_sha(two, strlen(two),
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, a_million_a_fed_in_odd_pieces_is_the_whole_message_hash)
{
    static unsigned char a[1000000];
    memset(a, 'a', sizeof a);
    expect_sha(a, sizeof a, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* pieces that straddle the 64-byte blocks every way */
    Sha256 c;
    sha256_init(&c);
    size_t at = 0;
    for (size_t step = 1; at < sizeof a; step = step % 131 + 1) {
        size_t n = step < sizeof a - at ? step : sizeof a - at;
        sha256_update(&c, a + at, n);
        at += n;
    }
    unsigned char d[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    sha256_final(&c, d);
    hex(d, sizeof d, got);
    cr_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void expect_hmac(const unsigned char *key, size_t key_len, const void *msg, size_t n,
                        const char *want, int test_case)
{
    unsigned char d[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    hmac_sha256(key, key_len, msg, n, d);
    hex(d, sizeof d, got);
    /* case 5 publishes the first 128 bits only */
    cr_assert(strncmp(got, want, strlen(want)) == 0, "RFC 4231 case %d: %s, expected %s",
              test_case, got, want);
}

Test(hmac_sha256, rfc_4231_test_cases)
{
    unsigned char k[131];
    memset(k, 0x0b, 20);
    expect_hmac(k, 20, "Hi There", 8,
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 1);
    const char *m2 = "what do ya want for nothing?";
    expect_hmac((const unsigned char *)"Jefe", 4, m2, strlen(m2),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 2);
    unsigned char d50[50];
    memset(k, 0xaa, 20);
    memset(d50, 0xdd, sizeof d50);
    expect_hmac(k, 20, d50, 50,
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 3);
    for (int i = 0; i < 25; i++)
        k[i] = (unsigned char)(i + 1);
    memset(d50, 0xcd, sizeof d50);
    expect_hmac(k, 25, d50, 50,
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 4);
    memset(k, 0x0c, 20);
    expect_hmac(k, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b", 5);
    memset(k, 0xaa, 131); /* longer than a block: hashed first */
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    expect_hmac(k, 131, m6, strlen(m6),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 6);
    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    expect_hmac(k, 131, m7, strlen(m7),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 7);
}

Test(hmac_sha256, incremental_updates_equal_one_call)
{
    const char *m = "This is a test using a larger than block-size key and a larger than "
                    "block-size data.";
    unsigned char key[40], one[SHA256_BYTES], parts[SHA256_BYTES];
    memset(key, 7, sizeof key);
    hmac_sha256(key, sizeof key, m, strlen(m), one);
    HmacSha256 h;
    hmac_sha256_init(&h, key, sizeof key);
    hmac_sha256_update(&h, m, 10);
    hmac_sha256_update(&h, m + 10, strlen(m) - 10);
    hmac_sha256_final(&h, parts);
    cr_assert_eq(memcmp(one, parts, sizeof one), 0);
}
