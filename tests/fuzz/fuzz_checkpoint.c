/* Fuzzes the job-mode checkpoint reader (tools/worker/checkpoint.c). The input's last four bytes are
 * replaced by its CRC-32, so the fuzzer gets past the checksum into the header and shape
 * checks; the bytes reach checkpoint_load through a memfd, as a file would. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/worker/checkpoint.h"
#include "tests/fuzz/fuzz_common.h"

static uint32_t crc32(const unsigned char *p, size_t n)
{
    uint32_t crc = ~0u;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > (1 << 20))
        return 0;
    unsigned char *buf = malloc(size);
    memcpy(buf, data, size);
    uint32_t crc = crc32(buf, size - 4);
    for (int i = 0; i < 4; i++)
        buf[size - 4 + i] = (unsigned char)(crc >> (8 * i));
    int fd = memfd_create("ckpt", MFD_CLOEXEC);
    if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    Checkpoint c;
    Error err;
    if (checkpoint_load(path, &c, &err) == 0)
        checkpoint_clear(&c);
    else if (!err.msg[0])
        abort();
    close(fd);
    free(buf);
    return 0;
}
