/* The shared unit-test fixtures: simulator, simulated trial, an optimizer's run, fixture
 * files, catalogue, the scheduler's capacity check. */
#include "tests/support/fixtures.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/readall.h"
#include "core/opt/optimizer.h"

Cluster *fixture_cluster(const char *name, const MachineType *type, size_t n_machines)
{
    Cluster *c = cluster_new(name);
    cr_assert_not_null(c);
    Error e = {0};
    long t = cluster_add_type(c, type, &e);
    cr_assert(t >= 0, "%s", e.msg);
    for (size_t i = 0; i < n_machines; i++) {
        char machine[96];
        snprintf(machine, sizeof machine, "%s-%zu", type->name, i);
        cr_assert_eq(cluster_add_machine(c, machine, NULL, (size_t)t, &e), 0, "%s", e.msg);
    }
    cluster_finish(c);
    return c;
}

Cluster *fixture_cluster_json(const char *inventory)
{
    cJSON *root = cJSON_Parse(inventory);
    cr_assert_not_null(root, "inventory text is not JSON");
    Error err;
    Cluster *c = cluster_from_json(root, "inv", &err);
    cJSON_Delete(root);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

Schedule *fixture_schedule(const Cluster *c, int batch)
{
    JobSpec job = {0};
    snprintf(job.name, sizeof job.name, "j");
    job.batch = batch;
    job.model_mb = 1;
    job.iterations = 2;
    Schedule *s = schedule_new(c, &job);
    cr_assert_not_null(s);
    return s;
}

SimCluster *fixture_sim(const char *spec)
{
    Error e = {0};
    SimCluster *sim = simcluster_new(spec, &e);
    cr_assert_not_null(sim, "%s: %s", spec, e.msg);
    return sim;
}

static void to_accumulator(void *acc, const TrialEvent *ev)
{
    Error e = {0};
    cr_assert_eq(trial_accumulator_add(acc, ev, &e), 0, "%s", e.msg);
}

Observation *fixture_sim_trial(const SimCluster *sim, Schedule *s, int trial, uint64_t seed)
{
    s->trial = trial;
    TrialAccumulator *acc = trial_accumulator_new(s);
    cr_assert_not_null(acc);
    simcluster_run(sim, s, seed, to_accumulator, acc);
    Observation *o = trial_accumulator_finish(acc);
    trial_accumulator_free(acc);
    cr_assert_not_null(o);
    return o;
}

const char *fixture_text(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", TUNEDECK_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

char *fixture_read(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", TUNEDECK_SOURCE_DIR, name);
    Error e = {0};
    char *text = readall_file(path, 0, NULL, &e);
    cr_assert_not_null(text, "%s", e.msg);
    return text;
}

double fixture_tune(SimCluster *sim, const char *name, int trials, uint64_t seed, Schedule **out,
                    FixtureScheduleCheck check)
{
    Error e;
    Optimizer *o = optimizer_new(name, simcluster_cluster(sim), simcluster_job(sim), seed, &e);
    cr_assert_not_null(o, "%s: %s", name, e.msg);
    double best = INFINITY;
    for (int t = 1; t <= trials; t++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "%s trial %d: %s", name, t, e.msg);
        cr_assert_eq(schedule_validate(sg.schedule, &e), 0, "%s trial %d: %s", name, t, e.msg);
        if (check)
            check(sg.schedule, name, t);
        Observation *ob = fixture_sim_trial(sim, sg.schedule, t, seed);
        optimizer_observe(o, ob);
        best = fmin(best, simcluster_noiseless_time(sim, sg.schedule));
        if (out)
            out[t - 1] = schedule_copy(sg.schedule);
        observation_free(ob);
        suggestion_clear(&sg);
    }
    optimizer_free(o);
    return best;
}

Catalogue *fixture_catalogue(void)
{
    Error e = {0};
    Catalogue *cat = catalogue_load(TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR, &e);
    cr_assert_not_null(cat, "%s", e.msg);
    return cat;
}

SchedState *fixture_sched(const Catalogue *cat, const char *policy, int nodes,
                          const SchedNodeGroup *groups, size_t n_groups)
{
    SchedConfig c;
    sched_config_default(&c);
    c.policy = policy;
    if (n_groups) {
        c.groups = groups;
        c.n_groups = n_groups;
    } else {
        c.nodes = nodes;
    }
    Error e;
    SchedState *s = sched_new(&c, cat, &e);
    cr_assert_not_null(s, "%s", e.msg);
    return s;
}

SchedState *fixture_doubling_with_j0(const Catalogue *cat)
{
    Error e;
    SchedConfig cfg;
    sched_config_default(&cfg);
    cfg.nodes = 2;
    cfg.gpus_per_node = 2;
    cfg.policy = "doubling";
    SchedState *s = sched_new(&cfg, cat, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 2, 128}, &e), 0, "%s",
                 e.msg);
    return s;
}

void fixture_sched_capacity(const SchedState *s)
{
    int owners[64];
    int *held = calloc(sched_job_count(s) + 1, sizeof *held);
    for (int n = 0; n < sched_node_count(s); n++) {
        sched_node_gpus(s, n, owners, 64);
        for (int g = 0; g < 64; g++) {
            if (g >= sched_node_gpu_count(s, n))
                cr_assert_eq(owners[g], -1, "node %d: GPU %d past its count is held", n, g);
            else if (owners[g] >= 0)
                held[owners[g]]++;
        }
    }
    for (size_t j = 0; j < sched_job_count(s); j++) {
        SchedJobInfo info;
        sched_job_info(s, j, &info);
        cr_assert_eq(held[j], info.gpus, "job %s holds %d GPUs on nodes, says %d", info.name,
                     held[j], info.gpus);
    }
    free(held);
}
