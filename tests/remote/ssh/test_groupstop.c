#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/ssh/groupstop.h"

/* A child in a process group of its own: it exits at once (a zombie, not reaped until the
 * caller waits for it) or waits until killed. */
static pid_t group_child(int exit_now)
{
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        setpgid(0, 0);
        if (exit_now)
            _exit(0);
        for (;;)
            pause();
    }
    setpgid(c, c); /* whichever of the two runs first */
    if (exit_now) {
        siginfo_t si;
        cr_assert_eq(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT), 0); /* zombie, kept */
    }
    return c;
}

/* The remote login shell: dash (/bin/sh) or bash. */
static const char *const SHELLS[] = {"sh", "bash"};

/* The exit status of `live G` run by `shell` as the remote side would. */
static int live_status_in(const char *shell, pid_t g)
{
    char cmd[64];
    /* the snippet holds single quotes: handed over in a file, not quoted */
    char path[] = "/tmp/test-groupstop-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "%s\nlive %ld\n", GROUPSTOP_LIVE_SH, (long)g);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s %s", shell, path);
    int st = system(cmd);
    unlink(path);
    cr_assert(WIFEXITED(st), "sh did not exit: %d", st);
    return WEXITSTATUS(st);
}

/* The same answer from every shell, or -1. */
static int live_status(pid_t g)
{
    int a = live_status_in(SHELLS[0], g), b = live_status_in(SHELLS[1], g);
    return a == b ? a : -1;
}

/* Regression: the stop's loop asked kill -0, which a zombie answers, and waited its 2 s cap
 * on a group that only held a process waiting to be reaped. */
Test(groupstop, a_group_of_only_a_zombie_is_not_live)
{
    pid_t z = group_child(1);
    cr_assert_eq(kill(-z, 0), 0, "the zombie keeps its group in use (what kill -0 sees)");
    cr_assert_eq(live_status(z), 1);
    waitpid(z, NULL, 0);
}

Test(groupstop, a_group_with_a_running_process_is_live)
{
    pid_t c = group_child(0);
    cr_assert_eq(live_status(c), 0);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

Test(groupstop, a_group_that_is_gone_is_not_live)
{
    pid_t z = group_child(1);
    waitpid(z, NULL, 0);
    cr_assert_eq(live_status(z), 1);
}

/* Regression as well: "kill -TERM -- -G" fails in dash ("Illegal number: -"), and the stop
 * killed nothing where the login shell was /bin/sh. */
Test(groupstop, the_command_stops_a_group_in_dash_and_bash)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        pid_t c = group_child(0);
        char *cmd = groupstop_command(c);
        cr_assert_not_null(cmd);
        char path[] = "/tmp/test-groupstop-XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
        close(fd);
        free(cmd);
        char run[64];
        snprintf(run, sizeof run, "%s %s", SHELLS[i], path);
        int st = system(run);
        unlink(path);
        int cs = 0;
        pid_t w = waitpid(c, &cs, WNOHANG); /* the command ends only once the group is gone */
        if (w == 0)
            kill(c, SIGKILL), waitpid(c, NULL, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", SHELLS[i]);
        cr_assert_eq(w, c, "%s: the group is still running", SHELLS[i]);
        cr_assert(WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "%s", SHELLS[i]);
    }
}
