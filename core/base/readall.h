/* Reading a whole file or stream into one NUL-terminated buffer, saying why when it cannot:
 * the one reader behind JSON files, CSV tables and schedules on standard input. */
#ifndef TUNEDECK_READALL_H
#define TUNEDECK_READALL_H

#include <stddef.h>
#include <stdio.h>

#include "core/base/error.h"

/* Reads f to its end. max_bytes > 0 refuses anything longer; *len (may be NULL) gets the
 * byte count, which is less than strlen() only when the text holds a NUL. The error names
 * no source (the caller knows it): "cannot read: REASON", "expected at most N bytes" or
 * "out of memory". Caller frees. */
char *readall_stream(FILE *f, size_t max_bytes, size_t *len, Error *err);

/* The same for a file by path; the error starts with the path. */
char *readall_file(const char *path, size_t max_bytes, size_t *len, Error *err);

#endif
