/* The SGD cluster simulator: ground-truth device curves, aggregation, parameter-server
 * traffic and noise for the seed's settings (Table 1) and networks (Table 2), and the
 * mixed-GPU allreduce settings whose communication lives in sim_allreduce.c. The best-known
 * schedule each setting is measured against: simcluster_best.c. */
#include "core/base/decimal.h"
#include "core/base/rng.h"
#include "core/sim/simcluster.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim/simcluster_priv.h"

/* Parameter-server settings (seed Table 1): EC2's g2 and c4 machines, bandwidths EC2's "high"
 * (1-2 Gbps) and 10 Gbps classes. One K520 at 350 Gop/s; a loaded CPU steals the threads that
 * feed the GPU on the same machine (×1.15).
 *
 * Allreduce settings: nodes of four GPUs of one generation, no training CPU. GPU speeds are
 * ResNet-50 v1.5 mixed-precision training throughputs on one GPU from NVIDIA's
 * DeepLearningExamples (PyTorch/Classification/ConvNets/resnet50v1.5/README.md, pytorch-21.03
 * container): A100 2470 img/s, V100 16 GB 1200 img/s; that README gives no T4 training
 * figure, so the T4's is the V100's scaled by their mixed-precision inference ratio at batch
 * 256 in the same README (1198 / 3382 img/s): 425 img/s. Times 12.3 Gop per ResNet-50 image
 * (3 × 4.1 G multiply-adds) they are Gop/s, so other networks keep the same ratios. Memory:
 * A100 40 GB, V100 and T4 16 GB. Intra-node allreduce bus bandwidths are assumed round
 * figures for NVLink 3 (A100), NVLink 2 (V100) and PCIe 3 (T4); network links 100, 25 and
 * 10 Gbps. */
static const TypeTruth TYPES[] = {
    {"g2.2xlarge", "g2", 8, 1, 1, "K520", 1.0, 20.0, 4.0, 350.0, 24.0, 1.0, 1.15, 0},
    {"c4.2xlarge", "c4x2", 8, 1, 0, "", 1.0, 26.0, 4.0, 0, 0, 0, 1.0, 0},
    {"c4.4xlarge", "c4x4", 16, 1, 0, "", 2.0, 55.0, 6.0, 0, 0, 0, 1.0, 0},
    {"c4.8xlarge", "c4x8", 36, 1, 0, "", 10.0, 110.0, 10.0, 0, 0, 0, 1.0, 0},
    {"a100x4", "a100", 32, 0, 4, "A100", 100.0, 0, 0, 2470 * 12.3, 32.0, 10.0, 1.02, 230.0},
    {"v100x4", "v100", 32, 0, 4, "V100", 25.0, 0, 0, 1200 * 12.3, 24.0, 4.0, 1.02, 130.0},
    {"t4x4", "t4", 32, 0, 4, "T4", 25.0, 0, 0, 425 * 12.3, 16.0, 4.0, 1.05, 10.0},
};
enum { N_TYPES = 7, N_PS_SETTINGS = 3, N_AR_SETTINGS = 3 };

/* Machines of each type per setting: seed Table 1 (A, B, C), then the mixed-generation
 * allreduce settings M1 (A100 + V100 + T4), M2 (V100 + T4), M3 (A100 + T4). */
static const int SETTINGS[N_PS_SETTINGS + N_AR_SETTINGS][N_TYPES] = {
    {0, 6, 2, 2, 0, 0, 0}, {1, 3, 3, 3, 0, 0, 0}, {2, 2, 2, 4, 0, 0, 0},
    {0, 0, 0, 0, 1, 2, 2}, {0, 0, 0, 0, 0, 2, 4}, {0, 0, 0, 0, 2, 0, 3},
};

/* Seed Table 2; batches chosen so iteration times sit where the seed's results do.
 * ResNet-50: 25.6 M parameters (97.5 MB), 4.1 G multiply-adds, 64 inputs in 4 GB. */
