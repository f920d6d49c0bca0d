/* The console's loop (tui/console_loop.c): the terminal, the tuner, the hosts' pool, the
 * leftover stops, the Slurm desk, the live driver on Slurm and the frame, polled together. */
#ifndef TUNEDECK_CONSOLE_LOOP_H
#define TUNEDECK_CONSOLE_LOOP_H

#include "core/base/error.h"
#include "remote/session/session.h"
#include "tui/app.h"

/* Runs until the operator quits (0; a->quit_signal says whether a signal asked it), or -1
 * with err when the sources could not be registered or the terminal polled. */
int console_loop(App *a, Session *s, Error *err);

#endif
