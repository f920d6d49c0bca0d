/* A trial started and stepped by hand up to a moment its own output marks, then stopped: the
 * launcher tests that cancel a trial in mid-run (its srun ready, its step reported). */
#ifndef TUNEDECK_TEST_LAUNCHSTEP_H
#define TUNEDECK_TEST_LAUNCHSTEP_H

#include "remote/launch/launcher.h"

/* Starts schedule s with the launcher named `launcher` and cfg, steps it until *flag is set
 * (by one of cfg's log callbacks) or it ended by itself, asserts the flag (`what`: the message
 * when it was never set), cancels it, waits for its end and frees the run. Its result: the
 * caller frees it. */
Observation *launchstep_cancel_once(const char *launcher, const LaunchConfig *cfg,
                                    const Schedule *s, const int *flag, const char *what);

#endif
