/* The `:` commands of the console (budget, pause, theme, policy, ...). */
#ifndef TUNEDECK_COMMAND_H
#define TUNEDECK_COMMAND_H

#include "tui/app.h"

/* Runs one command line; returns 0 when it was understood (a message says why not). */
int command_run(App *a, const char *line);

#endif
