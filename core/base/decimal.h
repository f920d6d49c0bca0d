/* Strict decimal numbers from text (command-line flags, environment variables): the whole
 * text is the number, written as a person writes one, or it is refused. */
#ifndef TUNEDECK_DECIMAL_H
#define TUNEDECK_DECIMAL_H

/* An optional '-', then digits, nothing else: no '+', spaces, hex (0x10), octal reading,
 * fraction or exponent (1e3). Returns 0 with *out set when it is one within [min, max],
 * else -1 with *out untouched. */
int decimal_long(const char *text, long min, long max, long *out);

/* An optional '-', digits, an optional '.' and digits (a digit on one side at least), an
 * optional exponent (e or E, an optional sign, digits), nothing else: no spaces, hex,
 * inf or nan. Returns 0 with *out set when it is finite and within [min, max], else -1. */
int decimal_double(const char *text, double min, double max, double *out);

#endif
