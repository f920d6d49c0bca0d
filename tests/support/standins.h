/* Stand-in commands for the unit tests that run a real program by name (sbatch, squeue,
 * sinfo, ...): small shell scripts in a folder of their own, put first on PATH. Each helper
 * fails the calling test (Criterion assertions) instead of returning an error. */
#ifndef TUNEDECK_TEST_STANDINS_H
#define TUNEDECK_TEST_STANDINS_H

#include <stddef.h>

/* Makes the folder `dir` (a mkdtemp template, filled in) and writes each of the n stand-ins
 * there as an executable "#!/bin/sh" script that has D set to the folder, then its body
 * (table[i][0] is the name, table[i][1] the body); puts the folder first on PATH. */
void standins_install(char *dir, const char *const (*table)[2], size_t n);

/* Writes `text` to the file `name` in dir, for a stand-in to read (a state, an answer). */
void standins_put(const char *dir, const char *name, const char *text);

/* What a stand-in wrote to the file `name` in dir ("" when nothing); the caller frees. */
char *standins_recorded(const char *dir, const char *name);

/* Removes the folder and everything in it, and turns `dir` back into its template. */
void standins_remove(char *dir);

#endif
