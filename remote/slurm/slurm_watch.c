/* Polling Slurm with back-off (remote/slurm/slurm_watch.h). */
#include "remote/slurm/slurm_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct SlurmWatch {
    SlurmCtl *ctl;
    char partition[64];
    double min_s, max_s, interval_s;
    int64_t due_ms;
    SlurmNodes nodes;
    SlurmQueue queue;
    char *last_text; /* both outputs' lines, sorted: a change is any difference */
    /* the round under way on the caller's loop: sinfo, then squeue */
    SlurmCall *call;
    char *nodes_text;
    int result; /* the last round's: 1 changed, 0 same, -1 failed */
    int fresh;  /* a round ended since slurm_watch_take */
    Error err;
    int64_t down_since_ms; /* the first failed round of the current outage; 0: answering */
    long rounds;
    int64_t last_end_ms;
    int64_t round_start_ms;
};

SlurmWatch *slurm_watch_new(SlurmCtl *c, const char *partition, double min_interval_s,
                            double max_interval_s)
{
    SlurmWatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->ctl = c;
    snprintf(w->partition, sizeof w->partition, "%s", partition ? partition : "");
    /* Two calls a round: a round every 2 s keeps the controller at one call a second. */
    w->min_s = min_interval_s >= 2 ? min_interval_s : 2;
    w->max_s = max_interval_s >= w->min_s ? max_interval_s : w->min_s;
    w->interval_s = w->min_s;
    return w;
}

void slurm_watch_free(SlurmWatch *w)
{
    if (!w)
        return;
    slurm_nodes_clear(&w->nodes);
    slurm_queue_clear(&w->queue);
    free(w->last_text);
    slurm_call_free(w->call);
    free(w->nodes_text);
    free(w);
}

int64_t slurm_watch_due_ms(const SlurmWatch *w)
{
    return w->due_ms;
}

const SlurmNodes *slurm_watch_nodes(const SlurmWatch *w)
{
    return &w->nodes;
}

const SlurmQueue *slurm_watch_queue(const SlurmWatch *w)
{
    return &w->queue;
}

double slurm_watch_interval_s(const SlurmWatch *w)
{
    return w->interval_s;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Both outputs' lines, sorted and joined: equal when the state is. */
static char *sorted_lines(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *text = malloc(la + lb + 2);
    size_t n = 1;
    if (!text)
        abort();
    memcpy(text, a, la);
    text[la] = '\n';
    memcpy(text + la + 1, b, lb + 1);
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    char **lines = malloc(n * sizeof *lines);
    if (!lines)
        abort();
    size_t k = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines[k++] = l;
    qsort(lines, k, sizeof *lines, by_text);
    char *out = malloc(la + lb + 2);
    if (!out)
        abort();
    size_t used = 0;
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(lines[i]);
        memcpy(out + used, lines[i], l);
        used += l;
        out[used++] = '\n';
    }
    out[used] = 0;
    free(lines);
    free(text);
    return out;
}

static void back_off(SlurmWatch *w, int changed, int64_t now_ms)
{
    w->interval_s = changed ? w->min_s : w->interval_s * 2;
    if (w->interval_s > w->max_s)
        w->interval_s = w->max_s;
    w->due_ms = now_ms + (int64_t)(w->interval_s * 1000);
}

static void argvs(const SlurmWatch *w, const char **sinfo, const char **squeue)
{
    const char *si[] = {"sinfo", "-N", "-h", "-o", SLURM_SINFO_FORMAT, NULL, NULL, NULL};
    const char *sq[] = {"squeue", "-h", "-o", SLURM_SQUEUE_FORMAT, NULL, NULL, NULL};
    memcpy(sinfo, si, sizeof si);
    memcpy(squeue, sq, sizeof sq);
    if (w->partition[0]) {
        sinfo[5] = squeue[4] = "-p";
        sinfo[6] = squeue[5] = w->partition;
    }
}

