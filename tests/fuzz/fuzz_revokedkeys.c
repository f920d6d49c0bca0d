/* Fuzzes RevokedHostKeys files (remote/ssh/revokedkeys.c): the same bytes as a KRL (behind its
 * magic) and as a key list. A verdict is 1, 0 or an error with its message; never a read past
 * the input. The key asked about is the seed corpus's revoked ed25519 key. */
#include "remote/ssh/revokedkeys.h"
#include "tests/fuzz/fuzz_common.h"

static const char KEY_B64[] =
    "AAAAC3NzaC1lZDI1NTE5AAAAIDBukZNqI2jQN9IF6a9qqzYT4InuKMUB7uO75RtgwcFO";

static void verdict(const uint8_t *data, size_t size, const RevokedKeyQuery *q)
{
    Error err;
    err.msg[0] = 0;
    int rc = revokedkeys_parse(data, size, "fuzz", q, &err);
    if (rc < -1 || rc > 1 || (rc < 0 && !err.msg[0]))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static RevokedKeyQuery q;
    if (!q.len && revokedkeys_query_blob(&q, KEY_B64) < 0)
        abort();
    memset(q.sha1, 0x5a, sizeof q.sha1);
    memset(q.sha256, 0xa5, sizeof q.sha256);
    verdict(data, size, &q);
    /* the same bytes behind a KRL's magic: every section reader sees them */
    uint8_t *krl = malloc(size + 8);
    if (!krl)
        return 0;
    memcpy(krl, "SSHKRL\n", 8);
    memcpy(krl + 8, data, size);
    verdict(krl, size + 8, &q);
    free(krl);
    return 0;
}
