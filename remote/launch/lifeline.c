/* The keeper of a local trial's process group: the command's end is handed on as its own,
 * tunedeck's end (the lifeline pipe's end of file) stops the group. */
#include "remote/launch/lifeline.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"

static void on_child(int sig)
{
    (void)sig; /* only wakes ppoll */
}

/* Ends this process the way the command ended, so the launcher reads the same status. */
static void hand_on(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* the command dumped its core, if any; not the keeper */
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

void lifeline_keep(pid_t cmd, int lifeline_fd, int grace_ms)
{
    /* The group's TERM (a cancel, a timeout, Ctrl-C's stop) is the command's to answer: the
     * keeper outlives it to hand the command's end on. KILL still ends both. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t chld, during;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &during);
    sigdelset(&during, SIGCHLD);
    struct sigaction sa = {.sa_handler = on_child};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    int64_t kill_at = -1;
    for (;;) {
        int status;
        pid_t w = waitpid(cmd, &status, WNOHANG);
        if (w == cmd) {
            if (kill_at >= 0)
                kill(0, SIGKILL); /* tunedeck is gone: whatever the command left goes too */
            hand_on(status);
        }
        if (w < 0 && errno != EINTR)
            _exit(1); /* no command to wait for: nothing to keep */
        struct pollfd pf = {.fd = lifeline_fd, .events = POLLIN};
        struct timespec ts, *tmo = NULL;
        if (kill_at >= 0) {
            int64_t left = kill_at - clock_now_ms();
            if (left <= 0)
                kill(0, SIGKILL); /* the group, the keeper included */
            ts.tv_sec = left / 1000;
            ts.tv_nsec = (left % 1000) * 1000000;
            tmo = &ts;
        }
        int n = ppoll(kill_at >= 0 ? NULL : &pf, kill_at >= 0 ? 0 : 1, tmo, &during);
        /* Nobody writes to the lifeline: readable (end of file) means tunedeck is gone. */
        if (n > 0 && kill_at < 0) {
            kill(0, SIGTERM);
            kill_at = clock_now_ms() + grace_ms;
        }
    }
}