/* Both outputs in hand (or NULL after a failure): parse, compare, back off. */
static int round_end(SlurmWatch *w, char *nt, char *qt, int ok, int64_t now_ms, Error *err)
{
    SlurmNodes nodes = {0};
    SlurmQueue queue = {0};
    w->rounds++;
    w->last_end_ms = now_ms;
    if (!ok || slurm_nodes_parse(nt, "sinfo", &nodes, err) < 0 ||
        slurm_queue_parse(qt, "squeue", &queue, err) < 0) {
        free(nt);
        free(qt);
        slurm_nodes_clear(&nodes);
        if (!w->down_since_ms) /* the round that failed asked then */
            w->down_since_ms = w->round_start_ms ? w->round_start_ms : now_ms;
        back_off(w, 0, now_ms);
        return -1;
    }
    /* sinfo lists a node's partitions in no fixed order: lines are compared sorted. */
    char *both = sorted_lines(nt, qt);
    free(nt);
    free(qt);
    int changed = !w->last_text || strcmp(both, w->last_text) != 0 || w->down_since_ms;
    w->down_since_ms = 0;
    free(w->last_text);
    w->last_text = both;
    slurm_nodes_clear(&w->nodes);
    slurm_queue_clear(&w->queue);
    w->nodes = nodes;
    w->queue = queue;
    back_off(w, changed, now_ms);
    return changed;
}

int slurm_watch_poll(SlurmWatch *w, int64_t now_ms, Error *err)
{
    if (now_ms < w->due_ms || w->call)
        return 0;
    const char *sinfo[8], *squeue[7];
    argvs(w, sinfo, squeue);
    w->round_start_ms = now_ms;
    char *nt = NULL, *qt = NULL;
    int ok =
        slurm_ctl_run(w->ctl, sinfo, &nt, err) == 0 && slurm_ctl_run(w->ctl, squeue, &qt, err) == 0;
    return round_end(w, nt, qt, ok, now_ms, err);
}

/* ---- the same round on the caller's loop ---- */

size_t slurm_watch_pollfds(SlurmWatch *w, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (w->call)
        return slurm_call_pollfds(w->call, fds, cap, deadline_ms);
    if (*deadline_ms < 0 || w->due_ms < *deadline_ms)
        *deadline_ms = w->due_ms;
    return 0;
}

static void end_async(SlurmWatch *w, char *nt, char *qt, int ok, int64_t now_ms)
{
    w->result = round_end(w, nt, qt, ok, now_ms, &w->err);
    w->fresh = 1;
}

void slurm_watch_step(SlurmWatch *w, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    const char *sinfo[8], *squeue[7];
    argvs(w, sinfo, squeue);
    if (!w->call) {
        if (now_ms < w->due_ms)
            return;
        w->round_start_ms = now_ms;
        if (!(w->call = slurm_call_start(w->ctl, sinfo, &w->err)))
            end_async(w, NULL, NULL, 0, now_ms);
        return;
    }
    slurm_call_step(w->call, fds, n, now_ms);
    if (!slurm_call_done(w->call))
        return;
    char *text = NULL;
    int rc = slurm_call_finish(w->call, &text, &w->err);
    w->call = NULL;
    if (rc != 0) {
        free(w->nodes_text);
        w->nodes_text = NULL;
        end_async(w, NULL, NULL, 0, now_ms);
    } else if (!w->nodes_text) {
        w->nodes_text = text; /* sinfo answered: squeue next */
        if (!(w->call = slurm_call_start(w->ctl, squeue, &w->err))) {
            free(w->nodes_text);
            w->nodes_text = NULL;
            end_async(w, NULL, NULL, 0, now_ms);
        }
    } else {
        char *nt = w->nodes_text;
        w->nodes_text = NULL;
        end_async(w, nt, text, 1, now_ms);
    }
}

int slurm_watch_take(SlurmWatch *w, Error *err)
{
    if (!w->fresh)
        return -2;
    w->fresh = 0;
    if (w->result < 0 && err)
        *err = w->err;
    return w->result;
}

int slurm_watch_busy(const SlurmWatch *w)
{
    return w->call != NULL;
}

int64_t slurm_watch_down_since_ms(const SlurmWatch *w)
{
    return w->down_since_ms;
}

long slurm_watch_rounds(const SlurmWatch *w)
{
    return w->rounds;
}

void slurm_watch_poke(SlurmWatch *w, int64_t now_ms)
{
    int64_t soonest = w->rounds ? w->last_end_ms + (int64_t)(w->min_s * 1000) : now_ms;
    w->interval_s = w->min_s;
    w->due_ms = soonest > now_ms ? soonest : now_ms;
}
