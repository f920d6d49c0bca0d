/* The SGD cluster simulator (DESIGN §2.3): the seed's EC2 settings A, B, C (and generated
 * clusters) training GoogleNet, AlexNet or SpeechNet, answering a schedule with the same
 * protocol events a real trial prints. Its ground truth is hidden from the optimizers. */
#ifndef TUNEDECK_SIMCLUSTER_H
#define TUNEDECK_SIMCLUSTER_H

#include <stdint.h>

#include "core/model/protocol.h"
#include "core/model/schedule.h"

typedef struct SimCluster SimCluster;

/* spec: "SETTING:NETWORK[:BATCH]" — SETTING is A, B, C, or G<n> for a generated cluster of
 * n machines (parameter-server jobs), or M1, M2, M3 (nodes of four GPUs of mixed generations,
 * allreduce jobs); NETWORK is googlenet, alexnet, speechnet or resnet50. */
SimCluster *simcluster_new(const char *spec, Error *err);
void simcluster_free(SimCluster *s);

const Cluster *simcluster_cluster(const SimCluster *s);
const JobSpec *simcluster_job(const SimCluster *s);
const char *simcluster_spec(const SimCluster *s);

typedef void (*SimEmitFn)(void *userdata, const TrialEvent *ev);

/* Runs one trial with noise drawn from `seed`: emits `iterations` iteration events then a
 * done event, or one error event (an invalid schedule, a GPU out of memory). Returns 0 when
 * the trial ran, -1 when it ended in an error event. */
int simcluster_run(const SimCluster *s, const Schedule *sched, uint64_t seed, SimEmitFn emit,
                   void *userdata);

/* The noiseless iteration time of a schedule; INFINITY when it cannot run. For benchmarks
 * and tests only: the optimizers never see it. */
double simcluster_noiseless_time(const SimCluster *s, const Schedule *sched);

/* The best noiseless time known (core/sim/simcluster_best.c): an exhaustive search over role
 * counts per machine type (allreduce settings: over how many GPUs each machine loads) with the
 * exact load balance for each (cached after the first call); INFINITY for clusters too large
 * to enumerate (generated ones). A schedule that reaches it is written to *best when best is
 * not NULL (caller frees). */
double simcluster_best_known(SimCluster *s, Schedule **best);

/* Names for help text. */
const char *simcluster_settings_help(void);

#endif
