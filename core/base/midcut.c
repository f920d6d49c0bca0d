/* A long message cut in its middle (core/base/midcut.h). */
#include "core/base/midcut.h"

#include <stdio.h>
#include <string.h>

static const char MARK[] = " ... ";

/* Inside a UTF-8 sequence: not a place to cut. */
static int continuation(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

size_t midcut(char *out, size_t cap, const char *text)
{
    if (!cap)
        return 0;
    size_t len = strlen(text), mark = sizeof MARK - 1;
    if (len < cap || cap < mark + 16) {
        size_t n = len < cap ? len : cap - 1;
        while (n < len && n && continuation(text[n]))
            n--;
        memcpy(out, text, n);
        out[n] = 0;
        return n;
    }
    size_t room = cap - 1 - mark, head = room / 3, tail = room - head;
    /* the head ends before a space within its last half, the tail starts after one */
    size_t h = head;
    while (h > head / 2 && text[h] != ' ')
        h--;
    if (text[h] != ' ')
        for (h = head; h && continuation(text[h]); h--)
            ;
    size_t t = len - tail;
    while (t < len - tail / 2 && text[t - 1] != ' ')
        t++;
    if (text[t - 1] != ' ')
        for (t = len - tail; t < len && continuation(text[t]); t++)
            ;
    memcpy(out, text, h);
    memcpy(out + h, MARK, mark);
    memcpy(out + h + mark, text + t, len - t);
    out[h + mark + len - t] = 0;
    return h + mark + len - t;
}
