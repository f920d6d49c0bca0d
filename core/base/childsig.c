/* Children started with default dispositions and an empty signal mask (childsig.h). */
#include "core/base/childsig.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

void childsig_block(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

void childsig_restore(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void childsig_reset(void)
{
    /* A signal that arrived since the fork is pending, not lost: it meets SIG_DFL once the
     * mask below is emptied. */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) < 0)
            continue; /* glibc's own real-time signals refuse sigaction: never ours */
        int caught =
            (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
        int ours_ignored = sa.sa_handler == SIG_IGN && (sig == SIGPIPE || sig == SIGXFSZ);
        if (caught || ours_ignored) {
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            sigemptyset(&dfl.sa_mask);
            sigaction(sig, &dfl, NULL);
        }
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

pid_t childsig_fork(void)
{
    sigset_t old;
    childsig_block(&old);
    pid_t pid = fork();
    if (pid == 0) {
        childsig_reset();
        return 0;
    }
    int saved = errno;
    childsig_restore(&old);
    errno = saved;
    return pid;
}
