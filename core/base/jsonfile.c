/* Writing a JSON document to a file (jsonfile.h). */
#include "core/base/jsonfile.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/jsonprint.h"

int jsonfile_write(const char *path, const cJSON *root, Error *err)
{
    char *text = jsonprint_text(root, 1);
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

int jsonfile_check_writable(const char *path, Error *err)
{
    /* O_NONBLOCK: a FIFO with no reader is refused rather than waited on. */
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
    int created = 0;
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        created = fd >= 0;
    }
    if (fd < 0)
        return error_set(err, "%s: cannot write: %s", path, strerror(errno));
    close(fd);
    if (created)
        unlink(path);
    return 0;
}
