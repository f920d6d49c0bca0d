/* The structured SGD model (core/opt/sgd_model*.c) on observations drawn from known
 * parameters: the fit recovers them, the curves keep the shape the optimizer relies on, and
 * forward samples agree with the means. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/opt/sgd_model.h"
#include "tests/support/fixtures.h"

/* The truth the observations are drawn from: per device class t = a + b x (+ s x when
 * another device of the machine is loaded too), aggregation AGG_S on a machine loading two
 * devices, communication max over machines of traffic_mb * THETA[type] + C0 + C1 (W + P). */
static const double GPU_A = 0.02, GPU_B = 0.002;
static const double CPU_A = 0.05, CPU_B = 0.01, CPU_SHARED = 0.004;
static const double SLOW_A = 0.1, SLOW_B = 0.02;
static const double AGG_S = 0.01, C0 = 0.003, C1 = 0.001;
static const double THETA[2] = {1.5 / (125 * 10), 1.5 / (125 * 1)};
enum { BATCH = 256, N_GPU_BOXES = 4, N_CPU_BOXES = 2 };

static Cluster *cluster;
static JobSpec job;

/* Four machines of type "gpubox" (cpu + K520, 10 Gbps), two of "cpubox" (cpu, 1 Gbps). */
static void setup(void)
{
    cluster = cluster_new("truth");
    DeviceSpec two[2] = {{.id = "cpu", .kind = DEVICE_CPU, .threads = 8},
                         {.id = "gpu0", .kind = DEVICE_GPU, .model = "K520"}};
    DeviceSpec one[1] = {{.id = "cpu", .kind = DEVICE_CPU, .threads = 4}};
    MachineType gpubox = {.name = "gpubox", .bandwidth_gbps = 10, .devices = two, .n_devices = 2};
    MachineType cpubox = {.name = "cpubox", .bandwidth_gbps = 1, .devices = one, .n_devices = 1};
    cr_assert_eq(cluster_add_type(cluster, &gpubox, NULL), 0);
    cr_assert_eq(cluster_add_type(cluster, &cpubox, NULL), 1);
    char name[16];
    for (int i = 0; i < N_GPU_BOXES + N_CPU_BOXES; i++) {
        snprintf(name, sizeof name, "m%d", i);
        cr_assert_eq(cluster_add_machine(cluster, name, NULL, i < N_GPU_BOXES ? 0 : 1, NULL), 0);
    }
    cluster_finish(cluster);
    job = (JobSpec){.name = "truth", .model_mb = 20, .batch = BATCH, .iterations = 20,
                    .warmup = 10};
}

static void teardown(void)
{
    cluster_free(cluster);
}

TestSuite(sgd_model, .init = setup, .fini = teardown);

static double true_device_s(size_t d, double x, int shared)
{
    if (x <= 0)
        return 0;
    size_t machine;
    const DeviceSpec *ds = cluster_device(cluster, d, &machine);
    if (ds->kind == DEVICE_GPU)
        return GPU_A + GPU_B * x;
    if (cluster->machines[machine].type == 1)
        return SLOW_A + SLOW_B * x;
    return CPU_A + CPU_B * x + (shared ? CPU_SHARED * x : 0);
}

static int loaded(const Schedule *s, size_t m)
{
    const Machine *mc = &cluster->machines[m];
    int n = 0;
    for (size_t j = 0; j < cluster->types[mc->type].n_devices; j++)
        n += s->inputs[mc->first_device + j] > 0;
    return n;
}

static double true_comm_s(const Schedule *s)
{
    int W = schedule_count_workers(s), P = schedule_count_ps(s);
    double worst = 0;
    for (size_t m = 0; m < cluster->n_machines; m++) {
        double mb = sgd_model_traffic_mb(cluster, job.model_mb, s->worker, s->ps, m);
        worst = fmax(worst, mb * THETA[cluster->machines[m].type]);
    }
    return worst + C0 + C1 * (W + P);
}

/* A random valid schedule: random roles (at least one worker and one PS), the batch split
 * at random over a random subset of the workers' devices. */
