/* The console's start (tui/console_start.c): its state with the settings read, and the first
 * frame's setup. */
#ifndef TUNEDECK_CONSOLE_START_H
#define TUNEDECK_CONSOLE_START_H

#include "core/base/error.h"
#include "tui/app.h"
#include "tui/console_options.h"

/* The settings file and the plot style; NULL with err on a bad --plot. cerr, *config_bad:
 * what was wrong with the settings file (said once the screen is up). Freed with free(). */
App *console_app_new(const ConsoleOptions *o, Error *cerr, int *config_bad, Error *err);
/* Glyphs, theme, the resume's leftover stop begun, and the log's opening lines (the session,
 * overrides a resume kept queued, the Slurm watch, the live scheduler). */
void console_app_start(App *a, const ConsoleOptions *o, int config_bad, const Error *cerr);

#endif
