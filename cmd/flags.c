/* Shared checks for command-line values, so every command words its errors alike. */
#include "cmd/flags.h"

#include "core/base/decimal.h"
#include "core/base/exitcode.h"

int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out)
{
    if (decimal_long(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck %s: %s: expected an integer in [%ld, %ld], found '%s'\n", cmd,
                flag, min, max, text);
        return -1;
    }
    return 0;
}

int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out)
{
    if (decimal_double(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck %s: %s: expected a number in [%g, %g], found '%s'\n", cmd,
                flag, min, max, text);
        return -1;
    }
    return 0;
}

int flags_unknown(const char *cmd, const char *arg)
{
    fprintf(stderr, "tunedeck%s%s: unknown or incomplete option '%s' (try --help)\n",
            cmd ? " " : "", cmd ? cmd : "", arg);
    return EXIT_USAGE;
}
