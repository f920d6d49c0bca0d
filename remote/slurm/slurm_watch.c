/* Polling Slurm with back-off (remote/slurm/slurm_watch.h). */
#include "remote/slurm/slurm_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/secret.h"

/* Which rounds ask for the node table. At 1,024 nodes sinfo's node table costs slurmctld
 * about 3 ms a request against 0.2-0.4 ms for the queue (bench/slurm_scale.sh), so a round
 * is `squeue` first, then `sinfo` only when
 *   - there is no node table yet (the first round), or the last round failed (the
 *     controller is back after an outage: nodes may have gone down, or show `unknown`
 *     until their slurmd registers again);
 *   - the watch was poked (slurm_watch_poke: the operator drained or returned a node, and
 *     expects to see it at the next round);
 *   - the queue shows nodes changing state (slurm_queue_moves_nodes: a job started running,
 *     was requeued, failed on a node, or waits for a node that is down or drained);
 *   - the node table is NODES_EVERY minimum intervals old (10 s: every 5th round while the
 *     rounds are 2 s apart, every round once the back-off spaces them 10 s or more), so what
 *     the queue cannot show (a node going down with no job on it, another operator's drain, the
 *     nodes a finished job freed) shows within that. */
enum { NODES_EVERY = 5 };

struct SlurmWatch {
    SlurmCtl *ctl;
    char partition[64];
    double min_s, max_s, interval_s;
    int64_t due_ms;
    SlurmNodes nodes;
    SlurmQueue queue;
    char *nodes_seen; /* sinfo's lines, sorted: a change is any difference */
    int queue_read;   /* w->queue is a round's (the first round's is a change) */
    int want_nodes;   /* the next round asks for the node table, whatever its age */
    int64_t nodes_ms; /* when the round that read the node table began */
    long node_tables;
    /* the round under way: squeue, then sinfo when the rule above says so */
    SlurmCall *call;
    char *queue_text; /* this round's squeue answer */
    SlurmQueue next_queue;
    int asking_nodes; /* this round's sinfo is asked (or under way) */
    int result;       /* the last round's: 1 changed, 0 same, -1 failed */
    int fresh;        /* a round ended since slurm_watch_take */
    Error err;
    int64_t down_since_ms; /* the first failed round of the current outage; 0: answering */
    long rounds;
    int64_t last_end_ms;
    int64_t round_start_ms;
    /* squeue's format with a mark of this round's own after the name (slurm_queue.h: a
     * name's newlines cannot forge a row; new_mark) */
    char mark[17];
    char squeue_format[sizeof SLURM_SQUEUE_FORMAT + 18];
};

/* A new mark for the round about to ask squeue. The format is on squeue's command line,
 * which every user of a login node can read in ps while it runs: a mark kept for the whole
 * watch could be read there once and put into a job's name (`scontrol update JobName=`) to
 * forge rows from then on. A mark of one round is worth nothing after its answer. */
