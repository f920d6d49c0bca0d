/* The console's App outside a terminal (tui/app.c): what pauses the tuner. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/fixtures.h"
#include "tests/support/low_memory.h"
#include "tui/app.h"
#include "tests/support/timeout.h"

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

TestSuite(app, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

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

/* Takes every byte the address space has left, down to the smallest block, so that the next
 * allocation fails; what it took is kept (the child exits). */
static void *volatile hog; /* chained, so that no allocation is optimized away */

static void exhaust_memory(void)
{
    for (size_t size = 1 << 20; size >= 16; size /= 2)
        for (void **p; (p = malloc(size));) {
            *p = hog;
            hog = p;
        }
}

static int rebuild_without_memory(void *ud)
{
    App *app = ud;
    size_t shown = app->table.n_shown;
    exhaust_memory();
    app->message[0] = '\0';
    app_rebuild_table(app); /* crashed: its array of records went unchecked */
    if (app->table.n_shown != shown || app->table.n != shown)
        return 20;
    return strstr(app->message, "out of memory") && app->message_bad ? 0 : 21;
}

/* Regression: app_rebuild_table wrote through its malloc unchecked; without memory the
 * table keeps what it showed and the status line says why. */
Test(app, a_table_rebuild_without_memory_keeps_the_table_and_says_so)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    Error err;
    cr_assert_eq(tuner_run_blocking(a->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(a->tuner), 2);
    app_rebuild_table(a);
    cr_assert_eq(a->table.n_shown, 2);
    cr_assert_eq(low_memory_run(1 << 20, rebuild_without_memory, a), 0);
}
