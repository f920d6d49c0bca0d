/* The seed's doubling heuristic (§4.2): every job gets one GPU, then the job whose doubling
 * w → 2w saves the most remaining time per added GPU, (T(w) − T(2w)) / w, is doubled, while
 * capacity lasts. Only powers of two are reached, so a job can jump 8 → 16 where a +1 step
 * (8 → 9, binary blocks) would look like a loss and stop a greedy search.
 * Two additions of ours: T includes the resize stall for any size other than the current
 * one (so a job is not bounced for a gain smaller than its restart), and when GPUs are
 * scarcer than jobs the single GPUs go to the shortest remaining jobs first. */
#include <math.h>
#include <stdlib.h>

#include "core/policy.h"

typedef struct {
    double gain;
    size_t job;
} Cand;

/* Max-heap on gain; ties to the lower job index, so decisions are deterministic. */
static int better(const Cand *a, const Cand *b)
{
    return a->gain > b->gain || (a->gain == b->gain && a->job < b->job);
}

static void heap_push(Cand *h, size_t *n, Cand c)
{
    size_t i = (*n)++;
    h[i] = c;
    while (i > 0 && better(&h[i], &h[(i - 1) / 2])) {
        Cand t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static Cand heap_pop(Cand *h, size_t *n)
{
    Cand top = h[0];
    h[0] = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < *n && better(&h[l], &h[b]))
            b = l;
        if (r < *n && better(&h[r], &h[b]))
            b = r;
        if (b == i)
            break;
        Cand t = h[i];
        h[i] = h[b];
        h[b] = t;
        i = b;
    }
    return top;
}

static double total_s(const PolicyInput *in, size_t i, int w)
{
    double t = policy_remaining_s(in, i, w);
    if (w != in->jobs[i].cur_gpus)
        t += in->resize_cost_s;
    return t;
}

typedef struct {
    double t1;
    size_t job;
} Order;

static int order_cmp(const void *pa, const void *pb)
{
    const Order *a = pa, *b = pb;
    if (a->t1 != b->t1)
        return a->t1 < b->t1 ? -1 : 1;
    return a->job < b->job ? -1 : a->job > b->job;
}

static int doubling_allocate(const PolicyInput *in, int *gpus)
{
    size_t n = in->n;
    int cap = in->capacity;
    Order *ord = malloc(n * sizeof *ord);
    Cand *heap = malloc(n * sizeof *heap);
    if (!ord || !heap) {
        free(ord), free(heap);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        gpus[i] = 0;
        ord[i] = (Order){total_s(in, i, 1), i};
    }
    qsort(ord, n, sizeof *ord, order_cmp);
    size_t hn = 0;
    for (size_t k = 0; k < n && cap > 0; k++) {
        size_t i = ord[k].job;
        if (in->jobs[i].max_gpus < 1 || !isfinite(ord[k].t1))
            continue;
        gpus[i] = 1;
        cap--;
    }
    for (size_t i = 0; i < n; i++)
        if (gpus[i] == 1 && in->jobs[i].max_gpus >= 2)
            heap_push(heap, &hn, (Cand){total_s(in, i, 1) - total_s(in, i, 2), i});
    while (hn > 0 && cap > 0) {
        Cand c = heap_pop(heap, &hn);
        if (!(c.gain > 0))
            break;
        int w = gpus[c.job];
        if (w > cap)
            continue; /* capacity only shrinks: this doubling never fits again */
        gpus[c.job] = 2 * w;
        cap -= w;
        if (4 * w <= in->jobs[c.job].max_gpus)
            heap_push(heap, &hn,
                      (Cand){(total_s(in, c.job, 2 * w) - total_s(in, c.job, 4 * w)) / (2 * w),
                             c.job});
    }
    free(ord), free(heap);
    return 0;
}

const Policy POLICY_DOUBLING = {
    .name = "doubling",
    .summary = "seed heuristic, model known at arrival (precompute)",
    .knowledge = POLICY_KNOWS_PRECOMPUTE,
    .adaptive_batch = 1,
    .allocate = doubling_allocate,
};

const Policy POLICY_DOUBLING_EXPLORE = {
    .name = "doubling-explore",
    .summary = "seed heuristic, model learnt by running at 1, 2, 4, 8 GPUs (exploratory)",
    .knowledge = POLICY_KNOWS_EXPLORE,
    .adaptive_batch = 1,
    .allocate = doubling_allocate,
};