static Schedule *random_schedule(gsl_rng *rng)
{
    Schedule *s = schedule_new(cluster, &job);
    size_t M = cluster->n_machines;
    for (size_t m = 0; m < M; m++) {
        s->worker[m] = gsl_rng_uniform(rng) < 0.5;
        s->ps[m] = gsl_rng_uniform(rng) < 0.4;
    }
    s->worker[gsl_rng_uniform_int(rng, M)] = 1;
    s->ps[gsl_rng_uniform_int(rng, M)] = 1;
    size_t devs[16], n = 0;
    for (size_t m = 0; m < M; m++) {
        const Machine *mc = &cluster->machines[m];
        for (size_t j = 0; s->worker[m] && j < cluster->types[mc->type].n_devices; j++)
            if (n == 0 || gsl_rng_uniform(rng) < 0.7)
                devs[n++] = mc->first_device + j;
    }
    double w[16], sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += w[i] = 0.2 + gsl_rng_uniform(rng);
    int left = BATCH;
    for (size_t i = 0; i + 1 < n; i++) {
        int x = (int)(BATCH * w[i] / sum);
        s->inputs[devs[i]] = x;
        left -= x;
    }
    s->inputs[devs[n - 1]] = left;
    /* Workers whose devices all got nothing are not workers. */
    for (size_t m = 0; m < M; m++)
        if (s->worker[m] && !loaded(s, m))
            s->worker[m] = 0;
    cr_assert_eq(schedule_validate(s, NULL), 0);
    return s;
}

/* The observation a trial of s would give under the truth, with relative noise `noise`. */
static Observation *observe_truth(const Schedule *s, gsl_rng *rng, double noise)
{
    Observation *o = observation_new(s);
    cr_assert_not_null(o);
    double worst = 0;
    for (size_t m = 0; m < cluster->n_machines; m++) {
        const Machine *mc = &cluster->machines[m];
        int shared = loaded(s, m) > 1;
        double t = 0;
        for (size_t j = 0; j < cluster->types[mc->type].n_devices; j++) {
            size_t d = mc->first_device + j;
            double dt = true_device_s(d, s->inputs[d], shared) *
                        (1 + noise * gsl_ran_gaussian(rng, 1.0));
            o->device_time_s[d] = s->inputs[d] > 0 ? dt : -1;
            t = fmax(t, s->inputs[d] > 0 ? dt : 0);
        }
        t += shared ? AGG_S : 0;
        o->machine_time_s[m] = s->worker[m] ? t : -1;
        if (s->worker[m])
            worst = fmax(worst, t);
    }
    o->comm_s = true_comm_s(s) * (1 + noise * gsl_ran_gaussian(rng, 1.0));
    o->time_s = worst + o->comm_s;
    o->status = TRIAL_OK;
    o->iterations_seen = job.iterations;
    return o;
}

/* A model fitted on `trials` random trials of the truth. */
static SgdModel *fitted(int trials, double noise, uint64_t seed)
{
    Error e;
    SgdModel *m = sgd_model_new(cluster, &job, &e);
    cr_assert_not_null(m, "%s", e.msg);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (int t = 0; t < trials; t++) {
        Schedule *s = random_schedule(rng);
        Observation *o = observe_truth(s, rng, noise);
        cr_assert_eq(sgd_model_observe(m, o), 0);
        observation_free(o);
        schedule_free(s);
    }
    gsl_rng_free(rng);
    cr_assert_eq(sgd_model_trials(m), (size_t)trials);
    cr_assert_eq(sgd_model_fit(m, seed, &e), 0, "%s", e.msg);
    return m;
}

Test(sgd_model, fit_recovers_the_device_curves_of_the_truth)
{
    SgdModel *m = fitted(40, 0.01, 1);
    for (size_t d = 0; d < cluster->n_devices; d++)
        for (int shared = 0; shared < 2; shared++) {
            size_t machine;
            cluster_device(cluster, d, &machine);
            if (shared && cluster->machines[machine].type == 1)
                continue; /* a one-device machine is never shared */
            for (double x = 16; x <= 128; x *= 2) {
                double want = true_device_s(d, x, shared), got = sgd_model_device_mean(m, d, x, shared);
                cr_assert(fabs(got - want) <= 0.06 * want, "device %zu shared %d x %g: %g vs %g", d,
                          shared, x, got, want);
            }
        }
    sgd_model_free(m);
}

