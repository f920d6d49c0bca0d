/* Writing a JSON document to a file (jsonfile.h). */
#include "core/base/jsonfile.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jsonfile_write(const char *path, const cJSON *root, Error *err)
{
    char *text = cJSON_Print(root);
    if (!text)
        return error_no_memory(err, "%s", path);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    free(text);
    return ok ? 0 : error_set(err, "%s: cannot write: %s", path, strerror(saved));
}
