/* A host's GPU table, updated line by line; a refused line's GPU kept, in error; a GPU the
 * last period did not list dropped when the next begins. */
#include "remote/gpu/gputable.h"

#include <string.h>

/* A line (refused) whose index and uuid both failed to read: nothing names its GPU. */
static int anonymous(const GpuSample *g)
{
    return g->index < 0 && !g->uuid[0];
}

/* The entry of a line that names its GPU: by UUID; by index when either uuid did not read
 * (a GPU in error that comes back, or goes). Entries naming none are never it. */
static size_t find_named(const GpuTable *t, const GpuSample *g)
{
    for (size_t i = 0; i < t->n; i++) {
        const GpuSample *e = &t->gpus[i];
        if (anonymous(e))
            continue;
        if (e->uuid[0] && g->uuid[0] ? strcmp(e->uuid, g->uuid) == 0 : e->index == g->index)
            return i;
    }
    return t->n;
}

/* The entry of a line that names no GPU ("Unable to determine the device handle for GPU …"):
 * one not yet listed this period with the same refusal text, else one at the same place in
 * the last period (nvidia-smi lists GPUs in the same order every period, and a text that
 * changes each period would otherwise add a GPU each period), else one with the same text
 * listed this period already (two lines alike are one entry, as they always were). */
static size_t find_anonymous(const GpuTable *t, const GpuSample *g)
{
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < t->n; i++) {
            const GpuSample *e = &t->gpus[i];
            if (!anonymous(e) || (pass < 2 && t->listed[i]))
                continue;
            if (pass == 1 ? t->place[i] == t->lines : strcmp(e->error, g->error) == 0)
                return i;
        }
    return t->n;
}

/* The period ended: what it did not list is gone from nvidia-smi's answer. */
static void begin_period(GpuTable *t)
{
    t->period_lines = t->lines;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (!t->listed[i])
            continue;
        t->gpus[k] = t->gpus[i];
        t->place[k] = t->place[i];
        t->listed[k] = 0;
        k++;
    }
    t->n = k;
    t->lines = 0;
}

int gputable_take_line(GpuTable *t, const char *line, Error *err)
{
    GpuSample g;
    int rc = nvsmi_parse_gpu_line(line, &g, err);
    size_t i;
    if (anonymous(&g)) {
        i = find_anonymous(t, &g);
        /* A line that would be a GPU more where the period already has as many lines as the
         * last complete one had: the next period's first (gputable.h). */
        if (i == t->n && t->period_lines && t->lines >= t->period_lines) {
            begin_period(t);
            i = find_anonymous(t, &g);
        }
    } else {
        i = find_named(t, &g);
        if (i < t->n && t->listed[i]) { /* listed twice: the next period's first line */
            begin_period(t);
            i = find_named(t, &g);
        }
    }
    if (i == t->n) {
        if (t->n == GPUTABLE_MAX) {
            t->lines++;
            return rc;
        }
        t->n++;
    }
    t->gpus[i] = g;
    t->place[i] = t->lines++;
    t->listed[i] = 1;
    return rc;
}

void gputable_new_process(GpuTable *t)
{
    /* The dead process's last period ends unfinished: counted, or its listed GPUs kept as
     * this period's, the new process's first lines would close it as complete (a period of
     * one line, every GPU after the first dropped) until a period of its own ended. The
     * entries stay, their last values shown, until the new process's first period ends. */
    for (size_t i = 0; i < t->n; i++)
        t->listed[i] = 0;
    t->lines = 0;
    t->period_lines = 0;
}

size_t gputable_readable(const GpuTable *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        k += !t->gpus[i].error[0];
    return k;
}
