/* What the session and the schedulers say, on the screen (tui/console_events.c): the
 * session's callbacks (SessionSpec.on_event, on_report, on_warning; the live driver's log),
 * each with the App as its userdata. */
#ifndef TUNEDECK_CONSOLE_EVENTS_H
#define TUNEDECK_CONSOLE_EVENTS_H

#include "remote/launch/tuner.h"
#include "tui/app.h"

/* Logs the scheduler's new decisions and refreshes what the cluster view shows. */
void console_sched_changed(App *a);
void console_on_tuner_event(void *ud, TunerEvent ev, const TrialRecord *rec);
/* A report line: logged, and drawn at once while the screen is up (last_frame_ms set). */
void console_log_line(void *ud, const char *line);
/* A warning (a file's misspelt key): on the message line and in the log. */
void console_warn_line(void *ud, const char *line);
void console_live_log(void *ud, const char *line);

#endif
