/* Tells a lost peer's words from a cause (peerloss.h). */
#include "core/model/peerloss.h"

#include <string.h>

int peerloss_said(const char *text)
{
    /* gloo's transport (tcp/pair.cc) and torch's TCPStore give strerror's words or their
     * own; NCCL's watchdog says the remote process exited. Seen with torch 1.13 on the Slurm
     * harness: a rank that raised at step 2 took every peer down in that step's all_reduce,
     * each with "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [ADDR]:PORT". */
    static const char *const words[] = {
        "Connection reset by peer",
        "Connection closed by peer",
        "Broken pipe",
        "remote process exited",
    };
    if (!text)
        return 0;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(text, words[i]))
            return 1;
    return 0;
}