Test(sgd_model, fit_recovers_communication_and_iteration_time)
{
    SgdModel *m = fitted(40, 0.01, 2);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 99); /* fresh schedules, not the ones fitted */
    for (int i = 0; i < 20; i++) {
        Schedule *s = random_schedule(rng);
        double want = true_comm_s(s), got = sgd_model_comm_mean(m, s->worker, s->ps);
        cr_assert(fabs(got - want) <= 0.1 * want + 1e-3, "schedule %d comm: %g vs %g", i, got, want);
        Observation *truth = observe_truth(s, rng, 0);
        double mean = sgd_model_mean(m, s, NULL, NULL);
        cr_assert(fabs(mean - truth->time_s) <= 0.1 * truth->time_s, "schedule %d: %g vs %g", i,
                  mean, truth->time_s);
        observation_free(truth);
        schedule_free(s);
    }
    gsl_rng_free(rng);
    sgd_model_free(m);
}

Test(sgd_model, device_curves_never_fall_with_more_inputs_even_from_noisy_data)
{
    SgdModel *m = fitted(25, 0.3, 3); /* noise enough to make the raw fit wiggle */
    for (size_t d = 0; d < cluster->n_devices; d++)
        for (int shared = 0; shared < 2; shared++) {
            cr_assert_eq(sgd_model_device_mean(m, d, 0, shared), 0);
            cr_assert_eq(sgd_model_device_mean(m, d, -3, shared), 0);
            double prev = 0;
            for (double x = 1; x <= 2 * BATCH; x += 1.5) {
                double t = sgd_model_device_mean(m, d, x, shared);
                cr_assert(t >= prev, "device %zu shared %d: %g at %g after %g", d, shared, t, x, prev);
                prev = t;
            }
        }
    sgd_model_free(m);
}

Test(sgd_model, inverse_gives_the_most_inputs_within_a_time)
{
    SgdModel *m = fitted(30, 0.01, 4);
    for (size_t d = 0; d < cluster->n_devices; d++) {
        double cap = sgd_model_device_cap(m, d);
        cr_assert_eq(sgd_model_device_inverse(m, d, 0, 0), 0);
        cr_assert_eq(sgd_model_device_inverse(m, d, 0, 1e9), cap);
        for (double x = 8; x < cap; x *= 1.7) {
            double t = sgd_model_device_mean(m, d, x, 0);
            double back = sgd_model_device_inverse(m, d, 0, t);
            cr_assert(back <= cap, "device %zu: %g above the cap %g", d, back, cap);
            cr_assert(sgd_model_device_mean(m, d, back, 0) <= t * (1 + 1e-9),
                      "device %zu: %g inputs take longer than %g", d, back, t);
            cr_assert(back >= x * (1 - 1e-6), "device %zu: %g inputs fit in %g, found %g", d, x, t,
                      back);
        }
    }
    sgd_model_free(m);
}

Test(sgd_model, samples_are_consistent_and_centred_on_the_means)
{
    SgdModel *m = fitted(40, 0.01, 5);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    Schedule *s = random_schedule(rng);
    gsl_rng_free(rng);
    enum { NS = 400 };
    size_t M = cluster->n_machines, D = cluster->n_devices;
    SgdNormals *z = sgd_normals_new(m, NS, 11);
    cr_assert_not_null(z);
    cr_assert_eq(sgd_normals_count(z), NS);
    static double it[NS], ms[NS * 8], ds[NS * 16], cs[NS];
    cr_assert(M <= 8 && D <= 16);
    Error e;
    cr_assert_eq(sgd_model_sample(m, s, z, it, ms, ds, cs, &e), 0, "%s", e.msg);
    double mean_it = 0;
    for (size_t i = 0; i < NS; i++) {
        double worst = 0;
        for (size_t mi = 0; mi < M; mi++)
            worst = fmax(worst, s->worker[mi] ? ms[i * M + mi] : 0);
        cr_assert_float_eq(it[i], worst + cs[i], 1e-12, "sample %zu: iteration = slowest worker + comm", i);
        for (size_t d = 0; d < D; d++)
            cr_assert(s->inputs[d] > 0 || ds[i * D + d] == 0, "unloaded device %zu has a time", d);
        mean_it += it[i] / NS;
    }
    double mean = sgd_model_mean(m, s, NULL, NULL);
    /* The max of noisy parts sits a little above the max of their means: never below. */
    cr_assert(mean_it >= 0.97 * mean && mean_it <= 1.15 * mean, "samples %g, mean %g", mean_it,
              mean);
    /* Common random numbers: the same normals give the same samples. */
    static double again[NS];
    cr_assert_eq(sgd_model_sample(m, s, z, again, NULL, NULL, NULL, &e), 0, "%s", e.msg);
    cr_assert_eq(memcmp(it, again, sizeof it), 0);
    sgd_normals_free(z);
    schedule_free(s);
    sgd_model_free(m);
}

