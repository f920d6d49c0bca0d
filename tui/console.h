/* The operator console: one poll() loop over the terminal, the tuning session's fds, a
 * timer and the background suggestion's wake pipe; redraws only after a change. */
#ifndef TUNEDECK_CONSOLE_H
#define TUNEDECK_CONSOLE_H

#include "core/base/error.h"
#include "tui/console_options.h"

/* Runs until the operator quits (0), a SIGTERM, SIGHUP or SIGINT quits it the same way
 * (returns the signal's number: the caller exits as that signal) or the terminal cannot be
 * used (-1 with err). */
int console_run(const ConsoleOptions *o, Error *err);

#endif