static const NetTruth NETS[] = {
    {"googlenet", 26.7, 1582.0, 768, 1024},
    {"alexnet", 233.0, 714.0, 1024, 1536},
    {"speechnet", 173.0, 45.3, 4096, 8192},
    {"resnet50", 97.5, 4100.0, 2048, 64},
};
enum { N_NETS = 4 };

const char *simcluster_settings_help(void)
{
    return "settings A, B, C (seed Table 1), G<n> (a generated cluster of n machines), or the "
           "allreduce settings M1 (A100+V100+T4 nodes), M2 (V100+T4), M3 (A100+T4); networks "
           "googlenet, alexnet, speechnet, resnet50";
}

static int parse_setting(const char *s, int counts[N_TYPES], int *allreduce, Error *err,
                         const char *spec)
{
    memset(counts, 0, sizeof(int) * N_TYPES);
    *allreduce = 0;
    if (strlen(s) == 1 && strchr("ABCabc", s[0])) {
        memcpy(counts, SETTINGS[toupper((unsigned char)s[0]) - 'A'], sizeof(int) * N_TYPES);
        return 0;
    }
    if ((s[0] == 'M' || s[0] == 'm') && s[1] >= '1' && s[1] < '1' + N_AR_SETTINGS && !s[2]) {
        memcpy(counts, SETTINGS[N_PS_SETTINGS + (s[1] - '1')], sizeof(int) * N_TYPES);
        *allreduce = 1;
        return 0;
    }
    if ((s[0] == 'G' || s[0] == 'g') && s[1]) {
        long n;
        if (decimal_long(s + 1, 2, 100000, &n) < 0)
            return error_set(err, "--sim '%s': expected G<n> with 2 <= n <= 100000, found '%s'",
                             spec, s);
        /* Setting B's mix, scaled: one GPU machine in ten, the rest spread over the CPUs. */
        counts[0] = (int)(n / 10 > 0 ? n / 10 : 1);
        long rest = n - counts[0];
        counts[1] = (int)(rest / 3);
        counts[2] = (int)(rest / 3);
        counts[3] = (int)(rest - 2 * (rest / 3));
        return 0;
    }
    return error_set(err, "--sim '%s': unknown setting '%s': expected A, B, C, G<n>, M1, M2 or M3",
                     spec, s);
}

