/* Fixtures the unit tests share: a simulated cluster, one simulated trial through the same
 * accumulator a real trial uses, an optimizer's run of several trials, a fixture file's
 * text, clusters and schedules from inventory text, the built-in job catalogue, a scheduler
 * and its capacity check. Each helper fails the
 * calling test (Criterion assertions) instead of returning an error. */
#ifndef TUNEDECK_TEST_FIXTURES_H
#define TUNEDECK_TEST_FIXTURES_H

#include <stdint.h>

#include "core/model/observation.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "core/sim/simcluster.h"

/* A cluster named `name` of n_machines machines "TYPE-0", "TYPE-1", ... of one machine type
 * (copied with its devices), finished and asserted; the caller frees it. */
Cluster *fixture_cluster(const char *name, const MachineType *type, size_t n_machines);

/* The cluster an inventory's JSON text describes, asserted; the caller frees it. */
Cluster *fixture_cluster_json(const char *inventory);

/* A schedule for c of an empty job named "j" with `batch` inputs, a 1 MB model and 2
 * iterations, no role set; asserted. The caller frees it. */
Schedule *fixture_schedule(const Cluster *c, int batch);

/* simcluster_new(spec), asserted; the caller frees it. */
SimCluster *fixture_sim(const char *spec);

/* Runs schedule s as trial `trial` on the simulator and finishes it through a
 * TrialAccumulator; every event must be accepted. The caller frees the observation. */
Observation *fixture_sim_trial(const SimCluster *sim, Schedule *s, int trial, uint64_t seed);

/* A check of one suggested schedule (trial is 1-based); fails the test when it does not hold. */
typedef void (*FixtureScheduleCheck)(const Schedule *s, const char *optimizer, int trial);

/* Runs `trials` trials of optimizer `name` on sim with seed, each suggestion validated and
 * checked by `check` (NULL: none); returns the best noiseless time of what it suggested and
 * keeps a copy of each suggestion in out[0..trials) when out is given (the caller frees). */
double fixture_tune(SimCluster *sim, const char *name, int trials, uint64_t seed, Schedule **out,
                    FixtureScheduleCheck check);

/* The text of tests/fixtures/NAME (a static buffer of 64 KiB, overwritten by the next call). */
const char *fixture_text(const char *name);

/* The whole text of tests/fixtures/NAME, any size, asserted; the caller frees it. */
char *fixture_read(const char *name);

/* The built-in job catalogue, asserted; the caller frees it. */
Catalogue *fixture_catalogue(void);

/* sched_new with the default configuration but `policy` and the cluster: the node groups
 * (n_groups > 0) or `nodes` nodes of 4 GPUs; asserted. The caller frees it. */
SchedState *fixture_sched(const Catalogue *cat, const char *policy, int nodes,
                          const SchedNodeGroup *groups, size_t n_groups);

/* The doubling policy on 2 nodes of 2 GPUs with one job submitted at t=0: "j0", cifar10,
 * asking 2 GPUs, batch 128; asserted. The state the live driver's tests start from. The
 * caller frees it. */
SchedState *fixture_doubling_with_j0(const Catalogue *cat);

/* Asserts that every GPU of every node is held by at most one job, that no job holds a GPU
 * past its node's own count, and that the jobs' GPU counts agree with the nodes'. */
void fixture_sched_capacity(const SchedState *s);

/* A suite whose tests see `cat`, the built-in catalogue, loaded before each and freed after. */
#define FIXTURE_CATALOGUE_SUITE(suite)                                                             \
    static Catalogue *cat;                                                                         \
    static void suite##_catalogue_init(void)                                                       \
    {                                                                                              \
        cat = fixture_catalogue();                                                                 \
    }                                                                                              \
    static void suite##_catalogue_fini(void)                                                       \
    {                                                                                              \
        catalogue_free(cat);                                                                       \
    }                                                                                              \
    TestSuite(suite, .init = suite##_catalogue_init, .fini = suite##_catalogue_fini)

#endif
