/* Devices are threads (OpenBLAS single-threaded inside each): a machine's compute time is
 * its slowest device plus the aggregation of their gradients, as in the seed's model. A
 * slowdown factor F stretches a device's measured time to F times by sleeping. */
#include "tools/worker/sgd_worker.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/model/protocol.h"
#include "tools/worker/synthdata.h"
#include "tools/worker/psauth.h"
#include "tools/worker/psnet.h"

typedef struct {
    const SgdPlan *plan;
    const double *params;
    double *x, *grad;
    int *labels;
    int inputs;
    double slowdown, time_s, loss;
    DenseNetWork *work;
} Device;

static void *device_main(void *arg)
{
    Device *d = arg;
    const DenseNet *net = &d->plan->net;
    double t0 = clock_now_s();
    memset(d->grad, 0, net->n_params * sizeof *d->grad);
    d->loss =
        densenet_gradient(net, d->params, d->x, d->labels, (size_t)d->inputs, d->grad, d->work);
    double busy = clock_now_s() - t0;
    if (d->slowdown > 1) {
        double extra = busy * (d->slowdown - 1);
        struct timespec ts = {(time_t)extra, (long)((extra - floor(extra)) * 1e9)};
        while (nanosleep(&ts, &ts) < 0)
            ;
    }
    d->time_s = clock_now_s() - t0;
    return NULL;
}

