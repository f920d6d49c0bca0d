/* Draws one whole frame of the console: the tab bar, the current view, the status line and
 * the help overlay. */
#ifndef TUNEDECK_FRAME_H
#define TUNEDECK_FRAME_H

#include "tui/app.h"

void frame_draw(App *a);

#endif
