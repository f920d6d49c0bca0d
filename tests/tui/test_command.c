/* The console's `:` commands (tui/command.c) on a real tuner outside a terminal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "remote/session/tune_journal.h"
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"
#include "tui/app.h"
#include "tui/command.h"
#include "tui/draw.h"

static SimCluster *sim;
static TuneJournal *tj;
static App *a;
static char dir[] = "/tmp/tunedeck-test-command-XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    sim = fixture_sim("B:googlenet");
    tj = tune_journal_new(dir);
    cr_assert_not_null(tj);
    tune_journal_set_quiet(tj, 1);
    TunerConfig cfg = {.cluster = simcluster_cluster(sim),
                       .job = simcluster_job(sim),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 3,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3},
                       .on_event = tune_journal_on_event,
                       .userdata = tj};
    Error err;
    a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->tuner = tuner_new(&cfg, &err);
    cr_assert_not_null(a->tuner, "%s", err.msg);
    TuneSetup ts = {.sim = "B:googlenet", .optimizer = "random", .launcher = "sim", .seed = 3,
                    .budget = 3};
    cr_assert_eq(tune_journal_start(tj, a->tuner, &ts, &err), 0, "%s", err.msg);
    a->journal = tj;
}

static void teardown(void)
{
    tuner_free(a->tuner);
    free(a);
    unlink(tune_journal_path(tj));
    tune_journal_free(tj);
    rmdir(dir);
    simcluster_free(sim);
}

TestSuite(command, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* Three different valid overrides queued while paused, as trials 1, 2 and 3 (ids 1-3). */
static void queue_three(void)
{
    Error err;
    Optimizer *o = optimizer_new("random", simcluster_cluster(sim), simcluster_job(sim), 9, &err);
    cr_assert_not_null(o, "%s", err.msg);
    tuner_set_paused(a->tuner, 1);
    for (int i = 0; i < 3; i++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &err), 0, "%s", err.msg);
        cr_assert_eq(tuner_override(a->tuner, sg.schedule, &err), 0, "%s", err.msg);
        suggestion_clear(&sg);
    }
    optimizer_free(o);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tuner_override_trial(a->tuner, (size_t)i), i + 1);
}

static int journal_lines_with(const char *needle)
{
    FILE *f = fopen(tune_journal_path(tj), "r");
    cr_assert_not_null(f);
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

/* `:unqueue N` takes the override its row shows as trial N out, whichever it is (X takes only
 * the last), journaled as X's drop is; the others run next, in their order. */
Test(command, unqueue_drops_the_middle_override_and_the_others_run_next_in_order)
{
    queue_three();
    cr_assert_eq(command_run(a, "unqueue 2"), 0, "%s", a->message);
    cr_assert_not(a->message_bad);
    cr_assert(strstr(a->message, "trial 2 dropped"), "%s", a->message);
    cr_assert_eq(tuner_overrides(a->tuner), 2);
    cr_assert_eq(tuner_override_id(a->tuner, 0), 1);
    cr_assert_eq(tuner_override_id(a->tuner, 1), 3);
    cr_assert_eq(tuner_override_trial(a->tuner, 1), 2, "the third moved up");
    cr_assert_eq(journal_lines_with("\"event\":\"override_dropped\",\"override\":2"), 1);

    tuner_set_paused(a->tuner, 0);
    Error err;
    cr_assert_eq(tuner_run_blocking(a->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(a->tuner), 3);
    cr_assert_eq(tuner_trial(a->tuner, 0)->override_id, 1);
    cr_assert_eq(tuner_trial(a->tuner, 1)->override_id, 3);
    cr_assert_not(tuner_trial(a->tuner, 2)->overridden, "then the optimizer's own");
}

Test(command, unqueue_refuses_a_trial_that_is_not_queued_and_keeps_the_queue)
{
    cr_assert_eq(command_run(a, "unqueue 1"), -1);
    cr_assert(a->message_bad);
    cr_assert(strstr(a->message, "no override is queued"), "%s", a->message);

    queue_three();
    const char *bad[] = {"unqueue 4", "unqueue 0", "unqueue", "unqueue two", "unqueue 2 3",
                         "unqueue -2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        a->message_bad = 0;
        cr_assert_eq(command_run(a, bad[i]), -1, "%s", bad[i]);
        cr_assert(a->message_bad, "%s", bad[i]);
        cr_assert(strstr(a->message, ":unqueue: "), "%s: %s", bad[i], a->message);
        cr_assert_eq(tuner_overrides(a->tuner), 3, "%s dropped one", bad[i]);
    }
    command_run(a, "unqueue 4");
    cr_assert_str_eq(a->message, ":unqueue: trial 4 is not queued; the queued overrides are "
                                 "trials 1-3");
    cr_assert_eq(journal_lines_with("override_dropped"), 0);
}

/* Regression: with unqueue in its list the unknown command's message grew past two rows at
 * 80 columns (the status line and the row above it, all a message gets): its end, how to get
 * help, was cut. A typo of up to 16 characters keeps it in two. */
Test(command, an_unknown_command_says_what_is_expected_in_two_rows_at_80_columns)
{
    const char *typos[] = {"frobnicate", "unqueue-override"};
    for (size_t i = 0; i < sizeof typos / sizeof typos[0]; i++) {
        cr_assert_eq(command_run(a, typos[i]), -1);
        cr_assert(a->message_bad);
        cr_assert(strstr(a->message, "unknown command"), "%s", a->message);
        cr_assert(strstr(a->message, "unqueue"), "%s", a->message);
        cr_assert_leq(draw_wrapped_lines(80, 3, a->message), 2, "%s", a->message);
    }
}
