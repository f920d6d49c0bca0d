/* The override editor's model: a working copy of a schedule, a cursor over its machine and
 * device rows, and edits that move inputs between devices or toggle roles. Pure (no curses,
 * no tuner): the console asks the tuner for a prediction whenever `version` changes. */
#ifndef TUNEDECK_EDITOR_H
#define TUNEDECK_EDITOR_H

#include <stddef.h>

#include "core/model/schedule.h"

typedef struct {
    size_t machine;
    long device; /* flat device index, or -1 for the machine's own row (roles) */
} EditorRow;

typedef struct {
    Schedule *s; /* the edited schedule, owned */
    EditorRow *rows;
    size_t n_rows, cursor;
    long mark;        /* row whose device gives inputs to the cursor's device; -1 none */
    int step;         /* inputs moved per key press */
    unsigned version; /* bumped by every change to the schedule */
} Editor;

Editor *editor_new(const Schedule *from);
void editor_free(Editor *e);

void editor_cursor_move(Editor *e, long delta);
void editor_cursor_set(Editor *e, size_t row);
/* Marks the cursor's device as the source of moved inputs (again: unmarks). Returns -1
 * on a machine row. */
int editor_toggle_mark(Editor *e);
/* +step inputs on the cursor's device (sign > 0) or -step; with a mark, the same number
 * leaves (or returns to) the marked device, so the batch total is kept. Returns the number
 * moved (0 when nothing could move, e.g. the source is empty). */
int editor_adjust(Editor *e, int sign);
int editor_toggle_worker(Editor *e);
int editor_toggle_ps(Editor *e);
/* Cycles the step through 1, 8, 32, 128. */
void editor_cycle_step(Editor *e, int dir);
/* 0 when the schedule may run; -1 with the reason in err. */
int editor_check(const Editor *e, Error *err);
/* Worker inputs minus the batch: 0 when balanced. */
long editor_unplaced(const Editor *e);

#endif
