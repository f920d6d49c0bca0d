/* The log overlay (L): the console's log whole, each line wrapped at the overlay's width, so
 * a line the log pane cuts (a failed trial's reason, a host's error) can be read to its end
 * at any terminal size. Newest last; Up/Down (j/k) and PgUp/PgDn scroll it by lines of the
 * log, any other key closes it. */
#ifndef TUNEDECK_LOGVIEW_H
#define TUNEDECK_LOGVIEW_H

#include "tui/app.h"

/* Draws the overlay over the frame with `back` lines of the log left out below (0: it ends
 * with the newest line); returns back clamped to what the log holds. */
size_t logview_draw(const App *a, int cols, int rows, size_t back);

#endif
