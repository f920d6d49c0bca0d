/* One UTF-8 character at a time (utf8.h). */
#include "core/base/utf8.h"

/* Table 3-7 of The Unicode Standard §3.9: the range the second byte must fall in after a
 * lead byte (the third and fourth are always 80..BF); the narrowed ranges are what rule out
 * overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4). */
static int second_ok(unsigned char lead, unsigned char b)
{
    switch (lead) {
    case 0xE0:
        return b >= 0xA0 && b <= 0xBF;
    case 0xED:
        return b >= 0x80 && b <= 0x9F;
    case 0xF0:
        return b >= 0x90 && b <= 0xBF;
    case 0xF4:
        return b >= 0x80 && b <= 0x8F;
    default:
        return b >= 0x80 && b <= 0xBF;
    }
}

size_t utf8_next(const char *s, size_t n, int *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char c = u[0];
    size_t len;
    int value;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        value = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        value = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        value = c & 0x07;
    } else {
        *cp = UTF8_INVALID; /* a continuation byte, C0, C1 or F5..FF: no sequence starts */
        return 1;
    }
    for (size_t k = 1; k < len; k++) {
        if (k >= n || !(k == 1 ? second_ok(c, u[1]) : (u[k] & 0xC0) == 0x80)) {
            *cp = UTF8_INVALID; /* the bytes so far began a sequence: one U+FFFD for them */
            return k;
        }
        value = value << 6 | (u[k] & 0x3F);
    }
    *cp = value;
    return len;
}

size_t utf8_valid_len(const char *s, size_t n)
{
    size_t at = 0;
    while (at < n) {
        int cp;
        size_t len = utf8_next(s + at, n - at, &cp);
        if (cp == UTF8_INVALID)
            break;
        at += len;
    }
    return at;
}
