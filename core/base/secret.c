/* getrandom blocks only until the kernel's pool is first seeded (early boot), never after;
 * a kernel without the call (ENOSYS, before 3.17) falls back to /dev/urandom. */
#include "core/base/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

static int from_urandom(unsigned char *out, size_t n, Error *err)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, "/dev/urandom: %s", strerror(errno));
    while (n > 0) {
        ssize_t r = read(fd, out, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            close(fd);
            return error_set(err, "/dev/urandom: %s", strerror(e));
        }
        out += r;
        n -= (size_t)r;
    }
    close(fd);
    return 0;
}

int secret_random(unsigned char *out, size_t n, Error *err)
{
    while (n > 0) {
        ssize_t r = getrandom(out, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == ENOSYS)
            return from_urandom(out, n, err);
        if (r <= 0)
            return error_set(err, "getrandom: %s", r < 0 ? strerror(errno) : "no bytes");
        out += r;
        n -= (size_t)r;
    }
    return 0;
}

void secret_to_hex(const unsigned char in[SECRET_BYTES], char out[SECRET_HEX_CHARS + 1])
{
    static const char DIGITS[] = "0123456789abcdef";
    for (size_t i = 0; i < SECRET_BYTES; i++) {
        out[2 * i] = DIGITS[in[i] >> 4];
        out[2 * i + 1] = DIGITS[in[i] & 15];
    }
    out[SECRET_HEX_CHARS] = 0;
}

int secret_new_hex(char out[SECRET_HEX_CHARS + 1], Error *err)
{
    unsigned char raw[SECRET_BYTES];
    if (secret_random(raw, sizeof raw, err) < 0)
        return -1;
    secret_to_hex(raw, out);
    explicit_bzero(raw, sizeof raw);
    return 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int secret_from_hex(const char *hex, unsigned char out[SECRET_BYTES], Error *err)
{
    size_t len = strlen(hex);
    if (len != SECRET_HEX_CHARS)
        return error_set(err, "expected %d hex digits (%d random bytes), found %zu characters",
                         SECRET_HEX_CHARS, SECRET_BYTES, len);
    for (size_t i = 0; i < SECRET_BYTES; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            explicit_bzero(out, SECRET_BYTES);
            return error_set(err, "expected %d hex digits (%d random bytes), found a character "
                                  "that is not one at position %zu",
                             SECRET_HEX_CHARS, SECRET_BYTES, 2 * i + (hi < 0 ? 1 : 2));
        }
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int secret_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
    volatile unsigned char diff = 0; /* no early exit the compiler could add back */
    for (size_t i = 0; i < n; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

int secret_no_core_dumps(Error *err)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
        return 0;
    return error_set(err, "cannot keep the secret out of core files: prctl: %s", strerror(errno));
}

int secret_no_core_dumps_unless(const char *dumpable, Error *err)
{
    if (dumpable && strcmp(dumpable, "1") == 0)
        return 0;
    return secret_no_core_dumps(err) < 0 ? -1 : 1;
}

void secret_wipe_free(void *p)
{
    if (!p)
        return;
    explicit_bzero(p, malloc_usable_size(p));
    free(p);
}
