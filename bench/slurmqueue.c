/* bench/slurmqueue: what the Slurm watch spends comparing each round's squeue answer with the
 * one before (remote/slurm/slurm_watch.c: slurm_queue_moves_nodes, then slurm_queue_same),
 * at a busy cluster's queue of 5,000 jobs: each comparison sorting its own copies (before:
 * three sorts a round) against one index per queue sorted once and kept as the next round's
 * `before` (slurm_queue_index), both in this run on the same queues, whose answers must
 * agree or it fails. Prints the CPU seconds of each way and the ratio.
 * Usage: slurmqueue [--out FILE.json] [--quick]  (--quick: 500 jobs) */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/args/benchargs.h"
#include "core/base/clock.h"
#include "core/base/jsonfile.h"
#include "remote/slurm/slurm_queue.h"

enum { JOBS = 5000, QUICK_JOBS = 500, ROUNDS = 200 };

/* Round r's queue of n jobs, rows in a shuffled order (squeue's moves with priorities): every
 * tenth round one job starts running, else the queue stands still (what most rounds see). */
static void make_queue(SlurmQueue *q, int n, int r, unsigned *seed)
{
    q->v = calloc((size_t)n, sizeof *q->v);
    q->n = (size_t)n;
    q->sorted = NULL;
    if (!q->v)
        abort();
    for (int i = 0; i < n; i++) {
        SlurmQueueJob *j = &q->v[i];
        int running = i % 3 == 0 || (r % 10 == 0 && i == r % n);
        snprintf(j->id, sizeof j->id, "%d", 100000 + i);
        snprintf(j->user, sizeof j->user, "user%d", i % 40);
        snprintf(j->state, sizeof j->state, "%s", running ? "RUNNING" : "PENDING");
        j->nodes = 1 + i % 4;
        snprintf(j->gres, sizeof j->gres, "gres:gpu:%d", 1 + i % 8);
        snprintf(j->nodelist, sizeof j->nodelist, running ? "n[%d-%d]" : "", i % 500,
                 i % 500 + j->nodes - 1);
        j->nodelist_hash = running ? (unsigned long)i * 2654435761u : 0;
        snprintf(j->reason, sizeof j->reason, "%s", running ? "None" : "Priority");
        snprintf(j->name, sizeof j->name, "train-%d", i);
    }
    for (int i = n - 1; i > 0; i--) {
        *seed = *seed * 1103515245u + 12345u;
        int k = (int)(*seed >> 8) % (i + 1);
        SlurmQueueJob t = q->v[i];
        q->v[i] = q->v[k];
        q->v[k] = t;
    }
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int quick = 0;
    if (benchargs_out_quick("slurmqueue", argc, argv, &out, &quick) < 0)
        return 2;
    int n = quick ? QUICK_JOBS : JOBS;
    SlurmQueue *qs = calloc(ROUNDS, sizeof *qs);
    int *old_ans = calloc(ROUNDS, sizeof *old_ans), *new_ans = calloc(ROUNDS, sizeof *new_ans);
    if (!qs || !old_ans || !new_ans)
        abort();
    unsigned seed = 7;
    for (int r = 0; r < ROUNDS; r++)
        make_queue(&qs[r], n, r, &seed);
    /* before: each comparison sorts its own copies */
    double t0 = clock_cpu_s();
    for (int r = 1; r < ROUNDS; r++)
        old_ans[r] =
            slurm_queue_moves_nodes(&qs[r - 1], &qs[r]) * 2 + slurm_queue_same(&qs[r - 1], &qs[r]);
    double old_s = clock_cpu_s() - t0;
    /* now: each queue's index sorted once, when its answer is parsed */
    t0 = clock_cpu_s();
    if (slurm_queue_index(&qs[0]) < 0)
        abort();
    for (int r = 1; r < ROUNDS; r++) {
        if (slurm_queue_index(&qs[r]) < 0)
            abort();
        new_ans[r] =
            slurm_queue_moves_nodes(&qs[r - 1], &qs[r]) * 2 + slurm_queue_same(&qs[r - 1], &qs[r]);
    }
    double new_s = clock_cpu_s() - t0;
    int moved = 0;
    for (int r = 1; r < ROUNDS; r++) {
        if (old_ans[r] != new_ans[r]) {
            fprintf(stderr, "slurmqueue: round %d: the two ways disagree (%d, %d)\n", r, old_ans[r],
                    new_ans[r]);
            return 1;
        }
        moved += old_ans[r] >= 2;
    }
    double ratio = new_s > 0 ? old_s / new_s : 0;
    printf("%d rounds of a %d-job queue compared with the round before (%d moved nodes), CPU\n"
           "  sorted per comparison (before): %.4f s\n"
           "  one index per queue:            %.4f s\n"
           "  ratio: %.2fx\n",
           ROUNDS - 1, n, moved, old_s, new_s, ratio);
    for (int r = 0; r < ROUNDS; r++)
        slurm_queue_clear(&qs[r]);
    free(qs), free(old_ans), free(new_ans);
    if (!out)
        return 0;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "bench", "slurmqueue");
    cJSON_AddNumberToObject(root, "jobs", n);
    cJSON_AddNumberToObject(root, "rounds", ROUNDS - 1);
    cJSON_AddNumberToObject(root, "sorted_per_comparison_cpu_s", old_s);
    cJSON_AddNumberToObject(root, "one_index_cpu_s", new_s);
    cJSON_AddNumberToObject(root, "ratio", ratio);
    Error err;
    int rc = jsonfile_write(out, root, &err);
    cJSON_Delete(root);
    if (rc < 0) {
        fprintf(stderr, "slurmqueue: %s\n", err.msg);
        return 1;
    }
    return 0;
}
