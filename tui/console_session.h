/* Opening and closing the console's session (tui/console_session.c), and its journal. */
#ifndef TUNEDECK_CONSOLE_SESSION_H
#define TUNEDECK_CONSOLE_SESSION_H

#include "core/base/error.h"
#include "tui/app.h"
#include "tui/console_options.h"

/* Opens o->session with the console's callbacks (userdata a), then the Slurm desk, the live
 * scheduler or the simulated one; fills a's pointers to what the session owns. -1 with err
 * naming the flag or file at fault; console_close_session undoes a partial open. */
int console_open_session(App *a, const ConsoleOptions *o, Error *err);
/* Frees what the console added (editor, schedulers, desks, the table) and closes s. */
void console_close_session(App *a, Session *s);
/* The journal begins once the screen is ours (a console that never ran leaves none); a
 * resumed session's trials are in the tuner after it. -1 only where o->journal_required. */
int console_begin_journal(App *a, const ConsoleOptions *o, Error *err);

#endif
