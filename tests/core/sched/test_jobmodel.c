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
