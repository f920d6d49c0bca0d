/* A printf-style line to a log callback (remote/live/livelog.h). */
#include "remote/live/livelog.h"

#include <stdarg.h>
#include <stdio.h>

void livelog(LiveLogFn fn, void *userdata, const char *fmt, ...)
{
    if (!fn)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fn(userdata, line);
}
