/* Run marks (TUNEDECK_RUN_MARK) of the test process's own: two test runs on one machine (two
 * checkouts) stop every process that carries a mark they use, so a fixed mark let one run
 * kill the other's test processes. */
#ifndef TUNEDECK_TESTS_TESTMARK_H
#define TUNEDECK_TESTS_TESTMARK_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The pid that names this process's marks: taken before any test forks, so a test's children
 * (which fork to start what carries the mark) spell the same mark. */
static pid_t testmark_pid;
__attribute__((constructor)) static void testmark_init(void)
{
    testmark_pid = getpid();
}

/* Mark n of this process: 32 lowercase hex digits, the pid and n; the same text, at the same
 * address, at each call (64 distinct n at most a process). */
static inline const char *test_mark(unsigned n)
{
    static char marks[64][33];
    static unsigned keys[64];
    static size_t used;
    size_t i = 0;
    while (i < used && keys[i] != n)
        i++;
    if (i == used) {
        if (used == 64)
            abort();
        keys[used++] = n;
        snprintf(marks[i], sizeof marks[i], "%016lx%08x%08x", (unsigned long)testmark_pid, 0x7e57u,
                 n);
    }
    return marks[i];
}

#endif