static int new_mark(SlurmWatch *w, Error *err)
{
    unsigned char raw[8];
    if (secret_random(raw, sizeof raw, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(w->mark + 2 * i, 3, "%02x", raw[i]);
    snprintf(w->squeue_format, sizeof w->squeue_format, "%s|%s", SLURM_SQUEUE_FORMAT, w->mark);
    return 0;
}

SlurmWatch *slurm_watch_new(SlurmCtl *c, const char *partition, double min_interval_s,
                            double max_interval_s)
{
    SlurmWatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->ctl = c;
    Error err;
    if (new_mark(w, &err) < 0) {
        free(w);
        return NULL;
    }
    snprintf(w->partition, sizeof w->partition, "%s", partition ? partition : "");
    /* At most two calls a round: a round every 2 s keeps the controller at one call a
     * second. */
    w->min_s = min_interval_s >= 2 ? min_interval_s : 2;
    w->max_s = max_interval_s >= w->min_s ? max_interval_s : w->min_s;
    w->interval_s = w->min_s;
    w->want_nodes = 1; /* the first round */
    return w;
}

void slurm_watch_free(SlurmWatch *w)
{
    if (!w)
        return;
    slurm_nodes_clear(&w->nodes);
    slurm_queue_clear(&w->queue);
    slurm_queue_clear(&w->next_queue);
    free(w->nodes_seen);
    slurm_call_free(w->call);
    free(w->queue_text);
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

/* The output's lines, sorted and joined: equal when the state is. */
static char *sorted_lines(const char *a)
{
    size_t la = strlen(a);
    char *text = malloc(la + 1);
    size_t n = 1;
    if (!text)
        abort();
    memcpy(text, a, la + 1);
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    char **lines = malloc(n * sizeof *lines);
    if (!lines)
        abort();
    size_t k = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines[k++] = l;
    qsort(lines, k, sizeof *lines, by_text);
    char *out = malloc(la + 2);
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

/* Keeps text's sorted lines as the last seen; 1 when they differ from the ones before.
 * sinfo lists a node's partitions in no fixed order, hence the sort. */
static int seen_changed(char **seen, const char *text)
{
    char *now = sorted_lines(text);
    int changed = !*seen || strcmp(now, *seen) != 0;
    free(*seen);
    *seen = now;
    return changed;
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
    const char *sq[] = {"squeue", "-h", "-o", w->squeue_format, NULL, NULL, NULL};
    memcpy(sinfo, si, sizeof si);
    memcpy(squeue, sq, sizeof sq);
    if (w->partition[0]) {
        sinfo[5] = squeue[4] = "-p";
        sinfo[6] = squeue[5] = w->partition;
    }
}

/* The round's squeue answer (w->queue_text) is in: parse it, and say whether the round asks
 * for the node table too (the rule at the top). 1 ask, 0 not, -1 it does not parse (err). */
static int queue_in(SlurmWatch *w, Error *err)
{
    if (slurm_queue_parse_marked(w->queue_text, w->mark, "squeue", &w->next_queue, err) < 0)
        return -1;
    /* one sort for this round's two comparisons and the next round's (as its `before`);
     * out of memory, each comparison sorts for itself */
    (void)slurm_queue_index(&w->next_queue);
    int64_t max_age_ms = (int64_t)(NODES_EVERY * w->min_s * 1000);
    w->asking_nodes = w->want_nodes || w->round_start_ms - w->nodes_ms >= max_age_ms ||
                      slurm_queue_moves_nodes(&w->queue, &w->next_queue);
    if (w->asking_nodes)
        w->want_nodes = 0; /* a poke from now on is for the next round */
    return w->asking_nodes;
}

/* The round is over: ok with the queue parsed in w->next_queue and nt the node table (NULL
 * when not asked), or failed (nt NULL or whatever sinfo printed). Compare, keep, back off. */
static int round_end(SlurmWatch *w, char *nt, int ok, int64_t now_ms, Error *err)
{
    SlurmNodes nodes = {0};
    char *qt = w->queue_text;
    w->queue_text = NULL;
    w->rounds++;
    w->last_end_ms = now_ms;
    if (ok && nt && slurm_nodes_parse(nt, "sinfo", &nodes, err) < 0)
        ok = 0;
    if (!ok) {
        free(nt);
        free(qt);
        slurm_nodes_clear(&nodes);
        slurm_queue_clear(&w->next_queue);
        w->want_nodes = 1; /* the first round that answers again reads the nodes */
        if (!w->down_since_ms) /* the round that failed asked then */
            w->down_since_ms = w->round_start_ms ? w->round_start_ms : now_ms;
        back_off(w, 0, now_ms);
        return -1;
    }
    /* The back-off follows the queue (and the controller coming back): it is read every
     * round and is what moves on a busy cluster. A node table that changed on its own
     * reading (often the lagging image of a queue change already seen: the node a job
     * left turning idle) is shown, but does not bring the wait back to the minimum. */
    int queue_changed =
        !w->queue_read || !slurm_queue_same(&w->queue, &w->next_queue) || w->down_since_ms != 0;
    int changed = queue_changed;
    w->queue_read = 1;
    free(qt);
    slurm_queue_clear(&w->queue);
    w->queue = w->next_queue;
    memset(&w->next_queue, 0, sizeof w->next_queue);
    if (nt) {
        changed |= seen_changed(&w->nodes_seen, nt);
        free(nt);
        slurm_nodes_clear(&w->nodes);
        w->nodes = nodes;
        w->nodes_ms = w->round_start_ms;
        w->node_tables++;
    }
    w->down_since_ms = 0;
    back_off(w, queue_changed, now_ms);
    return changed;
}

int slurm_watch_poll(SlurmWatch *w, int64_t now_ms, Error *err)
{
    if (now_ms < w->due_ms || w->call)
        return 0;
    const char *sinfo[8], *squeue[7];
    argvs(w, sinfo, squeue);
    w->round_start_ms = now_ms;
    w->asking_nodes = 0;
    char *nt = NULL;
    if (new_mark(w, err) < 0 || slurm_ctl_run(w->ctl, squeue, &w->queue_text, err) != 0)
        return round_end(w, NULL, 0, now_ms, err);
    int ask = queue_in(w, err);
    if (ask < 0)
        return round_end(w, NULL, 0, now_ms, err);
    int ok = !ask || slurm_ctl_run(w->ctl, sinfo, &nt, err) == 0;
    return round_end(w, nt, ok, now_ms, err);
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

static void end_async(SlurmWatch *w, char *nt, int ok, int64_t now_ms)
{
    w->result = round_end(w, nt, ok, now_ms, &w->err);
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
        w->asking_nodes = 0;
        if (new_mark(w, &w->err) < 0 || !(w->call = slurm_call_start(w->ctl, squeue, &w->err)))
            end_async(w, NULL, 0, now_ms);
        return;
    }
    slurm_call_step(w->call, fds, n, now_ms);
    if (!slurm_call_done(w->call))
        return;
    char *text = NULL;
    int rc = slurm_call_finish(w->call, &text, &w->err);
    w->call = NULL;
    if (w->asking_nodes) { /* sinfo's answer: the round is over */
        end_async(w, text, rc == 0, now_ms);
        return;
    }
    w->queue_text = text; /* squeue's: sinfo next, if the rule says so */
    int ask = rc == 0 ? queue_in(w, &w->err) : -1;
    if (ask <= 0)
        end_async(w, NULL, ask == 0, now_ms);
    else if (!(w->call = slurm_call_start(w->ctl, sinfo, &w->err)))
        end_async(w, NULL, 0, now_ms);
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

long slurm_watch_node_tables(const SlurmWatch *w)
{
    return w->node_tables;
}

void slurm_watch_poke(SlurmWatch *w, int64_t now_ms)
{
    int64_t soonest = w->rounds ? w->last_end_ms + (int64_t)(w->min_s * 1000) : now_ms;
    w->interval_s = w->min_s;
    w->due_ms = soonest > now_ms ? soonest : now_ms;
    w->want_nodes = 1;
}
