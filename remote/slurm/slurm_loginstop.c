/* Stopping a command on the login node by its pid (remote/slurm/slurm_loginstop.h). */
#include "remote/slurm/slurm_loginstop.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/error.h"
#include "core/base/secret.h"
#include "remote/ssh/shquote.h"

/* A mark of this call alone, in the command's environment there: a kill for it reaches the
 * process with its pid only while that process is still the command (not a pid since reused). */
void slurm_loginstop_mark(char *mark, size_t size)
{
    unsigned char r[8];
    Error ignored;
    if (secret_random(r, sizeof r, &ignored) < 0) { /* neither getrandom nor /dev/urandom */
        long long t = clock_now_ms();
        memcpy(r, &t, sizeof r);
        r[0] ^= (unsigned char)getpid();
    }
    size_t n = 0;
    for (size_t i = 0; i < sizeof r && n + 3 <= size; i++)
        n += (size_t)snprintf(mark + n, size - n, "%02x", r[i]);
}

void slurm_loginstop_wrapper(const char *mark, char *script, size_t size)
{
    /* sh, whatever the login shell: $$ is the pid the exec keeps for the command */
    snprintf(script, size,
             "TUNEDECK_SLURM_CALL=%s; export TUNEDECK_SLURM_CALL; "
             "echo \"tunedeck-pid $$\" >&2; exec \"$@\"",
             mark);
}

int slurm_ctl_pid_line(const char *line, long *pid)
{
    static const char word[] = "tunedeck-pid";
    if (strncmp(line, word, sizeof word - 1) != 0)
        return 0;
    const char *p = line + sizeof word - 1;
    if (*p++ != ' ' || !isdigit((unsigned char)*p))
        return -1;
    long v = 0;
    for (; isdigit((unsigned char)*p); p++)
        if ((v = v * 10 + (*p - '0')) > 2147483647L) /* pid_t is 32-bit */
            return -1;
    if (*p || v < 2) /* pid 1 is init: never a shell of ours */
        return -1;
    *pid = v;
    return 1;
}

RemoteExec *slurm_loginstop_interrupt(HostPool *pool, long pid, const char *mark)
{
    char script[200];
    snprintf(script, sizeof script,
             "tr '\\0' '\\n' < /proc/%ld/environ 2>/dev/null | "
             "grep -qx 'TUNEDECK_SLURM_CALL=%s' && kill -INT %ld",
             pid, mark, pid);
    const char *argv[] = {"sh", "-c", script}; /* sh's words, whatever the login shell */
    char *cmd = shquote_argv(argv, 3);
    Error ignored;
    RemoteExec *x = cmd ? hostpool_exec_now(pool, 0, cmd, NULL, 0, NULL, &ignored) : NULL;
    free(cmd);
    return x;
}

RemoteExec *slurm_loginstop_cancel(HostPool *pool, long job)
{
    char cmd[48];
    snprintf(cmd, sizeof cmd, "scancel %ld", job);
    Error ignored;
    return hostpool_exec_now(pool, 0, cmd, NULL, 0, NULL, &ignored);
}
