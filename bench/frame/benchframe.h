/* What the frame benchmarks (bench/console, bench/slurm_frame) share: an off-screen terminal
 * drawn as the console draws, the bytes each frame sends it, the bare full refresh every
 * frame is measured against (medians: core/base/median.h). */
#ifndef TUNEDECK_BENCH_BENCHFRAME_H
#define TUNEDECK_BENCH_BENCHFRAME_H

#include <curses.h>
#include <stdio.h>

#include "tui/snapshot.h"

typedef struct {
    SCREEN *screen;
    FILE *out; /* what the terminal was sent: a temporary file */
    FILE *in;  /* /dev/null */
} BenchScreen;

/* Makes a rows x cols xterm-256color terminal (UTF-8) the current screen, with the default
 * theme in 256 colours. -1, with a line on stderr naming `who`, when it cannot. */
int benchframe_open(BenchScreen *bs, int rows, int cols, const char *who);

/* Ends the screen and closes its files. */
void benchframe_close(BenchScreen *bs);

/* The bytes sent to the terminal so far. */
long benchframe_bytes(BenchScreen *bs);

/* The peer: frame k with every cell filled and the whole screen sent, no layout, no model;
 * its time in ms, its bytes added to *bytes (NULL: not counted). */
double benchframe_bare(BenchScreen *bs, int k, long *bytes);

/* The cluster view of s, diffed against the last frame as the console draws it, or redrawn
 * whole (full); its time in ms, its bytes added to *bytes. */
double benchframe_cluster(BenchScreen *bs, const ClusterSnapshot *s, int full, long *bytes);

/* The monotonic clock in ms. */
double benchframe_now_ms(void);

/* The one option both take, --out FILE: 0 with *out (NULL when not given); 1 after the
 * usage line for --help (the run should not start); or -1 after a line on stderr naming
 * `who` for any other argument (it was once ignored). Whether FILE can be written is the
 * caller's next check (benchargs_out_writable), before the run. */
int benchframe_args(int argc, char **argv, const char *who, const char **out);

#endif
