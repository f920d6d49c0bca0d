#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"

static Catalogue *cat;

static void setup(void)
{
    Error e;
    cat = catalogue_load(TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR, &e);
    cr_assert_not_null(cat, "%s", e.msg);
}

static void teardown(void)
{
    catalogue_free(cat);
}

TestSuite(catalogue, .init = setup, .fini = teardown);

Test(catalogue, holds_six_measured_models_and_the_seed_resnet)
{
    const char *names[] = {"bert", "cifar10", "deepspeech2", "imagenet",
                           "ncf",  "yolov3",  "resnet110"};
    const int epochs[] = {2, 100, 80, 90, 10, 50};
    for (int i = 0; i < 7; i++) {
        const AppModel *a = catalogue_find(cat, names[i]);
        cr_assert_not_null(a, "%s", names[i]);
        if (i < 6)
            cr_assert_eq(a->epochs, epochs[i], "%s", names[i]);
    }
    cr_assert_eq(catalogue_find(cat, "cifar10")->init_batch, 128);
    cr_assert_eq(catalogue_find(cat, "yolov3")->max_local, 8);
    cr_assert_null(catalogue_find(cat, "alexnet"));
}

Test(catalogue, measured_placement_is_read_back_and_rotations_are_equal)
{
    /* imagenet/placements.csv: "14,40,0.48420779705047606,..." */
    const AppModel *a = catalogue_find(cat, "imagenet");
    int p[] = {1, 4}, q[] = {4, 0, 1};
    double s1, y1, s2, y2;
    app_step_time(a, p, 2, 40, &s1, &y1);
    app_step_time(a, q, 3, 40, &s2, &y2);
    cr_assert_float_eq(s1, 0.48420779705047606, 1e-12);
    cr_assert_float_eq(y1, 0.24210450897216798, 1e-12);
    cr_assert_float_eq(s1, s2, 1e-15);
}

Test(catalogue, unmeasured_placement_interpolates_between_neighbours)
{
    /* 5 nodes lies between the 4-node placements and the 6-node scalability runs. */
    const AppModel *a = catalogue_find(cat, "cifar10");
    int p5[] = {4, 4, 4, 4, 4};
    double s, y;
    app_step_time(a, p5, 5, 64, &s, &y);
    cr_assert(isfinite(s) && s > 0 && y >= 0 && y <= s, "step %g sync %g", s, y);
}

Test(catalogue, gain_matches_the_measured_progress_per_iteration)
{
    /* cifar10 validation-1024: epoch 2 runs from progress 391.09 (iteration 172) to 782.78
     * (iteration 307): 2.901 init-batch steps per step; the gain formula must agree. */
    const AppModel *a = catalogue_find(cat, "cifar10");
    double observed = (782.78243115291 - 391.0900463196891) / (307 - 172);
    cr_assert_float_eq(app_gain(a, 1024, 1), observed, 0.01 * observed);
    cr_assert_float_eq(app_gain(a, 128, 5), 1.0, 1e-12);
}

Test(catalogue, epochs_follow_the_validation_rows)
{
    const AppModel *a = catalogue_find(cat, "bert");
    cr_assert_eq(app_epoch_at(a, 0), 0);
    cr_assert_eq(app_epoch_at(a, 7386), 0);
    cr_assert_eq(app_epoch_at(a, 7388), 1);
    cr_assert_float_eq(app_total_progress(a), 14774.0, 1e-9);
}

Test(catalogue, missing_folder_is_reported)
{
    Error e;
    cr_assert_null(catalogue_load("/nonexistent", &e));
    cr_assert(strstr(e.msg, "/nonexistent/traces/bert"), "%s", e.msg);
}

Test(catalogue, no_folder_is_an_error_not_a_guess)
{
    Error e;
    cr_assert_null(catalogue_load(NULL, &e));
    cr_assert(strstr(e.msg, "no data folder"), "%s", e.msg);
}

/* A placements file cut to its header measured nothing: it was taken, leaving the model's
 * batch range empty (smallest 2^30, largest 0), and a run then divided by zero
 * (core/sched/jobmodel.c, UBSan) or waited a simulated day for a job no policy could place. */
Test(catalogue, a_trace_without_measurements_is_refused_by_file)
{
    char dir[] = "/tmp/td-catalogue.XXXXXX", cmd[512], path[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp -r '%s/%s/.' '%s'", TUNEDECK_SOURCE_DIR, CATALOGUE_SUBDIR, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/traces/ncf/placements.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("placement,local_bsz,step_time,sync_time\n", f);
    fclose(f);
    Error e;
    Catalogue *c = catalogue_load(dir, &e);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_null(c, "a placements file with no rows was accepted");
    cr_assert(strstr(e.msg, "ncf/placements.csv") && strstr(e.msg, "no measurement"), "%s",
              e.msg);
}
