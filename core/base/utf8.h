/* One UTF-8 character at a time, as Unicode's "maximal subpart" practice reads text (The
 * Unicode Standard §3.9, U+FFFD substitution; what WHATWG's decoder and Python do): a
 * well-formed sequence is one code point, and every ill-formed stretch is cut into the
 * longest pieces that begin a well-formed sequence, or single bytes, each standing for one
 * U+FFFD. Overlong forms, encoded surrogates (U+D800..U+DFFF) and code points past U+10FFFF
 * are ill-formed (RFC 3629). */
#ifndef TUNEDECK_UTF8_H
#define TUNEDECK_UTF8_H

#include <stddef.h>

enum { UTF8_INVALID = -1, UTF8_REPLACEMENT = 0xFFFD };

/* The character at s (n > 0 bytes left): returns its length in bytes (1..4, never more than
 * n) with *cp its code point, or UTF8_INVALID when those bytes are a maximal subpart of an
 * ill-formed sequence (one U+FFFD). A NUL byte is U+0000, one byte long. */
size_t utf8_next(const char *s, size_t n, int *cp);

/* How many of the n bytes at s are well-formed UTF-8 before the first that is not: n when
 * all are. */
size_t utf8_valid_len(const char *s, size_t n);

#endif
