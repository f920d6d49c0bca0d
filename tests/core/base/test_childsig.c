/* Children forked by childsig_fork start with no handler of ours and no signal blocked, and
 * keep the ignores that are not tunedeck's own. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/childsig.h"

static void on_signal(int sig)
{
    (void)sig;
}

static int is_default(int sig)
{
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
           sa.sa_handler == SIG_DFL;
}

static int is_ignored(int sig)
{
    struct sigaction sa;
    return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

/* The child's state is checked in the child, before any exec: the window a stop can hit. */
Test(childsig, the_child_has_default_handlers_and_an_empty_mask_before_it_execs)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_term, old_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGUSR1, &sa, &old_usr1);
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    void (*old_hup)(int) = signal(SIGHUP, SIG_IGN); /* as under nohup: passed on */
    sigset_t usr2, before;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, &before);

    pid_t pid = childsig_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        sigset_t now;
        sigprocmask(SIG_SETMASK, NULL, &now);
        int bad = 0;
        for (int sig = 1; sig < NSIG; sig++)
            if (sigismember(&now, sig) == 1)
                bad |= 1;
        bad |= is_default(SIGTERM) ? 0 : 2;
        bad |= is_default(SIGUSR1) ? 0 : 4;
        bad |= is_default(SIGPIPE) ? 0 : 8;
        bad |= is_default(SIGXFSZ) ? 0 : 16;
        bad |= is_ignored(SIGHUP) ? 0 : 32;
        _exit(bad);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    sigset_t after;
    sigprocmask(SIG_SETMASK, &before, &after);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
    signal(SIGPIPE, old_pipe);
    signal(SIGXFSZ, old_xfsz);
    signal(SIGHUP, old_hup);
    cr_assert(WIFEXITED(st), "the child died: status %#x", st);
    int bad = WEXITSTATUS(st);
    cr_assert_eq(bad & 1, 0, "a signal is still blocked in the child");
    cr_assert_eq(bad & 2, 0, "SIGTERM still runs the parent's handler in the child");
    cr_assert_eq(bad & 4, 0, "SIGUSR1 still runs the parent's handler in the child");
    cr_assert_eq(bad & 8, 0, "SIGPIPE still ignored in the child");
    cr_assert_eq(bad & 16, 0, "SIGXFSZ still ignored in the child");
    cr_assert_eq(bad & 32, 0, "an ignore that is not tunedeck's (SIGHUP) was dropped");
    /* the parent's mask is its own again: SIGUSR2 blocked, nothing else added */
    cr_assert_eq(sigismember(&after, SIGUSR2), 1);
    cr_assert_eq(sigismember(&after, SIGTERM), 0);
}

/* A signal sent to the child before it reset its handlers is held, then meets SIG_DFL: here
 * it is sent to the parent's blocked copy, the way a stop could reach the child at once. */
Test(childsig, a_term_in_the_window_ends_the_child)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigset_t old;
    childsig_block(&old);
    pid_t pid = fork();
    if (pid == 0) {
        raise(SIGTERM); /* pending: arrived before the reset */
        childsig_reset();
        _exit(0); /* reached only when the TERM was swallowed */
    }
    childsig_restore(&old);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    sigaction(SIGTERM, &old_term, NULL);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
}
