/* The seed's simple schedules (§4): the batch spread evenly over every device, or over every
 * GPU; worker machines are also parameter servers, "which tends to yield good results" (for an
 * allreduce job there are none: every device is a rank with an equal share, DDP's default). */
#include <stdlib.h>
#include <string.h>

#include "core/opt/optimizer.h"

typedef struct {
    const Cluster *cluster;
    JobSpec job;
    int gpus_only;
} Uniform;

static void *create(const Cluster *c, const JobSpec *job, int gpus_only, Error *err)
{
    if (gpus_only) {
        int any = 0;
        for (size_t m = 0; m < c->n_machines; m++)
            any |= cluster_machine_has_gpu(c, m);
        if (!any) {
            error_set(err, "uniform-gpus: the cluster '%s' has no GPU", c->name);
            return NULL;
        }
    }
    Uniform *u = calloc(1, sizeof *u);
    if (!u) {
        error_no_memory(err, "uniform: cluster '%s'", c->name);
        return NULL;
    }
    u->cluster = c;
    job_copy(&u->job, job);
    u->gpus_only = gpus_only;
    return u;
}

static void *create_devices(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    (void)seed;
    return create(c, job, 0, err);
}

static void *create_gpus(const Cluster *c, const JobSpec *job, uint64_t seed, Error *err)
{
    (void)seed;
    return create(c, job, 1, err);
}

static int suggest(void *self, Suggestion *out, Error *err)
{
    Uniform *u = self;
    const Cluster *c = u->cluster;
    Schedule *s = schedule_new(c, &u->job);
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    if (!s || !w) {
        schedule_free(s);
        free(w);
        return error_no_memory(err, "uniform: suggestion");
    }
    for (size_t d = 0; d < c->n_devices; d++) {
        size_t m = 0;
        const DeviceSpec *dev = cluster_device(c, d, &m);
        w[d] = (!u->gpus_only || dev->kind == DEVICE_GPU) ? 1.0 : 0.0;
    }
    if (schedule_split_integer(w, c->n_devices, u->job.batch, s->inputs) < 0) {
        free(w);
        schedule_free(s);
        return error_set(err, "%s: no device to place inputs on",
                         u->gpus_only ? "uniform-gpus" : "uniform-devices");
    }
    free(w);
    for (size_t m = 0; m < c->n_machines; m++) {
        int load = schedule_machine_inputs(s, m) > 0;
        s->worker[m] = (unsigned char)load;
        s->ps[m] = (unsigned char)(load && u->job.sync == JOB_SYNC_PS);
    }
    out->schedule = s;
    return 0;
}

static void observe(void *self, const Observation *o)
{
    (void)self;
    (void)o; /* a fixed configuration learns nothing */
}

static void destroy(void *self)
{
    Uniform *u = self;
    if (!u)
        return;
    job_clear(&u->job);
    free(u);
}

const OptimizerKind OPTIMIZER_UNIFORM_DEVICES = {
    "uniform-devices", "the batch split evenly over every device (seed §4)",
    create_devices,    suggest,
    observe,           NULL,
    destroy,           NULL, /* one schedule: the tuner moves it off a machine left out */
};

const OptimizerKind OPTIMIZER_UNIFORM_GPUS = {
    "uniform-gpus", "the batch split evenly over every GPU (seed §4)",
    create_gpus,    suggest,
    observe,        NULL,
    destroy,        NULL, /* one schedule: the tuner moves it off a machine left out */
};
