/* Bounded line reassembly: bytes arrive in arbitrary pieces (pipes, SSH packets); complete
 * lines come out. A line longer than the bound is cut and flagged, never grows memory. */
#ifndef TUNEDECK_LINEBUF_H
#define TUNEDECK_LINEBUF_H

#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap, max_line;
    int overflow;   /* the line being assembled passed max_line: its tail is dropped */
    size_t last_len; /* bytes of the line last popped, NULs in it counted (strlen stops at one) */
} LineBuf;

void linebuf_init(LineBuf *b, size_t max_line);
void linebuf_clear(LineBuf *b);
/* Appends bytes; returns -1 only when memory runs out. */
int linebuf_append(LineBuf *b, const char *bytes, size_t n);
/* Pops the next complete line (without '\n' or '\r'), NUL-terminated, into a malloc'd
 * string; *truncated tells whether it was cut. Returns NULL when no line is complete. */
char *linebuf_pop(LineBuf *b, int *truncated);
/* At end of stream: the unterminated remainder as a last line, or NULL. */
char *linebuf_finish(LineBuf *b, int *truncated);

#endif
