/* A printf-style line to a log callback, the one way the live driver and its backends say
 * what they do (the console's log pane, `schedule --live`'s standard output). */
#ifndef TUNEDECK_LIVELOG_H
#define TUNEDECK_LIVELOG_H

typedef void (*LiveLogFn)(void *userdata, const char *line);

/* Formats one line (cut at 1,023 bytes) and hands it to fn; nothing when fn is NULL. */
void livelog(LiveLogFn fn, void *userdata, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