int sgd_worker_run(const SgdWorkerConfig *cfg, Error *err)
{
    const SgdPlan *plan = cfg->plan;
    const Cluster *c = cfg->schedule->cluster;
    const Machine *m = &c->machines[cfg->machine];
    const MachineType *t = &c->types[m->type];
    size_t np = plan->net.n_params, ns = plan->n_shards;
    uint32_t rank = (uint32_t)plan->machine_rank[cfg->machine];
    int rc = -1;
    SynthData data = {0};
    Device *dev = calloc(t->n_devices, sizeof *dev);
    const char **ids = calloc(t->n_devices, sizeof *ids);
    int *inputs = calloc(t->n_devices, sizeof *inputs);
    double *dev_s = calloc(t->n_devices, sizeof *dev_s);
    size_t *dev_index = calloc(t->n_devices, sizeof *dev_index);
    double *params = calloc(np, sizeof *params), *grad = calloc(np, sizeof *grad);
    int *conn = malloc(ns * sizeof *conn);
    pthread_t *threads = calloc(t->n_devices, sizeof *threads);
    size_t active = 0;
    if (!dev || !ids || !inputs || !dev_s || !dev_index || !params || !grad || !conn || !threads ||
        synthdata_init(&data, plan->data_seed, plan->input_dim, plan->classes, plan->n_examples) <
            0) {
        error_set(err, "%s: out of memory", m->name);
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        conn[k] = -1;
    for (size_t d = 0; d < t->n_devices; d++) {
        int n = cfg->schedule->inputs[m->first_device + d];
        if (n <= 0)
            continue;
        Device *v = &dev[active];
        v->plan = plan;
        v->params = params;
        v->inputs = n;
        v->slowdown = cfg->slowdown ? cfg->slowdown[d] : 1;
        v->x = malloc((size_t)n * plan->input_dim * sizeof *v->x);
        v->labels = malloc((size_t)n * sizeof *v->labels);
        v->grad = malloc(np * sizeof *v->grad);
        v->work = densenet_work_new(&plan->net, (size_t)n < 256 ? (size_t)n : 256);
        if (!v->x || !v->labels || !v->grad || !v->work) {
            active++;
            error_set(err, "%s/%s: out of memory for %d inputs", m->name, t->devices[d].id, n);
            goto out;
        }
        ids[active] = t->devices[d].id;
        inputs[active] = n;
        dev_index[active++] = d;
    }
    for (size_t k = 0; k < ns; k++) {
        if (!cfg->secret) {
            error_set(err, "%s: parameter server %zu: no job secret to prove to the shard",
                      m->name, k);
            goto out;
        }
        /* retries while the shard's door drops us unproven (a connection flood): a delay */
        conn[k] = psauth_dial(cfg->ps_host[k], cfg->ps_port[k], cfg->secret, rank, (uint32_t)k,
                              cfg->connect_timeout_s, err);
        if (conn[k] < 0) {
            error_prefix(err, "%s: parameter server %zu at %s:%d", m->name, k, cfg->ps_host[k],
                         cfg->ps_port[k]);
            goto out;
        }
    }
    uint64_t step = 0;
    for (size_t k = 0; k < ns; k++) {
        PsMsg first;
        size_t lo = plan->shard_lo[k], n = plan->shard_hi[k] - lo;
        if (psnet_recv(conn[k], &first, params + lo, n, err) < 0) {
            error_prefix(err, "%s: initial parameters from shard %zu", m->name, k);
            goto out;
        }
        step = first.iter;
    }
    uint64_t start_step = step;
    for (int stopped = 0; !stopped;) {
        /* Making the examples is data loading, not the device's work: untimed. */
        for (size_t a = 0; a < active; a++) {
            uint64_t first = cfg->examples_base + (step - start_step) * (uint64_t)plan->batch +
                             (uint64_t)plan->device_offset[m->first_device + dev_index[a]];
            synthdata_fill(&data, first, (size_t)dev[a].inputs, dev[a].x, dev[a].labels);
        }
        double t0 = clock_now_s();
        for (size_t a = 0; a < active; a++)
            if (pthread_create(&threads[a], NULL, device_main, &dev[a]) != 0) {
                device_main(&dev[a]);
                threads[a] = 0;
            }
        for (size_t a = 0; a < active; a++)
            if (threads[a])
                pthread_join(threads[a], NULL);
        memset(grad, 0, np * sizeof *grad);
        double loss = 0;
        int examples = 0;
        for (size_t a = 0; a < active; a++) {
            for (size_t i = 0; i < np; i++)
                grad[i] += dev[a].grad[i];
            loss += dev[a].loss;
            examples += dev[a].inputs;
            dev_s[a] = dev[a].time_s;
        }
        double compute_s = clock_now_s() - t0;
        step++;
        for (size_t k = 0; k < ns; k++) {
            size_t lo = plan->shard_lo[k];
            PsMsg push = {.type = PSMSG_PUSH,
                          .sender = rank,
                          .inputs = (uint32_t)examples,
                          .iter = step,
                          .offset = lo,
                          .count = plan->shard_hi[k] - lo,
                          .compute_s = compute_s,
                          .loss = k == 0 ? loss : 0};
            if (psnet_send(conn[k], &push, grad + lo, err) < 0) {
                error_prefix(err, "%s: step %llu: pushing to shard %zu", m->name,
                             (unsigned long long)step, k);
                goto out;
            }
        }
        PsMsg reply = {0};
        double max_compute = compute_s, mean_loss = 0;
        uint32_t batch = 0;
        for (size_t k = 0; k < ns; k++) {
            size_t lo = plan->shard_lo[k], n = plan->shard_hi[k] - lo;
            if (psnet_recv(conn[k], &reply, params + lo, n, err) < 0) {
                error_prefix(err, "%s: step %llu: pulling from shard %zu", m->name,
                             (unsigned long long)step, k);
                goto out;
            }
            if (reply.iter != step || reply.offset != lo || reply.count != n ||
                (reply.type != PSMSG_PARAMS && reply.type != PSMSG_STOP)) {
                error_set(err,
                          "%s: step %llu: shard %zu answered a %s for step %llu: expected "
                          "its parameters [%zu, %zu)",
                          m->name, (unsigned long long)step, k, psmsg_type_name(reply.type),
                          (unsigned long long)reply.iter, lo, lo + n);
                goto out;
            }
            if (reply.type == PSMSG_STOP)
                stopped = 1;
            max_compute = reply.compute_s > max_compute ? reply.compute_s : max_compute;
            if (k == 0) {
                mean_loss = reply.loss;
                batch = reply.inputs;
            }
        }
        double time_s = clock_now_s() - t0;
        SgdIteration it = {.step = step,
                           .time_s = time_s,
                           .compute_s = compute_s,
                           .comm_s = time_s > max_compute ? time_s - max_compute : 0,
                           .mean_loss = mean_loss,
                           .examples = batch,
                           .n_devices = active,
                           .device_ids = ids,
                           .device_inputs = inputs,
                           .device_s = dev_s};
        if (cfg->on_iteration)
            cfg->on_iteration(cfg->userdata, &it);
    }
    rc = 0;
out:
    if (conn)
        for (size_t k = 0; k < ns; k++)
            if (conn[k] >= 0)
                close(conn[k]);
    for (size_t a = 0; dev && a < active; a++) {
        free(dev[a].x);
        free(dev[a].labels);
        free(dev[a].grad);
        densenet_work_free(dev[a].work);
    }
    synthdata_clear(&data);
    free(dev);
    free(ids);
    free(inputs);
    free(dev_s);
    free(dev_index);
    free(params);
    free(grad);
    free(conn);
    free(threads);
    return rc;
}

char *sgd_iteration_format(const SgdIteration *it, const char *machine, int iter)
{
    DeviceMeasure devs[64];
    size_t n = it->n_devices < 64 ? it->n_devices : 64;
    for (size_t i = 0; i < n; i++) {
        snprintf(devs[i].id, sizeof devs[i].id, "%s", it->device_ids[i]);
        devs[i].inputs = it->device_inputs[i];
        devs[i].time_s = it->device_s[i];
    }
    MachineMeasure mm = {.compute_s = it->compute_s, .devices = devs, .n_devices = n};
    snprintf(mm.name, sizeof mm.name, "%s", machine);
    TrialEvent ev = {.kind = EVENT_ITERATION,
                     .iter = iter,
                     .time_s = it->time_s,
                     .comm_s = it->comm_s,
                     .machines = &mm,
                     .n_machines = 1};
    return protocol_format(&ev);
}
