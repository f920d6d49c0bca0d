/* SIGINT and SIGTERM, the operator's two ways to stop a headless command, caught so that the
 * command keeps what it measured (the summary, the events so far, the journal's end) before it
 * ends as the signal would have. A signal ignored at start (nohup, a parent's choice) stays
 * ignored. Shared by `tune` and `schedule`, whose handlers differ in what they note. */
#ifndef TUNEDECK_INTERRUPTS_H
#define TUNEDECK_INTERRUPTS_H

#include <signal.h>

typedef struct {
    struct sigaction old[2]; /* SIGINT's, SIGTERM's, as they were */
} Interrupts;

/* Sends both signals to handler, unless ignored; saved keeps the old handlers. */
void interrupts_catch(Interrupts *saved, void (*handler)(int));
/* The old handlers back. */
void interrupts_restore(const Interrupts *saved);

#endif
