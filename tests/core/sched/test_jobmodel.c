#include <criterion/criterion.h>

#include "core/sched/catalogue.h"
#include "core/sched/jobmodel.h"
#include "tests/support/fixtures.h"

FIXTURE_CATALOGUE_SUITE(jobmodel);

Test(jobmodel, fixed_batch_splits_with_accumulation)
{
    /* yolov3 holds at most 8 samples per GPU: batch 64 on 4 GPUs is 16 each = 2 × 8. */
    const AppModel *a = catalogue_find(cat, "yolov3");
    JobConfig c;
    cr_assert_eq(jobmodel_fixed(a, 64, 4, &c), 0);
    cr_assert_eq(c.batch, 64);
    cr_assert_eq(c.accum, 1);
    cr_assert_eq(c.atomic, 8);
    /* 64 samples over 32 GPUs is 2 each, below the measured minimum of 4 */
    cr_assert_eq(jobmodel_fixed(a, 64, 32, &c), -1);
    cr_assert_eq(jobmodel_max_gpus(a, 64), 16);
}

Test(jobmodel, seed_model_keeps_128_per_gpu)
{
    const AppModel *a = catalogue_find(cat, "resnet110");
    JobConfig c;
    double r;
    StepSource src = {a, NULL, 8};
    cr_assert_eq(jobmodel_best(&src, 4, 0, &c, &r), 0);
    cr_assert_eq(c.batch, 512);
    cr_assert_eq(jobmodel_max_gpus(a, 0), 8);
}

Test(jobmodel, best_batch_is_no_worse_than_the_initial_one)
{
    const AppModel *a = catalogue_find(cat, "cifar10");
    StepSource src = {a, NULL, 4};
    for (int w = 1; w <= 16; w *= 2) {
        JobConfig best, init;
        double rb;
        cr_assert_eq(jobmodel_best(&src, w, 20, &best, &rb), 0);
        if (jobmodel_fixed(a, 128, w, &init) == 0)
            cr_assert_geq(rb, jobmodel_rate_packed(&src, &init, w, 20) * (1 - 1e-12), "w=%d", w);
    }
}

/* Bug: the out-parameter gave the whole step with its accumulation micro-steps, and the
 * simulator fed it to a job's own throughput fit as the time of one micro-step (of
 * `atomic` samples per GPU). imagenet's batch 6400 on 1, 2, 4, 8 GPUs is 32, 16, 8, 4
 * micro-steps of 200: the "time" fell with the GPUs at a fixed per-GPU batch, the fit put
 * every compute term at 0, and doubling-explore never gave the job a GPU again. */
Test(jobmodel, the_micro_step_time_does_not_count_accumulation)
{
    const AppModel *a = catalogue_find(cat, "imagenet");
    StepSource src = {a, NULL, 4};
    int one[1] = {1}, four[1] = {4};
    JobConfig c;
    cr_assert_eq(jobmodel_fixed(a, 6400, 1, &c), 0);
    cr_assert_gt(c.accum, 0, "batch 6400 on 1 GPU accumulates");
    JobConfig single = {c.atomic, c.atomic, 0};
    double micro, alone;
    jobmodel_rate(&src, &c, one, 1, 0, &micro);
    jobmodel_rate(&src, &single, one, 1, 0, &alone);
    cr_assert_float_eq(micro, alone, 1e-12, "micro-step %g s, one step of %d: %g s", micro,
                       c.atomic, alone);
    double step, sync;
    app_step_time(a, four, 1, c.atomic, &step, &sync);
    cr_assert_eq(jobmodel_fixed(a, 6400, 4, &c), 0);
    jobmodel_rate(&src, &c, four, 1, 0, &micro);
    cr_assert_float_eq(micro, step, 1e-12, "4 GPUs: micro-step %g s, measured %g s", micro, step);
}
