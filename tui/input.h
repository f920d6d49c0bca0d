/* Keys, mouse and the `:`/`/` prompt: turns terminal input into changes of the App. */
#ifndef TUNEDECK_INPUT_H
#define TUNEDECK_INPUT_H

#include "tui/app.h"

/* Reads every pending key and applies it. */
void input_handle(App *a);
/* Asks the tuner's model about the edited schedule (and checks it) after an edit. */
void input_refresh_prediction(App *a);
/* Runs one `:` command line; returns 0 when it was understood. Exposed for tests. */
int input_command(App *a, const char *line);

#endif
