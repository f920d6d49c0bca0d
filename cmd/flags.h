/* Command-line values checked with the messages every subcommand shares. */
#ifndef TUNEDECK_FLAGS_H
#define TUNEDECK_FLAGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* Parse a strict decimal integer/number in [min, max] (core/base/decimal.h: no spaces, hex,
 * exponent for an integer, inf or nan); on failure print
 * "tunedeck CMD: FLAG: expected ..., found '...'" (cmd NULL: the console, which is
 * `tunedeck` itself: "tunedeck: FLAG: ...") and return -1. */
int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out);
int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out);

/* A name that must not be empty (an empty --partition read as "every partition"): on ''
 * print "tunedeck CMD: FLAG: expected WHAT, found ''" and return -1. */
int flags_name(const char *cmd, const char *flag, const char *text, const char *what);

/* An option getopt_long refused (returned '?'): `ind` is its optind after, so argv[ind - 1]
 * is the refused word. A value flag of `longopts` given last with nothing after it (also by a
 * prefix getopt_long takes) is named with what it takes: "tunedeck[ CMD]: --budget: expected
 * an integer after it"; anything else is "tunedeck[ CMD]: unknown or incomplete option 'ARG'
 * (try --help)", a short option named alone ('-z' of "-zq", from getopt's optopt) (CMD
 * NULL for the console, which is `tunedeck` itself). The line, without its newline, goes in
 * buf (n bytes). */
void flags_refusal(char *buf, size_t n, const char *cmd, const struct option *longopts, int argc,
                   char *const *argv, int ind);

/* A value flag whose value, the next word, is itself one of `longopts` ("--cluster --live",
 * the value forgotten) or "-h": puts "tunedeck[ CMD]: --cluster: expected a file after it,
 * found the option '--live' (...)" in buf and returns 1; else 0. `ind` is optind after the
 * value, as getopt_long leaves it. */
int flags_value_refusal(char *buf, size_t n, const char *cmd, const struct option *longopts,
                        int argc, char *const *argv, int ind);

/* Every command's getopt_long (short options: "-h" alone, opterr 0): returns its answer, but
 * FLAGS_REFUSED, with the line printed on stderr, for an option flags_refusal names and for a
 * value flags_value_refusal names. */
enum { FLAGS_REFUSED = -2 };
int flags_getopt(const char *cmd, int argc, char **argv, const struct option *longopts,
                 int *longindex);

/* A --help line's long text (a list made elsewhere, such as the simulator's settings),
 * word-wrapped to 80 columns: it goes on from column `col` where the caller left the
 * line, and every next line starts at column `indent`. Ends the line. */
void flags_help_wrapped(FILE *out, const char *text, int col, int indent);

/* The "--sim SPEC" line of the console's and tune's --help: WHAT, then in parentheses
 * NOTE followed by the simulator's settings, wrapped under the other options' text. */
void flags_help_sim(FILE *out, const char *what, const char *note);

#endif
