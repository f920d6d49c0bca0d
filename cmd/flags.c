/* Shared checks for command-line values, so every command words its errors alike. */
#include "cmd/flags.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/base/exitcode.h"

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

int flags_unknown(const char *cmd, const char *arg)
{
    fprintf(stderr, "tunedeck%s%s: unknown or incomplete option '%s' (try --help)\n",
            cmd ? " " : "", cmd ? cmd : "", arg);
    return EXIT_USAGE;
}
