/* The simulator's hidden ground truth, shared by its parameter-server part (simcluster.c), its
 * best-known search (simcluster_best.c) and its allreduce part (sim_allreduce.c). Internal to
 * core/sim: optimizers never include it. */
#ifndef TUNEDECK_SIMCLUSTER_PRIV_H
#define TUNEDECK_SIMCLUSTER_PRIV_H

#include <stddef.h>

#include "core/sim/simcluster.h"

/* Ground truth per machine type. A device processes x inputs in (x + sat) * gop / gops
 * seconds: throughput saturates at gops/gop inputs per second as x grows. */
typedef struct {
    const char *type, *prefix;
    int threads, has_cpu; /* has_cpu: a CPU device that trains (the PS settings) */
    int n_gpus;
    const char *gpu_model;
    double bandwidth_gbps; /* the machine's network link (the inventory shows it) */
    double cpu_gops, cpu_sat;
    double gpu_gops, gpu_sat;
    double gpu_mem_scale;  /* GPU memory relative to a K520's 4 GB */
    double interference;   /* a GPU slows by this when another device of its machine works */
    double intra_gbytes_s; /* allreduce bus bandwidth between its GPUs (hidden) */
} TypeTruth;

typedef struct {
    const char *name;
    double model_mb, mops;
    int batch, gpu_max_inputs; /* gpu_max_inputs on a 4 GB K520; larger GPUs scale it */
} NetTruth;

struct SimCluster {
    char spec[64];
    Cluster *cluster;
    JobSpec job;
    const NetTruth *net;
    const TypeTruth **truth_of_type; /* cluster type index -> its truth */
    double gop;                      /* training operations per input, in Gop */
    int best_cached;
    double best_s;
    Schedule *best;
};

double simtruth_device_time(const SimCluster *s, const TypeTruth *t, int gpu, double x,
                            int other_loaded);
double simtruth_aggregation_time(const SimCluster *s);
int simtruth_gpu_cap(const SimCluster *s, const TypeTruth *t);

/* Allreduce jobs (sim_allreduce.c): the noiseless communication time of a schedule, and
 * the best-known search (exhaustive over how many GPUs each machine loads, per type as a
 * multiset; the exact balance for each). Returns INFINITY when too large to enumerate or
 * out of memory. */
double simar_comm_time(const SimCluster *s, const Schedule *sch);
double simar_best_known(SimCluster *s, Schedule *best);

#endif
