/* Writing a JSON document to a file, saying why when it cannot: the benchmarks' --out. */
#ifndef TUNEDECK_JSONFILE_H
#define TUNEDECK_JSONFILE_H

#include "core/base/error.h"

typedef struct cJSON cJSON;

/* Writes `root` indented, with a final newline. A full disk shows only at fclose, so that is
 * checked too; the error starts with the path. */
int jsonfile_write(const char *path, const cJSON *root, Error *err);

/* Whether `path` can be written, asked before a long run so that a bad --out is said at once,
 * not after it: an existing file is opened for appending (left as it was), a new one is
 * created and removed again. The error starts with the path, as jsonfile_write's does. */
int jsonfile_check_writable(const char *path, Error *err);

#endif
