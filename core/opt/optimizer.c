/* The optimizer registry: every optimizer is a table entry chosen by name. */
#include "core/opt/optimizer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/registry.h"

extern const OptimizerKind OPTIMIZER_UNIFORM_DEVICES, OPTIMIZER_UNIFORM_GPUS, OPTIMIZER_RANDOM;
extern const OptimizerKind OPTIMIZER_BESPOKE, OPTIMIZER_GP, OPTIMIZER_BESPOKE_ALLREDUCE;

_Static_assert(offsetof(OptimizerKind, name) == 0, "registry entries begin with their name");

static const void *const OPTIMIZERS[] = {
    &OPTIMIZER_UNIFORM_DEVICES,
    &OPTIMIZER_UNIFORM_GPUS,
    &OPTIMIZER_RANDOM,
    &OPTIMIZER_BESPOKE,
    &OPTIMIZER_GP,
    NULL,
};

static const Registry REGISTRY = {OPTIMIZERS, NULL};

const OptimizerKind *optimizer_find(const char *name)
{
    return registry_find(&REGISTRY, name);
}

const char *optimizer_names(void)
{
    static char names[256];
    return names[0] ? names : registry_names(&REGISTRY, names, sizeof names);
}

Optimizer *optimizer_new(const char *name, const Cluster *c, const JobSpec *job, uint64_t seed,
                         Error *err)
{
    const OptimizerKind *k = optimizer_find(name);
    if (!k) {
        error_set(err, "unknown optimizer '%s': expected one of %s", name, optimizer_names());
        return NULL;
    }
    /* One name for the structured optimizer: its allreduce form (not in the table, so a
     * session and its journal say "bespoke" either way) for an allreduce job. */
    if (k == &OPTIMIZER_BESPOKE && job->sync == JOB_SYNC_ALLREDUCE)
        k = &OPTIMIZER_BESPOKE_ALLREDUCE;
    void *self = k->create(c, job, seed, err);
    if (!self)
        return NULL;
    Optimizer *o = calloc(1, sizeof *o);
    if (!o) {
        k->destroy(self);
        error_no_memory(err, "optimizer '%s'", name);
        return NULL;
    }
    o->kind = k;
    o->self = self;
    return o;
}

int optimizer_suggest(Optimizer *o, Suggestion *out, Error *err)
{
    memset(out, 0, sizeof *out);
    return o->kind->suggest(o->self, out, err);
}

void optimizer_observe(Optimizer *o, const Observation *obs)
{
    o->kind->observe(o->self, obs);
}

void optimizer_leave_out(Optimizer *o, const unsigned char *out)
{
    if (o->kind->leave_out)
        o->kind->leave_out(o->self, out);
}

int optimizer_predict(Optimizer *o, const Schedule *s, Suggestion *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (!o->kind->predict)
        return error_set(err, "optimizer '%s' has no model to predict with", o->kind->name);
    return o->kind->predict(o->self, s, out, err);
}

void optimizer_free(Optimizer *o)
{
    if (!o)
        return;
    o->kind->destroy(o->self);
    free(o);
}

void suggestion_clear(Suggestion *s)
{
    if (!s)
        return;
    schedule_free(s->schedule);
    free(s->machine_mean_s);
    free(s->machine_p10_s);
    free(s->machine_p90_s);
    free(s->device_mean_s);
    memset(s, 0, sizeof *s);
}
