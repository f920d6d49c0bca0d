/* The processes below a process, read from /proc: what a keeper (lifeline.h) has adopted as
 * a child subreaper, and what sits below it. Only system calls, no allocation: the keeper is
 * a fork of tunedeck, which may have threads. Linux only. */
#ifndef TUNEDECK_PROCTREE_H
#define TUNEDECK_PROCTREE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    pid_t pid, ppid, pgid;
    char comm[17]; /* the kernel's short name, at most 15 characters */
} ProcInfo;

/* Reads /proc/PID/stat; 0, or -1 when the process is gone (or unreadable). */
int proctree_info(pid_t pid, ProcInfo *out);

/* Calls `visit` for every process whose parent is `self` (`below` 0), or for every process
 * whose chain of parents reaches `self` (`below` 1); returns how many were visited, or -1
 * when /proc cannot be read. A process born or gone during the walk may be missed: callers
 * walk again until nothing is left. */
int proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud), void *ud);

/* Writes v in decimal to buf (room for 20 digits), without a NUL; returns how many digits.
 * No stdio, for the same reason (the /proc paths here, the keeper's note). */
size_t proctree_decimal(char *buf, unsigned long v);

#endif