SimCluster *simcluster_new(const char *spec, Error *err)
{
    char buf[64], *parts[4] = {0};
    if (!spec || strlen(spec) >= sizeof buf) {
        error_set(err, "--sim: expected SETTING:NETWORK[:BATCH], e.g. B:googlenet");
        return NULL;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    /* Split at every ':' keeping empty parts ("B::googlenet", "B:googlenet:" are refused,
     * not read as B:googlenet). */
    int n = 0, empty = 0;
    for (char *p = buf; p && n < 4; n++) {
        parts[n] = p;
        p = strchr(p, ':');
        if (p)
            *p++ = 0;
        empty |= !*parts[n];
    }
    if (n < 2 || n > 3 || empty) {
        error_set(err, "--sim '%s': expected SETTING:NETWORK[:BATCH], e.g. B:googlenet", spec);
        return NULL;
    }
    int counts[N_TYPES], allreduce = 0;
    if (parse_setting(parts[0], counts, &allreduce, err, spec) < 0)
        return NULL;
    const NetTruth *net = NULL;
    for (int i = 0; i < N_NETS; i++)
        if (strcasecmp(parts[1], NETS[i].name) == 0)
            net = &NETS[i];
    if (!net) {
        error_set(err,
                  "--sim '%s': unknown network '%s': expected googlenet, alexnet, speechnet or "
                  "resnet50",
                  spec, parts[1]);
        return NULL;
    }
    int batch = net->batch;
    if (n == 3) {
        long b;
        if (decimal_long(parts[2], 1, 10000000, &b) < 0) {
            error_set(err,
                      "--sim '%s': batch: expected a positive integer up to 10000000, found '%s'",
                      spec, parts[2]);
            return NULL;
        }
        batch = (int)b;
    }
    SimCluster *s = calloc(1, sizeof *s);
    if (!s) {
        error_no_memory(err, "--sim '%s'", spec);
        return NULL;
    }
    snprintf(s->spec, sizeof s->spec, "%s", spec);
    s->net = net;
    s->gop = 3.0 * net->mops / 1000.0;
    char cname[64];
    snprintf(cname, sizeof cname, "sim-%s", parts[0]);
    s->cluster = cluster_new(cname);
    s->truth_of_type = calloc(N_TYPES, sizeof *s->truth_of_type);
    if (!s->cluster || !s->truth_of_type)
        goto no_memory;
    for (int t = 0; t < N_TYPES; t++) {
        if (!counts[t])
            continue;
        const TypeTruth *tt = &TYPES[t];
        DeviceSpec devs[8];
        size_t nd = 0;
        memset(devs, 0, sizeof devs);
        if (tt->has_cpu) {
            snprintf(devs[nd].id, sizeof devs[nd].id, "cpu");
            devs[nd].kind = DEVICE_CPU;
            devs[nd++].threads = tt->threads;
        }
        for (int g = 0; g < tt->n_gpus; g++, nd++) {
            snprintf(devs[nd].id, sizeof devs[nd].id, "gpu%d", g);
            devs[nd].kind = DEVICE_GPU;
            snprintf(devs[nd].model, sizeof devs[nd].model, "%s", tt->gpu_model);
            /* The allreduce settings declare GPU memory in inputs, as an inventory written
             * from nvidia-smi would; the seed's PS settings leave it to be learned. */
            if (allreduce)
                devs[nd].max_inputs = (int)(net->gpu_max_inputs * tt->gpu_mem_scale);
        }
        MachineType mt = {.bandwidth_gbps = tt->bandwidth_gbps, .devices = devs, .n_devices = nd};
        snprintf(mt.name, sizeof mt.name, "%s", tt->type);
        long added = cluster_add_type(s->cluster, &mt, err);
        if (added < 0)
            goto fail;
        size_t ti = (size_t)added;
        s->truth_of_type[ti] = tt;
        for (int i = 0; i < counts[t]; i++) {
            char name[64], host[80];
            snprintf(name, sizeof name, "%s-%d", TYPES[t].prefix, i);
            snprintf(host, sizeof host, "%s.sim", name);
            if (cluster_add_machine(s->cluster, name, host, ti, err) < 0)
                goto fail;
        }
    }
    cluster_finish(s->cluster);
    snprintf(s->job.name, sizeof s->job.name, "%s", net->name);
    s->job.model_mb = net->model_mb;
    s->job.mops = net->mops;
    s->job.batch = batch;
    s->job.iterations = 20;
    s->job.warmup = 10;
    s->job.sync = allreduce ? JOB_SYNC_ALLREDUCE : JOB_SYNC_PS;
    s->job.collective = ALLREDUCE_RING;
    return s;
no_memory:
    error_no_memory(err, "--sim '%s'", spec);
    simcluster_free(s);
    return NULL;
fail:
    error_prefix(err, "--sim '%s'", spec);
    simcluster_free(s);
    return NULL;
}

void simcluster_free(SimCluster *s)
{
    if (!s)
        return;
    schedule_free(s->best);
    cluster_free(s->cluster);
    free(s->truth_of_type);
    free(s);
}

const Cluster *simcluster_cluster(const SimCluster *s)
{
    return s->cluster;
}

const JobSpec *simcluster_job(const SimCluster *s)
{
    return &s->job;
}

const char *simcluster_spec(const SimCluster *s)
{
    return s->spec;
}

/* ---- ground truth ---- */

double simtruth_device_time(const SimCluster *s, const TypeTruth *t, int gpu, double x,
                            int other_loaded)
{
    if (x <= 0)
        return 0;
    if (gpu)
        return (x + t->gpu_sat) * s->gop / t->gpu_gops * (other_loaded ? t->interference : 1.0);
    return (x + t->cpu_sat) * s->gop / t->cpu_gops;
}

/* Summing per-device gradients on the CPU before sending them (seed §3); for an allreduce
 * job, DDP's copy of the gradients into its buckets on each GPU of a shared node. */
double simtruth_aggregation_time(const SimCluster *s)
{
    if (s->job.sync == JOB_SYNC_ALLREDUCE)
        return 0.002 + 0.00004 * s->net->model_mb;
    return 0.03 + 0.0015 * s->net->model_mb;
}

int simtruth_gpu_cap(const SimCluster *s, const TypeTruth *t)
{
    return (int)(s->net->gpu_max_inputs * t->gpu_mem_scale);
}

static double mb_per_s(double gbps)
{
    return gbps * 125.0;
}

/* Parameter-server traffic: a worker sends gradients and receives parameters for every shard
 * it does not hold; a PS serves its shard to every other worker. The slowest link decides;
 * incast and per-peer latency are what the parametric model does not know. */
static double comm_time(const SimCluster *s, const Schedule *sch)
{
    const Cluster *c = s->cluster;
    int W = schedule_count_workers(sch), P = schedule_count_ps(sch);
    double model = s->net->model_mb, worst = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        double d = 0;
        if (sch->worker[m])
            d += 2 * model * (1.0 - (sch->ps[m] ? 1.0 / P : 0.0));
        if (sch->ps[m])
            d += 2 * (model / P) * (W - (sch->worker[m] ? 1 : 0));
        double t = d / mb_per_s(c->types[c->machines[m].type].bandwidth_gbps);
        if (t > worst)
            worst = t;
    }
    return worst * (1.0 + 0.02 * (W - 1)) + 0.004 * (W + P);
}

