/* Reading a whole stream that holds a secret (a trial's schedule with its "ps_secret") so
 * that no copy outlives the caller's: read(2) into a buffer we own (no stdio buffer keeps a
 * piece), grown by allocate, copy, wipe, free (a realloc may leave the old block on the heap
 * unwiped), and wiped on every error path. */
#ifndef TUNEDECK_READSECRET_H
#define TUNEDECK_READSECRET_H

#include <stddef.h>

#include "core/base/error.h"

/* Reads fd to its end into a NUL-terminated buffer. max_bytes > 0 refuses anything longer;
 * *len (may be NULL) gets the byte count. The errors are readall_stream's (readall.h): "cannot
 * read: REASON", "expected at most N bytes", "reading N bytes: out of memory". The caller
 * frees with readsecret_free. */
char *readsecret_fd(int fd, size_t max_bytes, size_t *len, Error *err);

/* Wipes the len bytes readsecret_fd returned, then frees them; text may be NULL. */
void readsecret_free(char *text, size_t len);

#endif