Test(sgd_model, traffic_follows_the_parameter_server_formula)
{
    unsigned char worker[6] = {1, 1, 1, 0, 0, 0}, ps[6] = {0, 0, 1, 1, 0, 0};
    double mb = job.model_mb; /* W = 3, P = 2 */
    cr_assert_float_eq(sgd_model_traffic_mb(cluster, mb, worker, ps, 0), 2 * mb, 1e-12);
    cr_assert_float_eq(sgd_model_traffic_mb(cluster, mb, worker, ps, 2),
                       2 * mb * 0.5 + 2 * (mb / 2) * 2, 1e-12);
    cr_assert_float_eq(sgd_model_traffic_mb(cluster, mb, worker, ps, 3), 2 * (mb / 2) * 3, 1e-12);
    cr_assert_eq(sgd_model_traffic_mb(cluster, mb, worker, ps, 4), 0);
    /* One machine in both roles talks to nobody. */
    unsigned char alone[6] = {1, 0, 0, 0, 0, 0};
    cr_assert_eq(sgd_model_traffic_mb(cluster, mb, alone, alone, 0), 0);
}

Test(sgd_model, an_empty_model_predicts_from_its_priors)
{
    Error e;
    SgdModel *m = sgd_model_new(cluster, &job, &e);
    cr_assert_not_null(m, "%s", e.msg);
    cr_assert_eq(sgd_model_trials(m), 0);
    for (size_t d = 0; d < cluster->n_devices; d++) {
        cr_assert_eq(sgd_model_device_cap(m, d), BATCH, "no limit declared: the batch");
        double t = sgd_model_device_mean(m, d, 64, 0);
        cr_assert(t > 0 && isfinite(t), "device %zu: %g", d, t);
    }
    sgd_model_free(m);
}

Test(sgd_model, a_cluster_without_devices_is_refused)
{
    Cluster *empty = cluster_new("empty");
    cluster_finish(empty);
    Error e = {0};
    cr_assert_null(sgd_model_new(empty, &job, &e));
    cr_assert(strstr(e.msg, "empty"), "%s", e.msg);
    cluster_free(empty);
}

Test(sgd_model, an_out_of_memory_failure_caps_the_gpu)
{
    SimCluster *sim = fixture_sim("B:googlenet:2048");
    const Cluster *c = simcluster_cluster(sim);
    Error e;
    SgdModel *m = sgd_model_new(c, simcluster_job(sim), &e);
    cr_assert_not_null(m, "%s", e.msg);
    Schedule *s = schedule_new(c, simcluster_job(sim));
    size_t gpu = 0;
    for (size_t d = 0; d < c->n_devices; d++)
        if (cluster_device(c, d, NULL)->kind == DEVICE_GPU)
            gpu = d;
    size_t machine;
    cluster_device(c, gpu, &machine);
    s->worker[machine] = s->ps[machine] = 1;
    s->inputs[gpu] = 2048; /* past the simulated K520's memory for GoogleNet */
    Observation *o = fixture_sim_trial(sim, s, 1, 1);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert_eq(sgd_model_device_cap(m, gpu), 2048);
    sgd_model_observe(m, o);
    cr_assert_eq(sgd_model_fit(m, 1, &e), 0, "%s", e.msg);
    cr_assert(sgd_model_device_cap(m, gpu) < 2048, "cap %d", sgd_model_device_cap(m, gpu));
    observation_free(o);
    schedule_free(s);
    sgd_model_free(m);
    simcluster_free(sim);
}