typedef struct {
    double *device_s; /* n_devices */
    double *machine_s;
    double comm_s, iter_s;
    char oom[160];
} Truth;

/* Evaluates a schedule; `rng` NULL for noiseless, else one iteration's noise. */
static void evaluate(const SimCluster *s, const Schedule *sch, gsl_rng *rng, double warm,
                     Truth *out)
{
    const Cluster *c = s->cluster;
    out->oom[0] = 0;
    double slowest = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        const Machine *mc = &c->machines[m];
        const MachineType *mt = &c->types[mc->type];
        const TypeTruth *t = s->truth_of_type[mc->type];
        int loaded = 0;
        for (size_t d = 0; d < mt->n_devices; d++)
            loaded += sch->inputs[mc->first_device + d] > 0;
        double worst = 0;
        for (size_t d = 0; d < mt->n_devices; d++) {
            size_t fd = mc->first_device + d;
            int gpu = mt->devices[d].kind == DEVICE_GPU;
            int x = sch->inputs[fd];
            if (gpu && x > simtruth_gpu_cap(s, t) && !out->oom[0])
                snprintf(out->oom, sizeof out->oom,
                         "out of GPU memory on %s: %d inputs on %s (%s)", mc->name, x,
                         mt->devices[d].id, mt->devices[d].model);
            double v = simtruth_device_time(s, t, gpu, x, loaded > 1);
            if (rng && v > 0)
                v *= exp(gsl_ran_gaussian(rng, 0.03)) * warm;
            out->device_s[fd] = v;
            if (v > worst)
                worst = v;
        }
        double agg = loaded > 1 ? simtruth_aggregation_time(s) : 0;
        if (rng && agg > 0)
            agg *= exp(gsl_ran_gaussian(rng, 0.05));
        out->machine_s[m] = sch->worker[m] ? worst + agg : 0;
        if (sch->worker[m] && out->machine_s[m] > slowest)
            slowest = out->machine_s[m];
    }
    out->comm_s =
        s->job.sync == JOB_SYNC_ALLREDUCE ? simar_comm_time(s, sch) : comm_time(s, sch);
    if (rng)
        out->comm_s *= exp(gsl_ran_gaussian(rng, 0.04)) * (warm > 1 ? warm : 1);
    out->iter_s = slowest + out->comm_s;
}

static void truth_free(Truth *t)
{
    free(t->device_s);
    free(t->machine_s);
}

