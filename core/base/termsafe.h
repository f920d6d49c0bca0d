/* Text that came from outside (a trial's error, an SSH disconnect message, remote output,
 * a journal string, a name echoed in an error) is made harmless before any terminal shows
 * it: nothing in it can move the cursor, rewrite a row, change colours or the title, or
 * start an escape sequence. Every surface that prints such text passes it through here. */
#ifndef TUNEDECK_TERMSAFE_H
#define TUNEDECK_TERMSAFE_H

#include <stddef.h>

/* Copies `in` into `out` (cap bytes, always terminated; cut at a whole placeholder or
 * character when it does not fit) with every byte that could drive a terminal made
 * visible: C0 controls and DEL in caret notation (ESC is ^[, CR ^M, BS ^H, LF ^J, TAB ^I),
 * C1 controls (U+0080..U+009F) and the bidi controls and Unicode line breaks (U+202E,
 * U+2066..U+2069, U+2028...) as <U+0085>, and bytes that are not UTF-8 as \xHH. Valid
 * printable UTF-8 is kept as is. Returns the length written. out must not overlap in. */
size_t termsafe(char *out, size_t cap, const char *in);

/* The same for `n` bytes that may hold NULs (shown as ^@). */
size_t termsafe_n(char *out, size_t cap, const char *in, size_t n);

/* termsafe's text of `in` whole, however long, in a buffer of its own (free it): a byte grows
 * to 4 at most ("\xHH", C1 "<U+0085>"). NULL when memory runs out. */
char *termsafe_dup(const char *in);

/* Sanitises a string in place (through a bounded copy): for fixed buffers such as
 * Error.msg. */
void termsafe_inplace(char *text, size_t cap);

/* The one character at s (its whole UTF-8 sequence, or one byte that is not one) as an error
 * message names it: quoted and shown as termsafe does, with its code point when it is not
 * ASCII: "';'", "'^A'", a stray byte "'\xE8'", an e with a grave accent as itself and
 * "(U+00E8)". Returns the bytes it spans (at least 1; 0 at the end of s). */
size_t termsafe_char(char *out, size_t cap, const char *s);

/* Whether code point `cp` is one of the bidirectional controls or line separators shown as
 * <U+XXXX> (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069, U+2028/9); jsonprint.h
 * escapes the same. */
int termsafe_reorders(unsigned cp);

#endif
