/* What `tunedeck schedule` and `tunedeck schedule --live` share on the command line: the
 * usage text's policy list and the message for bad input. */
#ifndef TUNEDECK_SCHEDULE_CLI_H
#define TUNEDECK_SCHEDULE_CLI_H

#include <stdio.h>

/* Prints text, then "policies: NAME NAME ...\n". */
void schedule_usage(FILE *out, const char *text);
/* Prints "tunedeck CMD: MSG" to stderr; returns 2, the exit status for bad input. */
int schedule_fail(const char *cmd, const char *msg);

#endif
