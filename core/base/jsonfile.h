/* Writing a JSON document to a file, saying why when it cannot: the benchmarks' --out. */
#ifndef TUNEDECK_JSONFILE_H
#define TUNEDECK_JSONFILE_H

#include "core/base/error.h"

typedef struct cJSON cJSON;

/* Writes `root` indented, with a final newline. A full disk shows only at fclose, so that is
 * checked too; the error starts with the path. */
int jsonfile_write(const char *path, const cJSON *root, Error *err);

#endif
