/* A marked daemon for the stop tests (marked.h). */
#include "tests/support/marked.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* marked_daemon's process, in a session of its own (group 0) or in group `group`. */
static pid_t marked_sleep(const char *mark, int ignore_term, pid_t group)
{
    pid_t d = fork();
    cr_assert(d >= 0);
    if (d == 0) {
        if (group)
            setpgid(0, group);
        else
            setsid();
        if (ignore_term)
            signal(SIGTERM, SIG_IGN);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        char env[64];
        snprintf(env, sizeof env, "TUNEDECK_RUN_MARK=%s", mark);
        char *envp[] = {"PATH=/usr/bin:/bin", env, NULL};
        execle("/bin/sh", "sh", "-c", "exec sleep 300", (char *)NULL, envp);
        _exit(127);
    }
    /* ready once it is sleep (its environment then the exec's, not this process's) */
    char path[64], name[32];
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)d);
    for (;;) {
        FILE *f = fopen(path, "r");
        int got = f && fgets(name, sizeof name, f);
        if (f)
            fclose(f);
        if (got && strcmp(name, "sleep\n") == 0)
            return d;
        usleep(10 * 1000);
    }
}

pid_t marked_daemon(const char *mark, int ignore_term)
{
    return marked_sleep(mark, ignore_term, 0);
}

pid_t marked_member(const char *mark, pid_t group)
{
    return marked_sleep(mark, 0, group); /* it joins before its exec, which is waited for */
}

pid_t gone_group(void)
{
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        setpgid(0, 0);
        _exit(0);
    }
    setpgid(child, child); /* whichever of the two runs first */
    waitpid(child, NULL, 0);
    return child;
}

int ended_status(pid_t pid)
{
    for (int i = 0; i < 1000; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        usleep(10 * 1000);
    }
    return -1;
}