static int truth_init(Truth *t, const Cluster *c)
{
    t->device_s = calloc(c->n_devices ? c->n_devices : 1, sizeof(double));
    t->machine_s = calloc(c->n_machines ? c->n_machines : 1, sizeof(double));
    if (t->device_s && t->machine_s)
        return 0;
    truth_free(t);
    return -1;
}

double simcluster_noiseless_time(const SimCluster *s, const Schedule *sch)
{
    if (schedule_validate(sch, NULL) < 0)
        return INFINITY;
    Truth t;
    if (truth_init(&t, s->cluster) < 0)
        return INFINITY; /* out of memory: no time known */
    evaluate(s, sch, NULL, 1.0, &t);
    double v = t.oom[0] ? INFINITY : t.iter_s;
    truth_free(&t);
    return v;
}

static void emit_error(SimEmitFn emit, void *ud, const char *msg)
{
    TrialEvent ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = EVENT_ERROR;
    ev.text = (char *)msg;
    emit(ud, &ev);
}

int simcluster_run(const SimCluster *s, const Schedule *sch, uint64_t seed, SimEmitFn emit,
                   void *ud)
{
    const Cluster *c = s->cluster;
    Error verr;
    if (schedule_validate(sch, &verr) < 0) {
        emit_error(emit, ud, verr.msg);
        return -1;
    }
    gsl_rng *rng = rng_new((unsigned long)(seed * 2654435761u + (uint64_t)sch->trial * 40503u + 1));
    Truth t = {0};
    /* One event reused for every iteration: machines carry pointers into `devs`. */
    MachineMeasure *mm = calloc(c->n_machines, sizeof *mm);
    DeviceMeasure *devs = calloc(c->n_devices ? c->n_devices : 1, sizeof *devs);
    if (!rng || truth_init(&t, c) < 0 || !mm || !devs) {
        /* Out of memory: the simulated trial fails like a real one would, with a reason. */
        emit_error(emit, ud, "simulator: out of memory");
        gsl_rng_free(rng), truth_free(&t), free(mm), free(devs);
        return -1;
    }
    int iterations = sch->job.iterations, warmup = sch->job.warmup;
    double sum = 0;
    int n_after = 0, rc = 0;
    for (int it = 0; it < iterations; it++) {
        /* The first iterations are slow and erratic (seed §2: high variance early on). */
        double warm = it < 3 ? 1.0 + 0.8 * gsl_rng_uniform(rng) : 1.0;
        evaluate(s, sch, rng, warm, &t);
        if (t.oom[0]) {
            emit_error(emit, ud, t.oom);
            rc = -1;
            break;
        }
        TrialEvent ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = EVENT_ITERATION;
        ev.iter = it + 1; /* iterations count from 1, like a training log */
        ev.time_s = t.iter_s;
        ev.comm_s = t.comm_s;
        ev.machines = mm;
        for (size_t m = 0; m < c->n_machines; m++) {
            if (!sch->worker[m])
                continue;
            const Machine *mc = &c->machines[m];
            const MachineType *mt = &c->types[mc->type];
            MachineMeasure *x = &mm[ev.n_machines++];
            snprintf(x->name, sizeof x->name, "%s", mc->name);
            x->compute_s = t.machine_s[m];
            x->devices = &devs[mc->first_device];
            x->n_devices = 0;
            for (size_t d = 0; d < mt->n_devices; d++) {
                size_t fd = mc->first_device + d;
                if (sch->inputs[fd] <= 0)
                    continue;
                DeviceMeasure *dm = &x->devices[x->n_devices++];
                snprintf(dm->id, sizeof dm->id, "%s", mt->devices[d].id);
                dm->inputs = sch->inputs[fd];
                dm->time_s = t.device_s[fd];
            }
        }
        emit(ud, &ev);
        if (it >= warmup) {
            sum += t.iter_s;
            n_after++;
        }
    }
    if (rc == 0) {
        TrialEvent done;
        memset(&done, 0, sizeof done);
        done.kind = EVENT_DONE;
        done.time_s = n_after ? sum / n_after : t.iter_s;
        emit(ud, &done);
    }
    free(mm);
    free(devs);
    truth_free(&t);
    gsl_rng_free(rng);
    return rc;
}
