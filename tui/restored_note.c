/* The console's line for the overrides a resume restored (restored_note.h). */
#include "tui/restored_note.h"

#include <stdio.h>

void restored_note_format(char *out, size_t cap, size_t queued, int first, int budget, char drop)
{
    int last = first + (int)queued - 1;
    size_t fit = budget >= first ? (size_t)(budget - first + 1) : 0;
    if (fit > queued)
        fit = queued;
    size_t wait = queued - fit;
    char trials[48] = "";
    if (fit == 1)
        snprintf(trials, sizeof trials, "trial %d", first);
    else if (fit > 1)
        snprintf(trials, sizeof trials, "trials %d-%d", first, first + (int)fit - 1);
    if (!wait && queued == 1)
        snprintf(out, cap,
                 "1 override queued before the session ended runs first as %s (%c drops it)",
                 trials, drop);
    else if (!wait)
        snprintf(out, cap,
                 "%zu overrides queued before the session ended run first as %s (%c drops the "
                 "last, :unqueue N any)",
                 queued, trials, drop);
    else if (!fit)
        snprintf(out, cap,
                 "the %zu override%s queued before the session ended wait%s past the budget of "
                 "%d (:budget %d runs %s)",
                 queued, queued == 1 ? "" : "s", queued == 1 ? "s" : "", budget, last,
                 queued == 1 ? "it" : "them");
    else
        snprintf(out, cap,
                 "of the %zu overrides queued before the session ended, %zu run%s first as %s "
                 "and %zu wait%s past the budget of %d (:budget %d runs %s)",
                 queued, fit, fit == 1 ? "s" : "", trials, wait, wait == 1 ? "s" : "", budget, last,
                 wait == 1 ? "it" : "them");
}
