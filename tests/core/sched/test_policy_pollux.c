#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "core/sched/policy.h"

/* Sublinear speeds, one exponent per job: w^k / (1 + 0.05 w). */
static double pow_speed(void *ud, size_t i, int w)
{
    const double *k = ud;
    return w <= 0 ? 0 : pow(w, k[i]) / (1 + 0.05 * w);
}

/* The paper's objective, written out independently of the policy: the sum over jobs of
 * 1 / (speedup / node_gpus + 1e-3), speedup = speed(w) / speed(fair share), discounted by
 * the restart factor when w differs from the current allocation. Lower is better. */
static double objective(const PolicyInput *in, const int *g)
{
    int fair = (in->capacity + (int)in->n - 1) / (int)in->n;
    double sum = 0;
    for (size_t i = 0; i < in->n; i++) {
        const PolicyJob *j = &in->jobs[i];
        int wf = fair < j->max_gpus ? fair : j->max_gpus;
        double x = g[i] ? in->speed(in->ud, i, g[i]) / in->speed(in->ud, i, wf) : 0;
        if (g[i] != j->cur_gpus)
            x *= fmax(j->age_s - j->n_restarts * in->resize_cost_s, 0) /
                 (j->age_s + in->resize_cost_s);
        sum += 1 / (x / in->node_gpus + 1e-3);
    }
    return sum;
}

/* Smallest objective over every allocation within capacity and each job's cap. */
static double brute(const PolicyInput *in, const int *cap, int *g, size_t i, int left)
{
    if (i == in->n)
        return objective(in, g);
    double best = INFINITY;
    for (int w = 0; w <= cap[i] && w <= left; w++) {
        g[i] = w;
        best = fmin(best, brute(in, cap, g, i + 1, left - w));
    }
    g[i] = 0;
    return best;
}

Test(policy_pollux, the_dynamic_program_reaches_the_exhaustive_optimum)
{
    srand(11);
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + (size_t)(rand() % 4);
        PolicyJob jobs[4];
        double k[4];
        int cap[4], capacity = 1 + rand() % 10;
        for (size_t i = 0; i < n; i++) {
            k[i] = 0.2 + 0.8 * rand() / (double)RAND_MAX;
            jobs[i] = (PolicyJob){.cur_gpus = rand() % 3,
                                  .max_gpus = 1 + rand() % 8,
                                  .remaining = 1000,
                                  .age_s = 60.0 * (1 + rand() % 20),
                                  .n_restarts = (size_t)(rand() % 3),
                                  .most_gpus_held = 1 + rand() % 4};
            cap[i] = 2 * jobs[i].most_gpus_held;
            if (cap[i] > jobs[i].max_gpus)
                cap[i] = jobs[i].max_gpus;
        }
        PolicyInput in = {jobs, n, capacity, 0, 30, pow_speed, k, 4};
        int g[4], tmp[4] = {0};
        cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, g), 0);
        int used = 0;
        for (size_t i = 0; i < n; i++) {
            cr_assert_leq(g[i], cap[i], "job %zu: %d GPUs over its cap %d", i, g[i], cap[i]);
            used += g[i];
        }
        cr_assert_leq(used, capacity);
        double opt = brute(&in, cap, tmp, 0, capacity);
        cr_assert_leq(objective(&in, g), opt * (1 + 1e-12), "trial %d: %g vs optimum %g", trial,
                      objective(&in, g), opt);
    }
}

Test(policy_pollux, a_job_grows_at_most_to_twice_what_it_ran_on)
{
    double k[] = {1.0};
    PolicyJob j = {.max_gpus = 64, .remaining = 1e6, .age_s = 600};
    PolicyInput in = {&j, 1, 64, 0, 30, pow_speed, k, 4};
    int g;
    cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, &g), 0);
    cr_assert_eq(g, 1, "a job that never ran gets one GPU, found %d", g);
    j.most_gpus_held = j.cur_gpus = 4;
    cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, &g), 0);
    cr_assert_eq(g, 8, "one that ran on 4 may try 8, found %d", g);
}

Test(policy_pollux, power_mean_minus_one_spreads_gpus_over_jobs)
{
    /* Perfectly linear jobs: total goodput is the same whoever holds the GPUs; p = -1
     * prefers that every job makes progress. */
    double k[] = {1.0, 1.0, 1.0};
    PolicyJob jobs[3];
    for (int i = 0; i < 3; i++)
        jobs[i] = (PolicyJob){
            .max_gpus = 64, .remaining = 1e6, .age_s = 600, .most_gpus_held = 32, .cur_gpus = 0};
    PolicyInput in = {jobs, 3, 6, 0, 30, pow_speed, k, 4};
    int g[3];
    cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, g), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(g[i], 2, "job %d: expected 2 GPUs, found %d", i, g[i]);
}

Test(policy_pollux, restarts_weigh_against_a_young_jobs_small_gain)
{
    /* A job on 2 GPUs, 1 minute old, restarted once: going to 4 would gain ~2% goodput,
     * but the restart factor (60 - 30) / (60 + 30) = 1/3 outweighs it. */
    double k[] = {0.15};
    PolicyJob j = {.max_gpus = 64,
                   .remaining = 1e6,
                   .age_s = 60,
                   .n_restarts = 1,
                   .most_gpus_held = 2,
                   .cur_gpus = 2};
    PolicyInput in = {&j, 1, 4, 0, 30, pow_speed, k, 4};
    int g;
    cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, &g), 0);
    cr_assert_eq(g, 2, "expected the job to stay on 2 GPUs, found %d", g);
    j.age_s = 1e6; /* an old job pays almost nothing for the same restart */
    cr_assert_eq(policy_decide(&POLICY_POLLUX, &in, &g), 0);
    cr_assert_eq(g, 4, "expected an old job to grow to 4, found %d", g);
}
