/* The console's one log line for the overrides a resume restored: which run first (as which
 * trials) and which wait past the budget, in one message (two said "run first as trials 2-3"
 * and then that those past trial 2 wait). */
#ifndef TUNEDECK_RESTORED_NOTE_H
#define TUNEDECK_RESTORED_NOTE_H

#include <stddef.h>

/* queued > 0 overrides restored, the first to run as trial `first`, under `budget`; drop is
 * the key that drops the last. */
void restored_note_format(char *out, size_t cap, size_t queued, int first, int budget, char drop);

#endif
