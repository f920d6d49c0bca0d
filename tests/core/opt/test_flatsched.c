#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "core/opt/flatsched.h"
#include "core/opt/schedule_random.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

/* Any point of the box — and points outside it — decodes to a valid schedule. */
static void random_vectors_decode_valid(const char *spec, unsigned long seed)
{
    Error e;
    SimCluster *sim = fixture_sim(spec);
    const Cluster *c = simcluster_cluster(sim);
    Schedule *s = schedule_new(c, simcluster_job(sim));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    int *roles = calloc(c->n_machines, sizeof *roles);
    double *w = calloc(c->n_devices, sizeof *w);
    for (int draw = 0; draw < 2000; draw++) {
        for (size_t m = 0; m < c->n_machines; m++)
            roles[m] = (int)gsl_rng_uniform_int(rng, 6) - 1; /* -1..4: out of range too */
        for (size_t d = 0; d < c->n_devices; d++) {
            double u = gsl_rng_uniform(rng);
            w[d] = u < 0.1 ? 0 : u < 0.15 ? -u : u < 0.18 ? NAN : u < 0.2 ? INFINITY : u;
        }
        cr_assert_eq(flatsched_decode(roles, w, s, &e), 0, "%s draw %d: %s", spec, draw, e.msg);
        cr_assert_eq(schedule_validate(s, &e), 0, "%s draw %d: %s", spec, draw, e.msg);
        for (size_t m = 0; m < c->n_machines; m++)
            if (s->worker[m])
                cr_assert_gt(schedule_machine_inputs(s, m), 0, "%s: idle worker", spec);
        cr_assert(isfinite(simcluster_noiseless_time(sim, s)), "%s: schedule cannot run", spec);
    }
    free(roles);
    free(w);
    gsl_rng_free(rng);
    schedule_free(s);
    simcluster_free(sim);
}

Test(flatsched, random_vectors_decode_valid_in_every_setting)
{
    random_vectors_decode_valid("A:googlenet", 1);
    random_vectors_decode_valid("B:alexnet", 2);
    random_vectors_decode_valid("C:speechnet", 3);
    random_vectors_decode_valid("G25:googlenet", 4);
}

Test(flatsched, all_none_and_zero_weights_still_run)
{
    Error e;
    SimCluster *sim = fixture_sim("C:googlenet");
    const Cluster *c = simcluster_cluster(sim);
    Schedule *s = schedule_new(c, simcluster_job(sim));
    int *roles = calloc(c->n_machines, sizeof *roles);
    double *w = calloc(c->n_devices, sizeof *w);
    cr_assert_eq(flatsched_decode(roles, w, s, &e), 0, "%s", e.msg);
    cr_assert_eq(schedule_count_workers(s), 1);
    cr_assert_eq(schedule_count_ps(s), 1);
    /* The machine chosen is a worker with the whole batch and also the PS. */
    for (size_t m = 0; m < c->n_machines; m++)
        if (s->worker[m]) {
            cr_assert(s->ps[m]);
            cr_assert_eq(schedule_machine_inputs(s, m), s->job.batch);
        }
    free(roles);
    free(w);
    schedule_free(s);
    simcluster_free(sim);
}

Test(flatsched, worker_without_weight_is_demoted_but_keeps_ps)
{
    Error e;
    SimCluster *sim = fixture_sim("A:googlenet");
    const Cluster *c = simcluster_cluster(sim);
    Schedule *s = schedule_new(c, simcluster_job(sim));
    int *roles = calloc(c->n_machines, sizeof *roles);
    double *w = calloc(c->n_devices, sizeof *w);
    roles[0] = FLAT_BOTH;   /* weight 0: keeps only its PS role */
    roles[1] = FLAT_WORKER; /* weight 1: takes the batch */
    w[c->machines[1].first_device] = 1.0;
    cr_assert_eq(flatsched_decode(roles, w, s, &e), 0, "%s", e.msg);
    cr_assert(!s->worker[0]);
    cr_assert(s->ps[0]);
    cr_assert(s->worker[1]);
    cr_assert(!s->ps[1]);
    cr_assert_eq(schedule_machine_inputs(s, 1), s->job.batch);
    free(roles);
    free(w);
    schedule_free(s);
    simcluster_free(sim);
}

