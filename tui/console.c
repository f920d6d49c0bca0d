/* The console: opens its session (tui/console_session.c), starts the screen
 * (tui/console_start.c), runs the loop (tui/console_loop.c) until the operator quits, and
 * closes it all after the stops a quit waits for (tui/console_stops.c). Keys are handled in
 * tui/input.c, what they do in tui/app.c, drawing in tui/frame.c and the views. */
#include "tui/console.h"

#include <stdlib.h>
#include <string.h>

#include "tui/console_loop.h"
#include "tui/console_session.h"
#include "tui/console_start.h"
#include "tui/console_stops.h"
#include "tui/term.h"

int console_run(const ConsoleOptions *o, Error *err)
{
    err->msg[0] = 0;
    Error cerr;
    int config_bad;
    App *a = console_app_new(o, &cerr, &config_bad, err);
    if (!a)
        return -1;
    int rc = console_open_session(a, o, err);
    if (rc == 0 && (rc = term_open(err)) == 0 && (rc = console_begin_journal(a, o, err)) < 0)
        term_close();
    if (rc < 0) {
        console_close_session(a, o->session);
        free(a);
        return -1;
    }
    console_app_start(a, o, config_bad, &cerr);
    rc = console_loop(a, o->session, err);
    /* On a loop error a stop may still run: this waits for it (its lines drawn, journaled
     * before `ended`), before the terminal and the session close. */
    session_journal_end(o->session);
    if (a->ss && simsched_live(a->ss))
        console_live_stop(a);
    term_close();
    /* The screen is gone: what the session reports while it closes (a trial log that cannot
     * be written, the running trial's end) is kept in the log, never drawn; drawing it read
     * the tuner session_close had freed (a crash at the quit on a full disk). cmd_console
     * says on stderr what failed. */
    a->last_frame_ms = 0;
    console_close_session(a, o->session);
    int quit_signal = a->quit_signal;
    free(a);
    return rc == 0 && quit_signal ? quit_signal : rc;
}
