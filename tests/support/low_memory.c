/* A child process with a low address-space limit, for the out-of-memory tests. */
#include "tests/support/low_memory.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

int low_memory_supported(void)
{
#ifdef UNDER_ASAN
    return 0;
#else
    return 1;
#endif
}

/* The process's current virtual size in bytes (/proc/self/statm's first field, in pages). */
static size_t address_space_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

int low_memory_run(size_t headroom_bytes, int (*fn)(void *ud), void *ud)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        size_t now = address_space_bytes();
        struct rlimit lim = {.rlim_cur = now + headroom_bytes, .rlim_max = now + headroom_bytes};
        if (now == 0 || setrlimit(RLIMIT_AS, &lim) < 0)
            _exit(126);
        _exit(fn(ud) & 0x7f);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