Test(flatsched, encode_then_decode_round_trips)
{
    Error e;
    SimCluster *sim = fixture_sim("C:alexnet");
    const Cluster *c = simcluster_cluster(sim);
    Schedule *back = schedule_new(c, simcluster_job(sim));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    int *roles = calloc(c->n_machines, sizeof *roles);
    double *w = calloc(c->n_devices, sizeof *w);
    int checked = 0;
    for (int draw = 0; draw < 500; draw++) {
        Schedule *s = schedule_random(c, simcluster_job(sim), rng, &e);
        cr_assert_not_null(s, "%s", e.msg);
        int idle = 0;
        for (size_t m = 0; m < c->n_machines; m++)
            idle |= s->worker[m] && schedule_machine_inputs(s, m) == 0;
        if (!idle) {
            flatsched_encode(s, roles, w);
            cr_assert_eq(flatsched_decode(roles, w, back, &e), 0, "%s", e.msg);
            cr_assert(schedule_equal(s, back), "draw %d does not round-trip", draw);
            checked++;
        }
        schedule_free(s);
    }
    cr_assert_gt(checked, 400);
    free(roles);
    free(w);
    gsl_rng_free(rng);
    schedule_free(back);
    simcluster_free(sim);
}

static Cluster *capped_cluster(int gpu_max)
{
    DeviceSpec devs[2];
    memset(devs, 0, sizeof devs);
    snprintf(devs[0].id, sizeof devs[0].id, "cpu");
    devs[0].kind = DEVICE_CPU;
    snprintf(devs[1].id, sizeof devs[1].id, "gpu0");
    devs[1].kind = DEVICE_GPU;
    devs[1].max_inputs = gpu_max;
    MachineType mt = {.bandwidth_gbps = 10, .devices = devs, .n_devices = 2};
    snprintf(mt.name, sizeof mt.name, "gpubox");
    return fixture_cluster("capped", &mt, 2);
}

Test(flatsched, memory_limits_are_water_filled)
{
    Cluster *c = capped_cluster(100);
    JobSpec job = {.name = "j", .model_mb = 10, .batch = 1000, .iterations = 20, .warmup = 10};
    Schedule *s = schedule_new(c, &job);
    int roles[2] = {FLAT_BOTH, FLAT_WORKER};
    double w[4] = {0.01, 1.0, 0.01, 1.0}; /* GPUs asked for ~98% of the batch */
    Error e;
    cr_assert_eq(flatsched_decode(roles, w, s, &e), 0, "%s", e.msg);
    cr_assert_eq(s->inputs[1], 100);
    cr_assert_eq(s->inputs[3], 100);
    cr_assert_eq(s->inputs[0] + s->inputs[2], 800);
    cr_assert_eq(schedule_validate(s, &e), 0, "%s", e.msg);
    schedule_free(s);
    cluster_free(c);
}

Test(flatsched, batch_beyond_memory_is_a_clear_error)
{
    Cluster *c = capped_cluster(100);
    JobSpec job = {.name = "j", .model_mb = 10, .batch = 1000, .iterations = 20, .warmup = 10};
    Schedule *s = schedule_new(c, &job);
    int roles[2] = {FLAT_BOTH, FLAT_NONE};
    double w[4] = {0, 1, 0, 0};
    /* The GPU takes its 100 and the CPU of the same worker the rest: still fine. */
    Error e;
    cr_assert_eq(flatsched_decode(roles, w, s, &e), 0, "%s", e.msg);
    cr_assert_eq(s->inputs[0], 900);
    schedule_free(s);
    cluster_free(c);

    /* A GPU-only machine type cannot hold a batch beyond its memory. */
    DeviceSpec dev = {.kind = DEVICE_GPU, .max_inputs = 10};
    snprintf(dev.id, sizeof dev.id, "gpu0");
    MachineType mt = {.bandwidth_gbps = 10, .devices = &dev, .n_devices = 1};
    snprintf(mt.name, sizeof mt.name, "tiny");
    Cluster *g = fixture_cluster("gpu-only", &mt, 1);
    Schedule *t = schedule_new(g, &job);
    int r1[1] = {FLAT_BOTH};
    double w1[1] = {1};
    cr_assert_eq(flatsched_decode(r1, w1, t, &e), -1);
    cr_assert(strstr(e.msg, "memory limits"), "message: %s", e.msg);
    schedule_free(t);
    cluster_free(g);
}
