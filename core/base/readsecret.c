/* Whole-stream reads that leave no copy of what they read behind (see readsecret.h). */
#include "core/base/readsecret.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Small, so a schedule of a few machines fits and a big one is grown more than once. */
enum { READSECRET_FIRST_BYTES = 4096 };

/* Every byte of the block, not only those read: a failed read(2) may have written some. */
static void wipe_free(char *buf, size_t cap)
{
    explicit_bzero(buf, cap);
    free(buf);
}

/* A block of new_cap bytes holding the first len of old (cap bytes), or NULL; old is wiped
 * and freed either way, so its bytes never stay on the heap. */
static char *grow_wiped(char *old, size_t len, size_t cap, size_t new_cap)
{
    char *fresh = malloc(new_cap);
    if (fresh)
        memcpy(fresh, old, len);
    wipe_free(old, cap);
    return fresh;
}

char *readsecret_fd(int fd, size_t max_bytes, size_t *len_out, Error *err)
{
    size_t cap = READSECRET_FIRST_BYTES, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        error_no_memory(err, "reading %zu bytes", len);
        return NULL;
    }
    for (;;) {
        if (len + 1 == cap) {
            /* cap * 2 cannot wrap: cap is the size of a block malloc gave, at most PTRDIFF_MAX */
            buf = grow_wiped(buf, len, cap, cap * 2);
            if (!buf) {
                error_no_memory(err, "reading %zu bytes", len);
                return NULL;
            }
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        /* A directory opens but fails here (EISDIR): report that, not an empty input. */
        if (n < 0) {
            int e = errno;
            wipe_free(buf, cap);
            error_set(err, "cannot read: %s", strerror(e));
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (max_bytes && len > max_bytes) {
            wipe_free(buf, cap);
            error_set(err, "expected at most %zu bytes", max_bytes);
            return NULL;
        }
    }
    buf[len] = 0;
    if (len_out)
        *len_out = len;
    return buf;
}

void readsecret_free(char *text, size_t len)
{
    if (!text)
        return;
    explicit_bzero(text, len + 1); /* the NUL too: the buffer is always one longer than len */
    free(text);
}
