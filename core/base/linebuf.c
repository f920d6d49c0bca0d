/* Line reassembly with a bound per line, for process and SSH channel output. */
#include "core/base/linebuf.h"

#include <stdlib.h>
#include <string.h>

void linebuf_init(LineBuf *b, size_t max_line)
{
    memset(b, 0, sizeof *b);
    b->max_line = max_line;
}

void linebuf_clear(LineBuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int reserve(LineBuf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown)
        return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

int linebuf_append(LineBuf *b, const char *bytes, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(bytes, '\n', n);
        size_t chunk = nl ? (size_t)(nl - bytes) + 1 : n;
        /* Bytes of the current (last, unfinished) line already held. */
        const char *last_nl = b->len ? memrchr(b->data, '\n', b->len) : NULL;
        size_t open_len = last_nl ? b->len - (size_t)(last_nl - b->data) - 1 : b->len;
        size_t body = nl ? chunk - 1 : chunk;
        size_t room = open_len < b->max_line ? b->max_line - open_len : 0;
        size_t keep = body < room ? body : room;
        if (keep < body)
            b->overflow = 1;
        if (reserve(b, b->len + keep + 2) < 0)
            return -1;
        memcpy(b->data + b->len, bytes, keep);
        b->len += keep;
        if (nl) {
            /* A cut line is marked by a NUL before its newline, read back by pop. */
            if (b->overflow)
                b->data[b->len++] = 0;
            b->data[b->len++] = '\n';
            b->overflow = 0;
        }
        bytes += chunk;
        n -= chunk;
    }
    return 0;
}

static char *take(LineBuf *b, size_t line_len, size_t consumed, int *truncated)
{
    int cut = line_len > 0 && b->data[line_len - 1] == 0;
    if (cut)
        line_len--;
    if (line_len > 0 && b->data[line_len - 1] == '\r')
        line_len--;
    char *line = malloc(line_len + 1);
    if (!line)
        return NULL;
    memcpy(line, b->data, line_len);
    line[line_len] = 0;
    b->last_len = line_len;
    memmove(b->data, b->data + consumed, b->len - consumed);
    b->len -= consumed;
    if (truncated)
        *truncated = cut;
    return line;
}

char *linebuf_pop(LineBuf *b, int *truncated)
{
    char *nl = b->len ? memchr(b->data, '\n', b->len) : NULL;
    if (!nl)
        return NULL;
    size_t line_len = (size_t)(nl - b->data);
    return take(b, line_len, line_len + 1, truncated);
}

char *linebuf_finish(LineBuf *b, int *truncated)
{
    char *line = linebuf_pop(b, truncated);
    if (line || b->len == 0)
        return line;
    if (b->overflow) {
        if (reserve(b, b->len + 1) < 0)
            return NULL;
        b->data[b->len++] = 0;
        b->overflow = 0;
    }
    return take(b, b->len, b->len, truncated);
}
