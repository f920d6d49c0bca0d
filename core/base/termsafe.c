/* Terminal-safe text (termsafe.h). */
#include "core/base/termsafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/utf8.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when it is not one (an overlong
 * form, a surrogate, past U+10FFFF, cut short: utf8.h); *cp gets the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, unsigned *cp)
{
    int v;
    size_t len = utf8_next((const char *)s, n, &v);
    if (v == UTF8_INVALID)
        return 0;
    *cp = (unsigned)v;
    return len;
}

/* The Unicode controls that reorder the text around them where a terminal lays out
 * bidirectional text (VTE, Konsole, mlterm): an override or isolate in a remote's words
 * could show a row's text in another order than it holds ("Trojan Source"), and the line and
 * paragraph separators some render as a line break. Shown as <U+XXXX>, like C1 controls. */
int termsafe_reorders(unsigned cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

size_t termsafe_n(char *out, size_t cap, const char *in, size_t n)
{
    if (!cap)
        return 0;
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0, i = 0;
    while (i < n) {
        char piece[16];
        const char *src = piece;
        size_t plen, used = 1;
        unsigned c = s[i], cp;
        if (c < 0x20 || c == 0x7F) {
            piece[0] = '^';
            piece[1] = (char)(c == 0x7F ? '?' : c + 0x40);
            plen = 2;
        } else if (c < 0x80) {
            src = in + i;
            plen = 1;
        } else if ((used = utf8_seq(s + i, n - i, &cp)) == 0) {
            used = 1;
            plen = (size_t)snprintf(piece, sizeof piece, "\\x%02X", c);
        } else if (cp <= 0x9F || termsafe_reorders(cp)) {
            plen = (size_t)snprintf(piece, sizeof piece, "<U+%04X>", cp);
        } else {
            src = in + i;
            plen = used;
        }
        if (o + plen + 1 > cap)
            break;
        memcpy(out + o, src, plen);
        o += plen;
        i += used;
    }
    out[o] = 0;
    return o;
}

size_t termsafe_char(char *out, size_t cap, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned cp = 0;
    size_t used = u[0] < 0x80 ? (u[0] != 0) : utf8_seq(u, strnlen(s, 4), &cp);
    if (!used && u[0])
        used = 1; /* a byte that starts no character: \xE8 */
    char shown[24];
    termsafe_n(shown, sizeof shown, s, used);
    /* the code point too: 'e' with an accent reads as 'e' in a hurry, and a name's
     * lookalikes (Cyrillic 'a') are told apart only by it */
    if (cp > 0x9F && !termsafe_reorders(cp))
        snprintf(out, cap, "'%s' (U+%04X)", shown, cp);
    else
        snprintf(out, cap, "'%s'", shown);
    return used;
}

size_t termsafe(char *out, size_t cap, const char *in)
{
    return termsafe_n(out, cap, in, strlen(in));
}

char *termsafe_dup(const char *in)
{
    size_t cap = strlen(in) * 4 + 1;
    char *out = malloc(cap);
    if (out)
        termsafe(out, cap, in);
    return out;
}

void termsafe_inplace(char *text, size_t cap)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t k = 0;
    while (s[k] >= 0x20 && s[k] < 0x7F)
        k++;
    if (!s[k]) /* the common case: plain ASCII, nothing to do */
        return;
    char stack[1024] = "";
    char *copy = cap <= sizeof stack ? stack : malloc(cap);
    if (!copy) {
        text[k] = 0; /* keep the safe prefix rather than unsafe text */
        return;
    }
    size_t len = termsafe(copy, cap, text);
    memcpy(text, copy, len + 1);
    if (copy != stack)
        free(copy);
}
