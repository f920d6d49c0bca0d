/* Tells a lost peer's words from a cause (peerloss.h). */
#include "core/model/peerloss.h"

#include <string.h>

static int has_any(const char *text, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(text, words[i]))
            return 1;
    return 0;
}

int peerloss_said(const char *text)
{
    /* gloo's transport (tcp/pair.cc) and torch's TCPStore give strerror's words or their
     * own; NCCL's watchdog says the remote process exited. Seen with torch 1.13 on the Slurm
     * harness: a rank that raised at step 2 took every peer down in that step's all_reduce,
     * each with "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [ADDR]:PORT". */
    static const char *const own[] = {
        "Connection closed by peer",
        "remote process exited",
    };
    /* strerror's words are anyone's: a rank's own Python BrokenPipeError or
     * ConnectionResetError (its data loader's pipe, a socket of its own) is a cause. They
     * count only where torch's C++ transport speaks: its errors reach Python as RuntimeError
     * (or name the layer that failed). */
    static const char *const strerror_words[] = {
        "Connection reset by peer",
        "Broken pipe",
    };
    static const char *const transport[] = {
        "RuntimeError", "gloo", "c10d", "TCPStore", "ProcessGroup", "NCCL",
    };
    if (!text)
        return 0;
    if (has_any(text, own, sizeof own / sizeof *own))
        return 1;
    return has_any(text, strerror_words, sizeof strerror_words / sizeof *strerror_words) &&
           has_any(text, transport, sizeof transport / sizeof *transport);
}
