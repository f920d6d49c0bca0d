/* Parameter shards are contiguous and as equal as possible, in machine order, so every
 * process derives the same split from the same schedule with no coordination. */
#include "tools/worker/sgdplan.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"

int sgdplan_build(const Schedule *s, SgdPlan *p, Error *err)
{
    memset(p, 0, sizeof *p);
    const Cluster *c = s->cluster;
    int input_dim = 64, classes = 10, data_seed = 1, examples = 65536;
    double lr = 0.1;
    const cJSON *x = s->job.extra;
    if (x && (jfield_int(x, "job", "input_dim", 0, 1, 100000, &input_dim, err) < 0 ||
              jfield_int(x, "job", "classes", 0, 2, 100000, &classes, err) < 0 ||
              jfield_int(x, "job", "data_seed", 0, 0, 2000000000, &data_seed, err) < 0 ||
              jfield_int(x, "job", "examples", 0, 1, 2000000000, &examples, err) < 0 ||
              jfield_number(x, "job", "learning_rate", 0, 1e-9, 100, &lr, err) < 0))
        return -1;
    p->input_dim = (size_t)input_dim;
    p->classes = (size_t)classes;
    p->data_seed = (uint64_t)data_seed;
    p->n_examples = (uint64_t)examples;
    p->learning_rate = lr;
    p->batch = s->job.batch;
    if (densenet_for_model_bytes(&p->net, p->input_dim, p->classes, s->job.model_mb * 1e6, err) < 0)
        return error_prefix(err, "job");
    size_t nm = c->n_machines;
    p->worker_machine = calloc(nm, sizeof *p->worker_machine);
    p->machine_rank = calloc(nm, sizeof *p->machine_rank);
    p->shard_machine = calloc(nm, sizeof *p->shard_machine);
    p->shard_lo = calloc(nm, sizeof *p->shard_lo);
    p->shard_hi = calloc(nm, sizeof *p->shard_hi);
    p->machine_shard = calloc(nm, sizeof *p->machine_shard);
    p->device_offset = calloc(c->n_devices ? c->n_devices : 1, sizeof *p->device_offset);
    if (!p->worker_machine || !p->machine_rank || !p->shard_machine || !p->shard_lo ||
        !p->shard_hi || !p->machine_shard || !p->device_offset) {
        sgdplan_clear(p);
        return error_set(err, "out of memory planning %zu machines", nm);
    }
    int offset = 0;
    for (size_t m = 0; m < nm; m++) {
        p->machine_rank[m] = -1;
        p->machine_shard[m] = -1;
        if (s->worker[m]) {
            p->machine_rank[m] = (long)p->n_workers;
            p->worker_machine[p->n_workers++] = m;
            const Machine *mc = &c->machines[m];
            size_t nd = c->types[mc->type].n_devices;
            for (size_t d = 0; d < nd; d++) {
                p->device_offset[mc->first_device + d] = offset;
                offset += s->inputs[mc->first_device + d];
            }
        }
        if (s->ps[m]) {
            p->machine_shard[m] = (long)p->n_shards;
            p->shard_machine[p->n_shards++] = m;
        }
    }
    if (p->n_workers == 0 || p->n_shards == 0) {
        sgdplan_clear(p);
        return error_set(err, "schedule: expected at least one worker and one parameter "
                              "server");
    }
    if (p->n_shards > p->net.n_params) {
        size_t n = p->net.n_params;
        sgdplan_clear(p);
        return error_set(err,
                         "schedule: %zu parameter servers for a network of %zu "
                         "parameters: expected at most one server per parameter",
                         p->n_shards, n);
    }
    size_t per = p->net.n_params / p->n_shards, extra = p->net.n_params % p->n_shards, lo = 0;
    for (size_t k = 0; k < p->n_shards; k++) {
        p->shard_lo[k] = lo;
        lo += per + (k < extra);
        p->shard_hi[k] = lo;
    }
    return 0;
}

void sgdplan_clear(SgdPlan *p)
{
    free(p->worker_machine);
    free(p->machine_rank);
    free(p->shard_machine);
    free(p->shard_lo);
    free(p->shard_hi);
    free(p->machine_shard);
    free(p->device_offset);
    memset(p, 0, sizeof *p);
}
