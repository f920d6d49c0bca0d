/* What `tunedeck schedule` and `tunedeck schedule --live` share on the command line: the
 * usage text's policy list and the message for bad input. */
#ifndef TUNEDECK_SCHEDULE_CLI_H
#define TUNEDECK_SCHEDULE_CLI_H

#include <stdio.h>

/* Prints text, then "policies: NAME NAME ...\n". */
void schedule_usage(FILE *out, const char *text);
#include "core/base/error.h"

/* Prints "tunedeck CMD: MSG" to stderr; returns EXIT_USAGE (core/base/exitcode.h). */
int schedule_fail(const char *cmd, const char *msg);
/* The same with err's message; returns the exit status err's kind calls for (a bad input
 * file: EXIT_BAD_INPUT), else EXIT_USAGE. */
int schedule_fail_error(const char *cmd, const Error *err);
/* Whether --events names the file of one of the inputs (NULL-terminated list): it is written
 * whole, and over an input it would destroy it. */
int schedule_events_over_input(const char *events, const char *const *inputs);

#endif
