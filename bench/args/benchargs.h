/* The tail of every benchmark's option parsing, written once: no operand left after the
 * options, and an --out file that can be written before minutes of work are spent; and the
 * whole of it for the benchmarks that take only --out and --quick. */
#ifndef TUNEDECK_BENCHARGS_H
#define TUNEDECK_BENCHARGS_H

/* 0 when argv holds nothing past index `first` (getopt's optind); else prints
 * "WHO: unexpected argument 'ARG'HINT" (HINT such as " (try --help)", or "") and returns -1. */
int benchargs_no_operands(const char *who, int argc, char **argv, int first, const char *hint);

/* 0 when `out` is NULL (no --out) or a file jsonfile_write can create or replace; else prints
 * "WHO: --out WHY" and returns -1. */
int benchargs_out_writable(const char *who, const char *out);

/* Reads argv as "[--out FILE.json] [--quick]" into *out (NULL when absent) and *quick, and
 * checks the --out file as benchargs_out_writable does. Returns 0, or -1 after printing
 * "usage: WHO [--out FILE.json] [--quick]" or the --out file's fault. */
int benchargs_out_quick(const char *who, int argc, char **argv, const char **out, int *quick);

#endif
