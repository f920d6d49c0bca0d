/* Command-line values checked with the messages every subcommand shares. */
#ifndef TUNEDECK_FLAGS_H
#define TUNEDECK_FLAGS_H

#include <stdio.h>

/* Parse a strict decimal integer/number in [min, max] (core/base/decimal.h: no spaces, hex,
 * exponent for an integer, inf or nan); on failure print
 * "tunedeck CMD: FLAG: expected ..., found '...'" (cmd NULL: the console, which is
 * `tunedeck` itself: "tunedeck: FLAG: ...") and return -1. */
int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out);
int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out);

/* An option getopt refused: prints "tunedeck[ CMD]: unknown or incomplete option 'ARG'
 * (try --help)" (CMD NULL for the console, which is `tunedeck` itself) and returns
 * EXIT_USAGE. */
int flags_unknown(const char *cmd, const char *arg);

/* A --help line's long text (a list made elsewhere, such as the simulator's settings),
 * word-wrapped to 80 columns: it goes on from column `col` where the caller left the
 * line, and every next line starts at column `indent`. Ends the line. */
void flags_help_wrapped(FILE *out, const char *text, int col, int indent);

/* The "--sim SPEC" line of the console's and tune's --help: WHAT, then in parentheses
 * NOTE followed by the simulator's settings, wrapped under the other options' text. */
void flags_help_sim(FILE *out, const char *what, const char *note);

#endif
