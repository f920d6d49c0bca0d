/* Error messages with context, built up as an error travels outward. */
#include "core/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/termsafe.h"

int error_set(Error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* Messages echo input (names, values, remote text): never a terminal's control. */
    termsafe_inplace(err->msg, sizeof err->msg);
    err->kind = ERROR_OTHER;
    return -1;
}

int error_mark(Error *err, ErrorKind kind)
{
    if (err)
        err->kind = kind;
    return -1;
}

int error_prefix(Error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[ERROR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    termsafe_inplace(err->msg, sizeof err->msg);
    return -1;
}

int error_no_memory(Error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char context[ERROR_MSG_MAX] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(context, sizeof context, fmt, ap);
        va_end(ap);
    }
    if (context[0])
        return error_set(err, "%s: out of memory", context);
    return error_set(err, "out of memory");
}
