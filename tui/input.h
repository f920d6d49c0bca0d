/* Keys, mouse and the `:`/`/` prompt: turns terminal input into changes of the App. */
#ifndef TUNEDECK_INPUT_H
#define TUNEDECK_INPUT_H

#include "tui/app.h"

/* Reads every pending key and applies it. */
void input_handle(App *a);

#endif
