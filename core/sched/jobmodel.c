/* Batch configurations and progress rates of a job (see jobmodel.h). */
#include "core/sched/jobmodel.h"

#include <math.h>

int jobmodel_max_gpus(const AppModel *a, int fixed_batch)
{
    if (a->fixed_local)
        return a->max_batch / a->fixed_local;
    int b = fixed_batch > 0 ? fixed_batch : a->max_batch;
    int w = b / a->min_local;
    return w < 1 ? 1 : w;
}

int jobmodel_fixed(const AppModel *a, int batch, int w, JobConfig *out)
{
    if (w < 1)
        return -1;
    if (a->fixed_local) {
        *out = (JobConfig){a->fixed_local * w, a->fixed_local, 0};
        return 0;
    }
    if (batch <= 0)
        batch = a->init_batch;
    int local = (batch + w - 1) / w;
    if (local < a->min_local && w > 1)
        return -1;
    int accum = (local + a->max_local - 1) / a->max_local - 1;
    if (w == 1 && batch > a->init_batch && accum < 1)
        accum = 1; /* the artifact's rule: one GPU over the initial batch accumulates */
    int atomic = (local + accum) / (accum + 1);
    if (atomic < 1)
        atomic = 1;
    *out = (JobConfig){batch, atomic, accum};
    return 0;
}

static void step_of(const StepSource *src, const JobConfig *c, const int *per_node, int n_nodes,
                    double *step, double *sync)
{
    if (src->model) {
        int w = 0, nodes = 0;
        for (int i = 0; i < n_nodes; i++)
            if (per_node[i] > 0)
                w += per_node[i], nodes++;
        *step = tputmodel_step_s(src->model, w, nodes, c->atomic);
        /* A fitted model has no sync split; the allreduce part is what w = 1 lacks. */
        double one = tputmodel_step_s(src->model, 1, 1, c->atomic);
        *sync = *step > one ? *step - one : 0;
        return;
    }
    app_step_time(src->app, per_node, (size_t)n_nodes, c->atomic, step, sync);
}

double jobmodel_rate(const StepSource *src, const JobConfig *c, const int *per_node, int n_nodes,
                     int epoch, double *micro_step_s)
{
    double step, sync;
    step_of(src, c, per_node, n_nodes, &step, &sync);
    double total = step + (step - sync) * c->accum;
    if (micro_step_s)
        *micro_step_s = step;
    if (!(total > 0))
        return 0;
    return app_gain(src->app, c->batch, epoch) / total;
}

double jobmodel_rate_packed(const StepSource *src, const JobConfig *c, int w, int epoch)
{
    int g = src->gpus_per_node > 0 ? src->gpus_per_node : w;
    int per_node[64], n = 0;
    if ((w + g - 1) / g > 64)
        g = (w + 63) / 64;
    for (int left = w; left > 0 && n < 64; left -= g)
        per_node[n++] = left < g ? left : g;
    return jobmodel_rate(src, c, per_node, n, epoch, NULL);
}

int jobmodel_best(const StepSource *src, int w, int epoch, JobConfig *out, double *rate)
{
    const AppModel *a = src->app;
    if (a->fixed_local) {
        jobmodel_fixed(a, 0, w, out);
        *rate = jobmodel_rate_packed(src, out, w, epoch);
        return 0;
    }
    double lo = fmax(a->init_batch, (double)a->min_local * w);
    /* Gradient accumulation (up to JOBMODEL_MAX_ACCUM micro-steps) lets few GPUs reach a
     * larger batch, as Pollux does. */
    double hi = fmin(a->max_batch, (double)a->max_local * w * JOBMODEL_MAX_ACCUM);
    if (lo > a->max_batch)
        return -1;
    if (hi < lo)
        hi = lo;      /* the initial batch exceeds what w GPUs hold: accumulate */
    const int N = 10; /* batch candidates, geometric */
    double best = -1;
    for (int k = 0; k <= N; k++) {
        double b = lo * pow(hi / lo, (double)k / N);
        JobConfig c;
        if (jobmodel_fixed(a, (int)floor(b), w, &c) < 0)
            continue;
        double r = jobmodel_rate_packed(src, &c, w, epoch);
        if (r > best) {
            best = r;
            *out = c;
        }
    }
    if (best < 0)
        return -1;
    *rate = best;
    return 0;
}
