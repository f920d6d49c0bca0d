/* Shared checks for command-line values, so every command words its errors alike. */
#include "cmd/flags.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) {
        fprintf(stderr, "tunedeck %s: %s: expected an integer in [%ld, %ld], found '%s'\n", cmd,
                flag, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < min || v > max) {
        fprintf(stderr, "tunedeck %s: %s: expected a number in [%g, %g], found '%s'\n", cmd,
                flag, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

char *flags_read_stream(FILE *f, size_t max)
{
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 >= cap) {
            if (cap > max) {
                free(buf);
                return NULL;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
    }
    if (buf)
        buf[len] = 0;
    return buf;
}
