/* The lines of `srun --label`, read back per task. srun puts each task's number before
 * every line the task writes, right-aligned to the width of the step's largest number
 * ("0: text", " 9: text", "11: text"; Slurm 22.05 src/common/write_labelled_message.c,
 * _build_label), and nothing before its own lines ("srun: error: n2: task 1: Exited with
 * exit code 3"). slurmstepd forwards a task's output at most MAX_MSG_LEN (1024) bytes a
 * message (src/common/io_hdr.h), and under --label srun ends every message with a newline:
 * a longer line comes as labeled pieces of exactly SRUNLABEL_PIECE bytes, then its rest,
 * and the pieces of two tasks may interleave. SrunLines joins them again, per task. */
#ifndef TUNEDECK_SRUNLABEL_H
#define TUNEDECK_SRUNLABEL_H

#include <stddef.h>

enum { SRUNLABEL_PIECE = 1024 };

/* The task number of a labeled line, with *text where the task's own text starts; -1 (and
 * *text = line) for a line that carries no label. In one step over several components of a
 * heterogeneous job, srun labels each task with its number in the whole step (the task's
 * own plus its component's offset: _build_label; seen on the harness: n1 : n3,n4 labeled
 * 0, 1, 2), so the labels of two components never collide; the "P<component> N: " form,
 * which 22.05 writes only where it lacks that offset, is not read. */
long srunlabel_parse(const char *line, const char **text);

typedef struct SrunLines SrunLines;

/* max_line: a joined line is given out once it reaches this many bytes, as the readers'
 * own line buffers cut theirs. NULL when out of memory. */
SrunLines *srunlines_new(size_t max_line);
void srunlines_free(SrunLines *l);

/* One line as srun wrote it (without its newline) on `stream` (any number that tells the
 * streams apart: a task's stdout and stderr are joined apart). Returns 1 when a whole line is
 * ready: *task (-1: srun's own line) and *text, valid until the next call; 0 when the line
 * was a piece of a longer one, kept until its rest comes. Out of memory, a piece is given as
 * a line of its own (a protocol line so cut is refused as any bad line is). */
int srunlines_push(SrunLines *l, int stream, const char *line, long *task, const char **text);

#endif
