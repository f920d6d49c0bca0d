/* Runs a piece of a test in a forked child whose address space may grow by only a little
 * (RLIMIT_AS), to check that core/ reports running out of memory instead of crashing. */
#ifndef TUNEDECK_TEST_LOW_MEMORY_H
#define TUNEDECK_TEST_LOW_MEMORY_H

#include <stddef.h>

/* 1 when the limit can be trusted here; 0 under AddressSanitizer, whose allocator reserves
 * its own memory and dies instead of returning NULL. */
int low_memory_supported(void);

/* Forks; the child lowers RLIMIT_AS to its current size plus headroom_bytes, calls fn(ud) and
 * exits with its return value (0..125). Returns that exit status, or 128 + the signal that
 * ended the child (an abort() is 134), or -1 when the child could not start. */
int low_memory_run(size_t headroom_bytes, int (*fn)(void *ud), void *ud);

#endif
