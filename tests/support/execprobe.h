/* What a child's signals are at the moment it execs, seen from inside it: the unit binary
 * links with --wrap=execl and --wrap=execvp (Makefile), so the project's exec calls pass
 * through here; with TUNEDECK_TEST_EXECPROBE naming a file, the child appends its
 * /proc/self/status there before the real exec. Deterministic where a signal sent in the
 * fork-to-exec window would be a race. */
#ifndef TUNEDECK_TEST_EXECPROBE_H
#define TUNEDECK_TEST_EXECPROBE_H

#define EXECPROBE_ENV "TUNEDECK_TEST_EXECPROBE"

/* Reads the probe file `path`: the hex masks of its first SigBlk, SigIgn and SigCgt lines.
 * 0, or -1 when the file holds no status. */
int execprobe_read(const char *path, unsigned long long *blocked, unsigned long long *ignored,
                   unsigned long long *caught);

#endif
