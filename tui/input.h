/* Keys, mouse and the `:`/`/` prompt: turns terminal input into changes of the App. */
#ifndef TUNEDECK_INPUT_H
#define TUNEDECK_INPUT_H

#include "tui/app.h"

/* Reads every pending key and applies it. */
void input_handle(App *a);
/* Ctrl-C (SIGINT, from the signal pipe): an open `:` or `/` prompt is cancelled as Esc
 * does, and 1 returned; with none open, 0: the caller quits (exit 130). */
int input_interrupt(App *a);

#endif
