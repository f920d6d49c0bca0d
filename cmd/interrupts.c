/* SIGINT and SIGTERM caught, unless ignored at start (cmd/interrupts.h). */
#include "cmd/interrupts.h"

#include <string.h>

static const int INTERRUPTS[2] = {SIGINT, SIGTERM};

void interrupts_catch(Interrupts *saved, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++)
        if (sigaction(INTERRUPTS[i], NULL, &saved->old[i]) == 0 &&
            saved->old[i].sa_handler != SIG_IGN)
            sigaction(INTERRUPTS[i], &sa, NULL);
}

void interrupts_restore(const Interrupts *saved)
{
    for (int i = 0; i < 2; i++)
        sigaction(INTERRUPTS[i], &saved->old[i], NULL);
}
