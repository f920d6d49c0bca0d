/* The exec probe (execprobe.h): only system calls between the fork and the exec. */
#include "tests/support/execprobe.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int __real_execvp(const char *file, char *const argv[]);

static void probe(void)
{
    const char *path = getenv(EXECPROBE_ENV);
    if (!path || !*path)
        return;
    int out = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    int in = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    char buf[8192];
    ssize_t n = in >= 0 ? read(in, buf, sizeof buf) : -1;
    if (out >= 0 && n > 0)
        (void)!write(out, buf, (size_t)n);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
}

int __wrap_execl(const char *path, const char *arg, ...)
{
    probe();
    char *argv[64];
    size_t n = 0;
    argv[n++] = (char *)arg;
    va_list ap;
    va_start(ap, arg);
    while (argv[n - 1] && n < 64)
        argv[n++] = va_arg(ap, char *);
    va_end(ap);
    argv[63] = NULL;
    return execv(path, argv);
}

int __wrap_execvp(const char *file, char *const argv[])
{
    probe();
    return __real_execvp(file, argv);
}

static unsigned long long field(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    return p ? strtoull(p + strlen(name), NULL, 16) : 0;
}

int execprobe_read(const char *path, unsigned long long *blocked, unsigned long long *ignored,
                   unsigned long long *caught)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    if (!strstr(text, "\nSigCgt:"))
        return -1;
    *blocked = field(text, "\nSigBlk:");
    *ignored = field(text, "\nSigIgn:");
    *caught = field(text, "\nSigCgt:");
    return 0;
}
