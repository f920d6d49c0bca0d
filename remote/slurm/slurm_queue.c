/* Parsing squeue's fixed columns (remote/slurm/slurm_queue.h). */
#include "remote/slurm/slurm_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QUEUE_FIELDS = 8 }; /* SLURM_SQUEUE_FORMAT's */

static void copy_field(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

int slurm_queue_parse(const char *text, const char *source, SlurmQueue *out, Error *err)
{
    out->v = NULL;
    out->n = 0;
    size_t cap = 0, lineno = 0;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        lineno++;
        char *line = strndup(p, len);
        if (!line)
            abort();
        p += len + (p[len] == '\n');
        if (!line[0]) {
            free(line);
            continue;
        }
        char *f[QUEUE_FIELDS];
        char *q = line;
        int i = 0;
        for (; i < QUEUE_FIELDS; i++) {
            f[i] = q;
            if (i == QUEUE_FIELDS - 1)
                break;
            char *bar = strchr(q, '|');
            if (!bar)
                break;
            *bar = 0;
            q = bar + 1;
        }
        if (i < QUEUE_FIELDS - 1) {
            free(line);
            slurm_queue_clear(out);
            return error_set(err, "%s: line %zu: expected %d fields separated by '|' (%s)",
                             source, lineno, QUEUE_FIELDS, SLURM_SQUEUE_FORMAT);
        }
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            SlurmQueueJob *grown = realloc(out->v, cap * sizeof *grown);
            if (!grown)
                abort();
            out->v = grown;
        }
        SlurmQueueJob *j = &out->v[out->n++];
        memset(j, 0, sizeof *j);
        copy_field(j->id, sizeof j->id, f[0]);
        copy_field(j->user, sizeof j->user, f[1]);
        copy_field(j->state, sizeof j->state, f[2]);
        j->nodes = atoi(f[3]);
        copy_field(j->gres, sizeof j->gres, f[4]);
        copy_field(j->nodelist, sizeof j->nodelist, f[5]);
        copy_field(j->reason, sizeof j->reason, f[6]);
        copy_field(j->name, sizeof j->name, f[7]);
        free(line);
    }
    return 0;
}

void slurm_queue_clear(SlurmQueue *q)
{
    free(q->v);
    q->v = NULL;
    q->n = 0;
}
