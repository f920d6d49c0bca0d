/* Signals only to a process still the test's own (ownkill.h). */
#include "tests/support/ownkill.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

int ownkill_child(pid_t pid, int sig)
{
    siginfo_t si;
    if (pid <= 0)
        return -1;
    /* WNOWAIT: a zombie stays one; ECHILD: no child of ours by that number (reaped) */
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
        return -1;
    return kill(pid, sig);
}

/* pid's command line, arguments joined by spaces, in out; -1 when it cannot be read. */
static int cmdline_of(pid_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = 0;
    while (n > 0 && out[n - 1] == 0)
        n--; /* the last argument's NUL */
    for (size_t i = 0; i < n; i++)
        if (!out[i])
            out[i] = ' ';
    return 0;
}

int ownkill_named(pid_t pid, const char *cmdline, int sig)
{
    if (pid <= 0)
        return -1;
    int fd = pidfd_open(pid, 0);
    if (fd < 0)
        return -1;
    char line[4096];
    int rc = -1;
    /* The pidfd holds the process opened above: if it has ended since, the send fails, so a
     * command line read from a process that took the number is never acted on. */
    if (cmdline_of(pid, line, sizeof line) == 0 && strcmp(line, cmdline) == 0 &&
        pidfd_send_signal(fd, 0, NULL, 0) == 0)
        rc = pidfd_send_signal(fd, sig, NULL, 0);
    close(fd);
    return rc;
}

/* The children of this process still running (not zombies) KILLed; how many. */
static int kill_running_children(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t self = getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atol(e->d_name);
        char path[64], buf[512];
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        char *r = strrchr(buf, ')'), st = 0;
        long ppid = 0;
        if (r && sscanf(r + 1, " %c %ld", &st, &ppid) == 2 && ppid == self && st != 'Z' &&
            ownkill_child(pid, SIGKILL) == 0)
            n++;
    }
    closedir(d);
    return n;
}

void ownkill_children(void)
{
    /* a child KILLed hands its own children to this process (a subreaper): ask again after
     * each one reaped */
    for (;;) {
        kill_running_children();
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
            break;
    }
}
