/* A started trial stepped by hand up to a moment its own output marks, then stopped: the
 * launcher tests that cancel a trial in mid-run (its srun ready, its step reported). */
#ifndef TUNEDECK_TEST_LAUNCHSTEP_H
#define TUNEDECK_TEST_LAUNCHSTEP_H

#include "remote/launch/launcher.h"

/* Steps the run r of k until *flag is set (by one of its log callbacks) or the run ended by
 * itself, asserts the flag (`what`: the message when it was never set), cancels the run and
 * waits for its end. The caller takes its result and frees it. */
void launchstep_cancel_once(const LauncherKind *k, void *r, const int *flag, const char *what);

#endif
