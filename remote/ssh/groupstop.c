/* The remote shell text that stops a process group (groupstop.h). */
#include <stdio.h>
#include <stdlib.h>

#include "remote/ssh/groupstop.h"

char *groupstop_command(long pgid)
{
    /* TERM lets the trial checkpoint or clean up; KILL after 2 s leaves nothing behind. */
    const char *fmt = GROUPSTOP_LIVE_SH "; kill -TERM -%ld 2>/dev/null; n=0; "
                                        "while live %ld; do n=$((n+1)); if [ $n -ge 20 ]; then "
                                        "kill -KILL -%ld 2>/dev/null; break; fi; "
                                        "sleep 0.1; done; true";
    int len = snprintf(NULL, 0, fmt, pgid, pgid, pgid);
    char *cmd = len < 0 ? NULL : malloc((size_t)len + 1);
    if (cmd)
        snprintf(cmd, (size_t)len + 1, fmt, pgid, pgid, pgid);
    return cmd;
}
