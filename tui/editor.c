/* Override-editor edits on a working copy of a schedule; validity comes from the core's
 * schedule_validate so the editor never accepts what a trial would refuse. */
#include "tui/editor.h"

#include <stdlib.h>

Editor *editor_new(const Schedule *from)
{
    Editor *e = calloc(1, sizeof *e);
    e->s = schedule_copy(from);
    const Cluster *c = from->cluster;
    e->rows = calloc(c->n_machines + c->n_devices, sizeof *e->rows);
    for (size_t m = 0; m < c->n_machines; m++) {
        e->rows[e->n_rows++] = (EditorRow){m, -1};
        const MachineType *t = cluster_machine_type(c, m);
        for (size_t d = 0; d < t->n_devices; d++)
            e->rows[e->n_rows++] = (EditorRow){m, (long)(c->machines[m].first_device + d)};
    }
    e->mark = -1;
    e->step = 8;
    e->cursor = e->n_rows > 1 ? 1 : 0; /* the first device: what one edits first */
    return e;
}

void editor_free(Editor *e)
{
    if (!e)
        return;
    schedule_free(e->s);
    free(e->rows);
    free(e);
}

void editor_cursor_move(Editor *e, long delta)
{
    long c = (long)e->cursor + delta;
    if (c < 0)
        c = 0;
    if (c >= (long)e->n_rows)
        c = (long)e->n_rows - 1;
    e->cursor = c < 0 ? 0 : (size_t)c;
}

void editor_cursor_set(Editor *e, size_t row)
{
    if (row < e->n_rows)
        e->cursor = row;
}

int editor_toggle_mark(Editor *e)
{
    if (e->n_rows == 0 || e->rows[e->cursor].device < 0)
        return -1;
    e->mark = e->mark == (long)e->cursor ? -1 : (long)e->cursor;
    return 0;
}

int editor_adjust(Editor *e, int sign)
{
    if (e->n_rows == 0)
        return 0;
    long dst = e->rows[e->cursor].device;
    if (dst < 0)
        return 0;
    long src = e->mark >= 0 && e->mark != (long)e->cursor ? e->rows[e->mark].device : -1;
    int n = e->step;
    if (sign < 0) {
        /* Taking inputs away (back to the source when there is one). */
        if (n > e->s->inputs[dst])
            n = e->s->inputs[dst];
        e->s->inputs[dst] -= n;
        if (src >= 0)
            e->s->inputs[src] += n;
    } else {
        if (src >= 0 && n > e->s->inputs[src])
            n = e->s->inputs[src];
        e->s->inputs[dst] += n;
        if (src >= 0)
            e->s->inputs[src] -= n;
    }
    if (n > 0)
        e->version++;
    return n;
}

int editor_toggle_worker(Editor *e)
{
    if (e->n_rows == 0)
        return -1;
    size_t m = e->rows[e->cursor].machine;
    e->s->worker[m] = !e->s->worker[m];
    e->version++;
    return e->s->worker[m];
}

int editor_toggle_ps(Editor *e)
{
    if (e->n_rows == 0)
        return -1;
    size_t m = e->rows[e->cursor].machine;
    e->s->ps[m] = !e->s->ps[m];
    e->version++;
    return e->s->ps[m];
}

void editor_cycle_step(Editor *e, int dir)
{
    static const int STEPS[] = {1, 8, 32, 128};
    int i = 0;
    while (i < 4 && STEPS[i] != e->step)
        i++;
    i = (i + (dir < 0 ? 3 : 1)) % 4;
    e->step = STEPS[i];
}

int editor_check(const Editor *e, Error *err)
{
    return schedule_validate(e->s, err);
}

long editor_unplaced(const Editor *e)
{
    long sum = 0;
    for (size_t m = 0; m < e->s->cluster->n_machines; m++)
        if (e->s->worker[m])
            sum += schedule_machine_inputs(e->s, m);
    return sum - e->s->job.batch;
}
