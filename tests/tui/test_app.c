/* The console's App outside a terminal (tui/app.c): what pauses the tuner. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/fixtures.h"
#include "tui/app.h"

static SimCluster *sim;
static App *a;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 2,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3}};
    Error err;
    a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->tuner = tuner_new(&cfg, &err);
    cr_assert_not_null(a->tuner, "%s", err.msg);
}

static void teardown(void)
{
    tuner_free(a->tuner);
    free(a);
    simcluster_free(sim);
}

TestSuite(app, .init = setup, .fini = teardown, .timeout = 30);

/* Space twice during the resume's stop of leftovers must not let trial 1 start (its
 * `started` line would come before the stop's lines in the journal). */
Test(app, the_operators_resume_keeps_the_stop_hold_and_the_slurm_hold)
{
    a->stop_hold = 1;
    tuner_set_paused(a->tuner, 1);
    app_set_pause(a, 1);
    app_set_pause(a, 0);
    cr_assert(app_trials_held(a));
    cr_assert(tuner_paused(a->tuner), "held by the stop, whatever the operator pressed");

    a->stop_hold = 0;
    a->slurm_hold = 1;
    app_set_pause(a, 1);
    app_set_pause(a, 0);
    cr_assert(tuner_paused(a->tuner), "held while slurmctld is away");

    a->slurm_hold = 0;
    app_set_pause(a, 0);
    cr_assert_not(app_trials_held(a));
    cr_assert_not(tuner_paused(a->tuner), "no hold left: the operator's resume runs trials");
    app_set_pause(a, 1);
    cr_assert(tuner_paused(a->tuner), "the operator's pause alone holds");
}
