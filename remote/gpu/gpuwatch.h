/* GPU state of the cluster's hosts: per host one long-lived channel running
 * `nvidia-smi --query-gpu=... -lms PERIOD` and one looping --query-compute-apps (with each
 * process's group, so a GPU process maps to the job whose group started it). Hosts without
 * nvidia-smi say "no GPU tool" once and are left alone. Driven by the host pool's loop:
 * call gpuwatch_step after every hostpool_step (gpuwatch_attach after hostpool_attach). */
#ifndef TUNEDECK_GPUWATCH_H
#define TUNEDECK_GPUWATCH_H

#include "core/base/evloop.h"
#include "remote/gpu/nvsmi.h"
#include "remote/ssh/hostpool.h"

typedef struct GpuWatch GpuWatch;

typedef enum { GPUHOST_STARTING, GPUHOST_OK, GPUHOST_NO_TOOL, GPUHOST_ERROR } GpuHostState;

typedef struct {
    GpuProcess proc;
    long gpu;  /* index into the host's gpus (joined on UUID); -1 unknown */
    long pgid; /* its process group on the host; 0 unknown */
} GpuProc;

/* Keeps a pointer to the pool, which must outlive it. */
GpuWatch *gpuwatch_new(HostPool *pool, double period_s);
void gpuwatch_free(GpuWatch *w);
void gpuwatch_add_host(GpuWatch *w, size_t host);
void gpuwatch_step(GpuWatch *w, int64_t now_ms);
/* Registers gpuwatch_step on a loop, to run after the pool's step (attach the pool first);
 * returns the source id or -1. */
long gpuwatch_attach(GpuWatch *w, EvLoop *l);

GpuHostState gpuwatch_state(const GpuWatch *w, size_t host, const char **why);
/* GPUs and one round of processes seen, or a final state (no tool, error). */
int gpuwatch_answered(const GpuWatch *w, size_t host);
/* Every GPU nvidia-smi lists, those whose line was refused included: in error (.error), at
 * their index, never to be used (gputable_readable counts the others). */
size_t gpuwatch_gpus(const GpuWatch *w, size_t host, const GpuSample **out);
size_t gpuwatch_procs(const GpuWatch *w, size_t host, const GpuProc **out);
const char *gpuwatch_state_name(GpuHostState s);

/* The remote commands (exposed for tests and `tunedeck hosts`). */
char *gpuwatch_gpu_command(double period_s); /* period 0: one shot */
char *gpuwatch_apps_command(double period_s);

#endif
