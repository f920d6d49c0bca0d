#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/* The guard: a command whose sshd session process dies (here: its parent, killed) has its
 * group stopped. This process is the subreaper, as init would be: the orphaned command and
 * the guard are reparented to it, and it reaps them. Regression: nothing stopped a remote
 * command that did not write when tunedeck died (no pty, no SIGHUP). */
Test(groupstop, the_guard_stops_the_group_once_its_session_parent_is_gone)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t session = fork();
    cr_assert(session >= 0);
    if (session == 0) {
        pid_t c = fork();
        if (c == 0) {
            setpgid(0, 0); /* sshd's setsid: the command leads its group */
            execl("/bin/sh", "sh", "-c",
                  GROUPSTOP_GUARD_SH("20") "exec sleep 300", (char *)NULL);
            _exit(127);
        }
        setpgid(c, c);
        long cl = c;
        if (write(fds[1], &cl, sizeof cl) != (ssize_t)sizeof cl)
            _exit(1);
        for (;;)
            pause(); /* the session process, until the test kills it */
    }
    close(fds[1]);
    long c = 0;
    cr_assert_eq(read(fds[0], &c, sizeof c), (ssize_t)sizeof c);
    close(fds[0]);
    /* the guard runs once the shell got to exec: its group holds more than the leader */
    char probe[64];
    snprintf(probe, sizeof probe, "[ $(pgrep -g %ld | wc -l) -ge 2 ]", c);
    while (system(probe) != 0)
        usleep(50 * 1000);
    kill(session, SIGKILL);
    waitpid(session, NULL, 0);
    int st = 0;
    cr_assert_eq(waitpid((pid_t)c, &st, 0), (pid_t)c); /* it ends: nothing else would end it */
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
    kill((pid_t)-c, SIGKILL); /* the guard, if its KILL has not come yet */
    while (waitpid(-1, NULL, 0) > 0)
        ;
}
