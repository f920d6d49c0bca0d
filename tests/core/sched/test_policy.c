#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "core/model/allreduce.h"
#include "core/sched/policy.h"

/* The seed's §4.2 case: weak scaling with binary-block allreduce, where 8 → 9 GPUs is a
 * loss (a lone GPU exchanges a whole vector) but 8 → 16 is a large gain. */
static double bb_speed(void *ud, size_t i, int w)
{
    (void)ud, (void)i;
    double steps, factor;
    allreduce_features(ALLREDUCE_DOUBLING, w, &steps, &factor);
    return w / (0.4 + 0.3 * factor + 0.01 * steps);
}

static PolicyInput one_job(PolicyJob *j, int capacity)
{
    *j = (PolicyJob){.requested_gpus = 1, .max_gpus = 64, .remaining = 1e5};
    return (PolicyInput){j, 1, capacity, 0, 30, bb_speed, NULL, 0};
}

Test(policy, doubling_reaches_16_where_plus_one_steps_stall)
{
    cr_assert_lt(bb_speed(NULL, 0, 9), bb_speed(NULL, 0, 8));
    PolicyJob j;
    PolicyInput in = one_job(&j, 16);
    int g = 0;
    cr_assert_eq(policy_decide(&POLICY_DOUBLING, &in, &g), 0);
    cr_assert_eq(g, 16);
    cr_assert_eq(policy_decide(&POLICY_DOUBLING_SEED, &in, &g), 0);
    cr_assert_eq(g, 16, "the seed's own rule reaches 16 too, found %d", g);
    cr_assert_eq(policy_decide(&POLICY_OPTIMUS, &in, &g), 0);
    cr_assert_lt(g, 8, "optimus' +1 steps stop before 8, found %d", g);
}

static double rand_speed(void *ud, size_t i, int w)
{
    const double *k = ud;
    return w <= 0 ? 0 : pow(w, k[i]) / (1 + 0.05 * w);
}

Test(policy, allocations_never_exceed_capacity_and_respect_pins)
{
    srand(3);
    const char *const *names = policy_names();
    for (int trial = 0; trial < 300; trial++) {
        size_t n = 1 + (size_t)(rand() % 20);
        PolicyJob jobs[20];
        double k[20];
        int cap = 1 + rand() % 64, pinned_sum = 0;
        for (size_t i = 0; i < n; i++) {
            k[i] = 0.3 + 0.7 * rand() / (double)RAND_MAX;
            jobs[i] = (PolicyJob){.submit_s = (double)i,
                                  .attained_gpu_s = rand() % 100000,
                                  .requested_gpus = 1 + rand() % 16,
                                  .cur_gpus = rand() % 4,
                                  .max_gpus = 1 + rand() % 64,
                                  .remaining = 1 + rand() % 100000};
            if (rand() % 5 == 0 && pinned_sum + 2 <= cap) {
                jobs[i].pinned = 2;
                pinned_sum += 2;
            }
        }
        PolicyInput in = {jobs, n, cap, 0, 30, rand_speed, k, 0};
        for (const char *const *p = names; *p; p++) {
            int g[20], sum = 0;
            cr_assert_eq(policy_decide(policy_find(*p), &in, g), 0);
            for (size_t i = 0; i < n; i++) {
                cr_assert_geq(g[i], 0);
                /* a pin holds exactly, up to what the job can use (a pin made before a
                 * drain or a policy switch shrank that) */
                int pin = jobs[i].pinned < jobs[i].max_gpus ? jobs[i].pinned : jobs[i].max_gpus;
                if (jobs[i].pinned)
                    cr_assert_eq(g[i], pin, "%s ignored a pin", *p);
                else
                    cr_assert_leq(g[i], jobs[i].max_gpus, "%s over a job's max", *p);
                sum += g[i];
            }
            cr_assert_leq(sum, cap, "%s: %d GPUs on a cluster of %d", *p, sum, cap);
        }
    }
}

/* Bug: tiresias waited for ever for a job that asked for more GPUs than the capacity. */
Test(policy, tiresias_gives_a_job_asking_more_than_the_capacity_all_of_it)
{
    PolicyJob jobs[2] = {{.submit_s = 0, .requested_gpus = 8, .max_gpus = 16, .remaining = 1e5},
                         {.submit_s = 1, .requested_gpus = 1, .max_gpus = 16, .remaining = 1e5}};
    PolicyInput in = {jobs, 2, 4, 0, 30, bb_speed, NULL, 0};
    int g[2];
    cr_assert_eq(policy_decide(&POLICY_TIRESIAS, &in, g), 0);
    cr_assert_eq(g[0], 4, "asked 8 of 4: got %d", g[0]);
    cr_assert_eq(g[1], 0, "the first in line takes the cluster, found %d", g[1]);
}

/* A pin or an exploration stage larger than the capacity runs at the capacity. */
Test(policy, pins_and_stages_larger_than_the_capacity_get_the_capacity)
{
    for (int stage = 0; stage <= 1; stage++) {
        PolicyJob j = {.requested_gpus = 1, .max_gpus = 16, .remaining = 1e5};
        if (stage)
            j.explore_gpus = 8;
        else
            j.pinned = 8;
        PolicyInput in = {&j, 1, 4, 0, 30, bb_speed, NULL, 0};
        int g = 0;
        cr_assert_eq(policy_decide(&POLICY_DOUBLING_EXPLORE, &in, &g), 0);
        cr_assert_eq(g, 4, "%s of 8 on 4 GPUs: got %d", stage ? "a stage" : "a pin", g);
    }
}

Test(policy, tiresias_prefers_least_attained_service)
{
    PolicyJob jobs[2] = {
        {.submit_s = 0, .attained_gpu_s = 1e6, .requested_gpus = 4, .max_gpus = 64},
        {.submit_s = 10, .attained_gpu_s = 0, .requested_gpus = 4, .max_gpus = 64}};
    PolicyInput in = {jobs, 2, 4, 0, 30, rand_speed, NULL, 0};
    int g[2];
    cr_assert_eq(policy_decide(&POLICY_TIRESIAS, &in, g), 0);
    cr_assert_eq(g[0], 0);
    cr_assert_eq(g[1], 4);
}

Test(policy, fixed_n_is_first_come_first_served)
{
    PolicyJob jobs[3];
    for (int i = 0; i < 3; i++)
        jobs[i] = (PolicyJob){.submit_s = i, .requested_gpus = 1, .max_gpus = 64};
    PolicyInput in = {jobs, 3, 10, 0, 30, rand_speed, NULL, 0};
    int g[3];
    cr_assert_eq(policy_decide(&POLICY_FIXED_4, &in, g), 0);
    cr_assert_eq(g[0], 4);
    cr_assert_eq(g[1], 4);
    cr_assert_eq(g[2], 0);
}

Test(policy, names_resolve_including_the_seed_modes)
{
    cr_assert_eq(policy_find("precompute"), &POLICY_DOUBLING);
    cr_assert_eq(policy_find("exploratory"), &POLICY_DOUBLING_EXPLORE);
    cr_assert_eq(policy_find("pollux"), &POLICY_POLLUX);
    cr_assert_null(policy_find("gandiva"));
}
