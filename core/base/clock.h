/* Monotonic time for deadlines and measured durations. */
#ifndef TUNEDECK_CLOCK_H
#define TUNEDECK_CLOCK_H

#include <stdint.h>

int64_t clock_now_ms(void);
double clock_now_s(void);
/* The CPU time this process has used, all its threads, in seconds (what the benchmarks
 * measure). */
double clock_cpu_s(void);

#endif
