/* A long message made to fit a fixed buffer without losing how it ends: a failed login's
 * words end with what was denied and the fix, after a middle (the agent's sockets) that a
 * config may make long. */
#ifndef TUNEDECK_MIDCUT_H
#define TUNEDECK_MIDCUT_H

#include <stddef.h>

/* `text` into out (cap bytes, always ended): whole when it fits; else its head (a third) and
 * its tail around " ... ", each cut at a space near the cut where there is one, else at a
 * whole UTF-8 character. Returns the length written. */
size_t midcut(char *out, size_t cap, const char *text);

#endif
