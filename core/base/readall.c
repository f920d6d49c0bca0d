/* Whole-file and whole-stream reads with errors that say why (see readall.h). */
#include "core/base/readall.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *readall_stream(FILE *f, size_t max_bytes, size_t *len_out, Error *err)
{
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        error_no_memory(err, "reading %zu bytes", len);
        return NULL;
    }
    for (;;) {
        if (len + 1 == cap) {
            char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                error_no_memory(err, "reading %zu bytes", len);
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (max_bytes && len > max_bytes) {
            free(buf);
            error_set(err, "expected at most %zu bytes", max_bytes);
            return NULL;
        }
        if (n == 0)
            break;
    }
    /* A directory opens but fails here (EISDIR): report that, not an empty file. */
    if (ferror(f)) {
        int e = errno;
        free(buf);
        error_set(err, "cannot read: %s", strerror(e));
        return NULL;
    }
    buf[len] = 0;
    if (len_out)
        *len_out = len;
    return buf;
}

char *readall_file(const char *path, size_t max_bytes, size_t *len, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *text = readall_stream(f, max_bytes, len, err);
    fclose(f);
    if (!text)
        error_prefix(err, "%s", path);
    return text;
}
