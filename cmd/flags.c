/* Shared checks for command-line values, so every command words its errors alike. */
#include "cmd/flags.h"

#include <string.h>

#include "core/base/decimal.h"
#include "core/base/exitcode.h"
#include "core/sim/simcluster.h"

int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out)
{
    if (decimal_long(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck%s%s: %s: expected an integer in [%ld, %ld], found '%s'\n",
                cmd ? " " : "", cmd ? cmd : "", flag, min, max, text);
        return -1;
    }
    return 0;
}

int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out)
{
    if (decimal_double(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck%s%s: %s: expected a number in [%g, %g], found '%s'\n",
                cmd ? " " : "", cmd ? cmd : "", flag, min, max, text);
        return -1;
    }
    return 0;
}

void flags_help_wrapped(FILE *out, const char *text, int col, int indent)
{
    enum { WIDTH = 80 };
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (!word)
            break;
        if (col > indent && col + 1 + (int)word > WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (p != text && col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, word, out);
        col += (int)word;
        p += word;
    }
    fputc('\n', out);
}

int flags_unknown(const char *cmd, const char *arg)
{
    fprintf(stderr, "tunedeck%s%s: unknown or incomplete option '%s' (try --help)\n",
            cmd ? " " : "", cmd ? cmd : "", arg);
    return EXIT_USAGE;
}

void flags_help_sim(FILE *out, const char *what, const char *note)
{
    char text[512];
    snprintf(text, sizeof text, "%s (%s%s)", what, note, simcluster_settings_help());
    fputs("  --sim SPEC         ", out);
    flags_help_wrapped(out, text, 21, 21);
}
