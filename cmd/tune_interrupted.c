/* tune's words for a trial its interrupting signal left without an outcome. */
#include "cmd/tune_interrupted.h"

#include <signal.h>
#include <stdio.h>

const char *tune_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

void tune_interrupted_reason(char *out, size_t cap, int sig, const TrialRecord *r)
{
    /* The record tells them apart (TrialRecord.launched), not the phase: tuner_halt has
     * stopped the tuner by the time the summary is written. */
    if (r->launched)
        snprintf(out, cap, "stopped by %s while it ran (a resume marks it interrupted)",
                 tune_signal_name(sig));
    else
        snprintf(out, cap,
                 "stopped by %s before it launched: it was about to start (a resume marks it "
                 "interrupted)",
                 tune_signal_name(sig));
}
