/* /proc read with open/read/getdents64 alone (proctree.h). */
#include "remote/launch/proctree.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A chain of parents longer than this is a loop seen mid-change (pids reused): not ours. */
enum { MAX_DEPTH = 256 };

static long parse_long(const char **p)
{
    while (**p == ' ')
        (*p)++;
    long v = 0;
    int neg = **p == '-';
    if (neg)
        (*p)++;
    while (**p >= '0' && **p <= '9')
        v = v * 10 + (*(*p)++ - '0');
    return neg ? -v : v;
}

size_t proctree_decimal(char *buf, unsigned long v)
{
    char tmp[24];
    size_t n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

int proctree_info(pid_t pid, ProcInfo *out)
{
    char path[48] = "/proc/";
    size_t n = 6 + proctree_decimal(path + 6, (unsigned long)pid);
    memcpy(path + n, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return -1;
    buf[len] = 0;
    /* "pid (comm) state ppid pgrp ...": the name may hold spaces and parentheses, so the
     * fields after it start at its last ')' */
    const char *open_paren = strchr(buf, '(');
    const char *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
        return -1;
    size_t cn = (size_t)(close_paren - open_paren - 1);
    if (cn > sizeof out->comm - 1)
        cn = sizeof out->comm - 1;
    memcpy(out->comm, open_paren + 1, cn);
    out->comm[cn] = 0;
    const char *p = close_paren + 2;
    if (*p == 0 || p[1] != ' ')
        return -1;
    p += 2; /* the state letter */
    out->pid = pid;
    out->ppid = (pid_t)parse_long(&p);
    out->pgid = (pid_t)parse_long(&p);
    return 0;
}

static int is_below(pid_t self, const ProcInfo *p)
{
    pid_t up = p->ppid;
    for (int depth = 0; depth < MAX_DEPTH && up > 1; depth++) {
        if (up == self)
            return 1;
        ProcInfo q;
        if (proctree_info(up, &q) < 0)
            return 0;
        up = q.ppid;
    }
    return up == self;
}

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

int proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud), void *ud)
{
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    int count = 0;
    char buf[8192] __attribute__((aligned(8)));
    for (;;) {
        long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            const char *s = d->d_name;
            if (*s < '1' || *s > '9')
                continue;
            pid_t pid = (pid_t)parse_long(&s);
            ProcInfo p;
            if (*s || pid == self || proctree_info(pid, &p) < 0)
                continue;
            if (p.ppid == self || (below && is_below(self, &p))) {
                visit(&p, ud);
                count++;
            }
        }
    }
    close(dir);
    return count;
}
