#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

/* An allreduce schedule: no PS role, the inputs sum to the batch, only workers hold inputs. */
static void assert_allreduce_schedule(const Schedule *s, const char *name, int t)
{
    cr_assert_eq(schedule_count_ps(s), 0, "%s trial %d has PS roles", name, t);
    long total = 0;
    for (size_t m = 0; m < s->cluster->n_machines; m++) {
        int x = schedule_machine_inputs(s, m);
        cr_assert(s->worker[m] || x == 0, "%s trial %d: inputs on a non-worker", name, t);
        total += x;
    }
    cr_assert_eq(total, s->job.batch, "%s trial %d", name, t);
}

Test(opt_allreduce, bespoke_reaches_best_known_within_ten_trials_on_mixed_gpus)
{
    SimCluster *sim = fixture_sim("M1:resnet50");
    double best_known = simcluster_best_known(sim, NULL);
    cr_assert(isfinite(best_known));
    double bespoke = fixture_tune(sim, "bespoke", 10, 1, NULL, assert_allreduce_schedule);
    double uniform = fixture_tune(sim, "uniform-devices", 1, 1, NULL, assert_allreduce_schedule);
    cr_assert(bespoke <= 1.10 * best_known, "bespoke %.4f s vs best known %.4f s", bespoke,
              best_known);
    cr_assert(bespoke < uniform, "bespoke %.4f s, uniform split %.4f s", bespoke, uniform);
    simcluster_free(sim);
}

Test(opt_allreduce, every_optimizer_makes_valid_allreduce_schedules)
{
    SimCluster *sim = fixture_sim("M2:googlenet");
    const char *names[] = {"uniform-devices", "uniform-gpus", "random", "gp", "bespoke"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        fixture_tune(sim, names[i], 4, 2, NULL, assert_allreduce_schedule);
    simcluster_free(sim);
}

Test(opt_allreduce, same_seed_same_suggestions)
{
    SimCluster *sim = fixture_sim("M3:googlenet:4096");
    Schedule *a[5], *b[5];
    fixture_tune(sim, "bespoke", 5, 7, a, assert_allreduce_schedule);
    fixture_tune(sim, "bespoke", 5, 7, b, assert_allreduce_schedule);
    for (int i = 0; i < 5; i++) {
        cr_assert(schedule_equal(a[i], b[i]), "trial %d differs", i + 1);
        schedule_free(a[i]);
        schedule_free(b[i]);
    }
    simcluster_free(sim);
}

Test(opt_allreduce, bespoke_takes_its_allreduce_form_for_allreduce_jobs_only)
{
    SimCluster *ar = fixture_sim("M1:googlenet"), *ps = fixture_sim("A:alexnet");
    Error e = {0};
    Optimizer *a = optimizer_new("bespoke", simcluster_cluster(ar), simcluster_job(ar), 1, &e);
    Optimizer *p = optimizer_new("bespoke", simcluster_cluster(ps), simcluster_job(ps), 1, &e);
    cr_assert(a && p, "%s", e.msg);
    cr_assert_neq(a->kind, p->kind);
    cr_assert_eq(p->kind, optimizer_find("bespoke"));
    cr_assert_str_eq(a->kind->name, "bespoke", "sessions and journals name it as asked");
    optimizer_free(a);
    optimizer_free(p);
    simcluster_free(ar);
    simcluster_free(ps);
}

Test(opt_allreduce, predict_reports_parts_consistent_with_the_schedule)
{
    SimCluster *sim = fixture_sim("M2:resnet50");
    Error e;
    Optimizer *o = optimizer_new("bespoke", simcluster_cluster(sim), simcluster_job(sim), 4, &e);
    cr_assert_not_null(o, "%s", e.msg);
    for (int t = 1; t <= 4; t++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &e), 0, "%s", e.msg);
        cr_assert(sg.has_prediction);
        cr_assert(isfinite(sg.mean_s) && sg.p10_s <= sg.mean_s * 1.5 && sg.p10_s <= sg.p90_s);
        const Cluster *c = simcluster_cluster(sim);
        for (size_t m = 0; m < c->n_machines; m++)
            if (!sg.schedule->worker[m])
                cr_assert_float_eq(sg.machine_mean_s[m], 0.0, 0);
        for (size_t d = 0; d < c->n_devices; d++)
            cr_assert((sg.schedule->inputs[d] > 0) == (sg.device_mean_s[d] > 0));
        Observation *ob = fixture_sim_trial(sim, sg.schedule, t, 4);
        optimizer_observe(o, ob);
        observation_free(ob);
        suggestion_clear(&sg);
    }
    /* After trials, a schedule's prediction lands near the simulator's truth. */
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    double w[32];
    for (size_t d = 0; d < 24; d++)
        w[d] = d < 8 ? 3 : 1; /* the V100 nodes three shares, the T4 nodes one */
    schedule_split_integer(w, 24, s->job.batch, s->inputs);
    memset(s->worker, 1, 6);
    Suggestion p;
    cr_assert_eq(optimizer_predict(o, s, &p, &e), 0, "%s", e.msg);
    double truth = simcluster_noiseless_time(sim, s);
    cr_assert(fabs(p.mean_s / truth - 1) < 0.2, "predicted %.4f s, truth %.4f s", p.mean_s, truth);
    s->ps[0] = 1;
    Suggestion bad;
    cr_assert_eq(optimizer_predict(o, s, &bad, &e), -1, "a PS role is refused");
    suggestion_clear(&p);
    schedule_free(s);
    optimizer_free(o);
    simcluster_free(sim);
}
