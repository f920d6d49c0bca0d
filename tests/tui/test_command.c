/* The console's `:` commands (tui/command.c) on a real tuner and a real simulated scheduler,
 * outside a terminal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/opt/optimizer.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
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
    TuneSetup ts = {
        .sim = "B:googlenet", .optimizer = "random", .launcher = "sim", .seed = 3, .budget = 3};
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
    const char *bad[] = {"unqueue 4",   "unqueue 0",   "unqueue",
                         "unqueue two", "unqueue 2 3", "unqueue -2"};
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

/* Regression: ":budget N" set the budget and said so only in the log pane; the status line,
 * where every other command's outcome shows, stayed blank. */
Test(command, budget_says_on_the_status_line_what_it_set)
{
    cr_assert_eq(command_run(a, "budget 10"), 0, "%s", a->message);
    cr_assert_eq(tuner_budget(a->tuner), 10);
    cr_assert_not(a->message_bad);
    cr_assert_str_eq(a->message, "budget set to 10 trials (0 run so far)");
}

/* Regression: ":budget N" below the trials the queued overrides will run as left them
 * without a trial and said nothing of it (the session ended "done" with them queued). */
Test(command, budget_below_the_queued_overrides_says_which_wait_past_it)
{
    queue_three(); /* trials 1-3 */
    cr_assert_eq(command_run(a, "budget 1"), 0, "%s", a->message);
    cr_assert_not(a->message_bad);
    cr_assert_str_eq(a->message, "budget set to 1 trial (0 run so far): 2 of the 3 queued "
                                 "overrides wait past it (:budget 3 runs them)");
    cr_assert_eq(command_run(a, "budget 2"), 0, "%s", a->message);
    cr_assert_str_eq(a->message, "budget set to 2 trials (0 run so far): 1 of the 3 queued "
                                 "overrides waits past it (:budget 3 runs it)");
    cr_assert_eq(command_run(a, "budget 3"), 0, "%s", a->message);
    cr_assert_str_eq(a->message, "budget set to 3 trials (0 run so far)");
}

/* Regression: ":budget 1" said "budget set to 1 trials", and with one override queued past it
 * "1 of the 1 queued overrides wait past it (:budget 2 runs them)". */
Test(command, budget_of_one_trial_and_one_queued_override_agree_in_number)
{
    cr_assert_eq(command_run(a, "budget 1"), 0, "%s", a->message);
    cr_assert_str_eq(a->message, "budget set to 1 trial (0 run so far)");
    Error err;
    cr_assert_eq(tuner_run_blocking(a->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(a->tuner), 1);
    Optimizer *o = optimizer_new("random", simcluster_cluster(sim), simcluster_job(sim), 9, &err);
    cr_assert_not_null(o, "%s", err.msg);
    tuner_set_paused(a->tuner, 1);
    Suggestion sg;
    cr_assert_eq(optimizer_suggest(o, &sg, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override(a->tuner, sg.schedule, &err), 0, "%s", err.msg);
    suggestion_clear(&sg);
    optimizer_free(o);
    cr_assert_eq(tuner_override_trial(a->tuner, 0), 2);
    cr_assert_eq(command_run(a, "budget 1"), 0, "%s", a->message);
    cr_assert_str_eq(a->message, "budget set to 1 trial (1 run so far): the queued override "
                                 "waits past it (:budget 2 runs it)");
}

/* Regression: the argument was read into 96 bytes, so a word typed past them was dropped and
 * ":budget 60", 90 spaces, "x" set the budget to 60 where "60 ... x" must be refused. */
Test(command, a_word_typed_far_after_the_argument_is_refused_not_dropped)
{
    char line[128];
    snprintf(line, sizeof line, "budget 60%90sx", "");
    cr_assert_eq(strlen(line), 100);
    cr_assert_eq(command_run(a, line), -1, "%s", a->message);
    cr_assert(a->message_bad);
    cr_assert(strstr(a->message, ":budget: expected a number"), "%s", a->message);
    cr_assert_eq(tuner_budget(a->tuner), 3, "the budget changed");

    char longer[200];
    snprintf(longer, sizeof longer, "filter %150sx", "");
    cr_assert_eq(command_run(a, longer), -1);
    cr_assert(strstr(a->message, "command too long: expected at most 127 characters"), "%s",
              a->message);
}

/* Regression: a command typed without its argument was told "found ''", which reads as a
 * quote lost; it is told "found nothing". */
Test(command, a_missing_argument_is_said_found_nothing)
{
    const char *words[] = {"budget", "unqueue", "converge", "plot", "sort"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        cr_assert_eq(command_run(a, words[i]), -1, "%s", words[i]);
        cr_assert(a->message_bad);
        cr_assert(strstr(a->message, ", found nothing") && !strstr(a->message, "''"), "%s",
                  a->message);
    }
    cr_assert_eq(command_run(a, "budget x"), -1);
    cr_assert(strstr(a->message, ", found 'x'"), "%s", a->message);
}

/* Regression: ":resume" while tuning ran, or ":pause" while paused, changed nothing but
 * logged "resumed" or "paused" again and said nothing on the status line; like ":pause JOB" of
 * a paused job it is refused saying so. */
Test(command, pause_or_resume_that_changes_nothing_is_refused)
{
    cr_assert_eq(command_run(a, "resume"), -1);
    cr_assert(a->message_bad);
    cr_assert_str_eq(a->message, ":resume: not paused (nothing done)");
    cr_assert_not(a->user_paused);

    a->message[0] = 0;
    a->message_bad = 0;
    cr_assert_eq(command_run(a, "pause"), 0, "%s", a->message);
    cr_assert(a->user_paused);
    cr_assert_eq(command_run(a, "pause"), -1);
    cr_assert(a->message_bad);
    cr_assert_str_eq(a->message, ":pause: already paused (nothing done)");
    cr_assert(a->user_paused);
    a->message_bad = 0;
    cr_assert_eq(command_run(a, "resume"), 0, "%s", a->message);
    cr_assert_not(a->user_paused);
}

/* The scheduler's overrides on the console's simulated cluster (16 nodes, 40 arrivals), at
 * simulated second 0 unless a test advances it. */
static App *sa;

static SimSched *sched_with(int nodes)
{
    SimSchedOptions o;
    simsched_defaults(&o);
    o.nodes = nodes;
    o.tick_ms = 0;
    o.catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR;
    Error err;
    SimSched *s = simsched_new(&o, &err);
    cr_assert_not_null(s, "%s", err.msg);
    return s;
}

static void sched_setup(void)
{
    sa = calloc(1, sizeof *sa);
    cr_assert_not_null(sa);
    sa->ss = sched_with(16);
}

static void sched_teardown(void)
{
    simsched_free(sa->ss);
    free(sa);
}

TestSuite(command_sched, .init = sched_setup, .fini = sched_teardown, .timeout = TEST_TIMEOUT_S);

/* Regression: `:undrain` of a node nobody drained said "applied at the next scheduling
 * decision" and did nothing; a second drain did the same. */
Test(command_sched, undrain_of_a_node_not_drained_says_so_and_does_nothing)
{
    SchedState *st = simsched_state_mut(sa->ss);
    cr_assert_eq(command_run(sa, "undrain node03"), -1);
    cr_assert(sa->message_bad);
    cr_assert_str_eq(sa->message, ":undrain: node03 is not drained (nothing done)");
    cr_assert_eq(sa->log_n, 0, "nothing logged as an override");

    cr_assert_eq(command_run(sa, "drain node03"), 0, "%s", sa->message);
    cr_assert_str_eq(sa->message, "drain node03: applied at the next scheduling decision");
    cr_assert(sched_node_drained(st, 3));
    cr_assert_eq(command_run(sa, "drain node03"), -1);
    cr_assert_str_eq(sa->message, ":drain: node03 is already drained (nothing done)");
    cr_assert_eq(command_run(sa, "undrain node03"), 0, "%s", sa->message);
    cr_assert_not(sched_node_drained(st, 3));
}

/* A node the backend took out (its host down, Slurm's drain) is not the operator's to give
 * back: `:undrain` says why it stays out. */
/* Regression: ":pin" or ":drain" alone was told "found ''". */
Test(command_sched, a_missing_job_or_node_is_said_found_nothing)
{
    cr_assert_eq(command_run(sa, "pin"), -1);
    cr_assert(strstr(sa->message, "expected a job name from the job list, found nothing"), "%s",
              sa->message);
    cr_assert_eq(command_run(sa, "drain"), -1);
    cr_assert(strstr(sa->message, "expected a node name (e.g. "), "%s", sa->message);
    cr_assert(strstr(sa->message, "), found nothing"), "%s", sa->message);
}

Test(command_sched, undrain_of_a_node_only_the_backend_drained_says_it_stays_out)
{
    SchedState *st = simsched_state_mut(sa->ss);
    Error err;
    cr_assert_eq(sched_drain_node_by(st, 5, SCHED_DRAIN_BACKEND, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(command_run(sa, "undrain node05"), -1);
    cr_assert(strstr(sa->message, ":undrain: node05 is out for the cluster's reason"), "%s",
              sa->message);
    cr_assert(strstr(sa->message, "not by :drain: used again when that ends (nothing done)"), "%s",
              sa->message);
    cr_assert_leq(draw_wrapped_lines(80, 3, sa->message), 2, "%s", sa->message);
    cr_assert(sched_node_drained(st, 5));
}

/* Regression: `:drain n9` of a well-formed name no node has said "expected a node name (e.g.
 * node00)", as if the name were malformed; it says the cluster has no such node, naming its
 * nodes (all when few), in the two rows a message gets at 80 columns. */
Test(command_sched, drain_of_a_name_not_in_the_cluster_names_the_clusters_nodes)
{
    cr_assert_eq(command_run(sa, "drain n9"), -1);
    cr_assert(sa->message_bad);
    cr_assert_str_eq(sa->message, ":drain: 'n9' is not a node of this cluster (its nodes: "
                                  "node00 ... node15, 16 in all)");
    cr_assert_leq(draw_wrapped_lines(80, 3, sa->message), 2, "%s", sa->message);

    simsched_free(sa->ss);
    sa->ss = sched_with(4);
    cr_assert_eq(command_run(sa, "undrain node4"), -1);
    cr_assert_str_eq(sa->message, ":undrain: 'node4' is not a node of this cluster (its nodes: "
                                  "node00, node01, node02, node03)");
}

/* Regression: `:pin` of a job still to arrive said "applied at the next scheduling decision";
 * the pin is kept on the job and holds from its arrival (as `schedule --pin` pins jobs before
 * they arrive), and the message says so and when. */
Test(command_sched, pin_of_a_job_not_arrived_says_it_holds_from_its_arrival)
{
    const SchedState *st = simsched_state(sa->ss);
    int job = sched_job_find(st, "resnet110-39");
    SchedJobInfo info;
    cr_assert_eq(sched_job_info(st, (size_t)job, &info), 0);
    cr_assert_eq(info.state, SCHED_JOB_FUTURE);
    cr_assert_eq(command_run(sa, "pin resnet110-39 2"), 0, "%s", sa->message);
    cr_assert_not(sa->message_bad);
    char want[160];
    snprintf(want, sizeof want,
             "pin resnet110-39 2: resnet110-39 has not arrived yet (due at t=%.0fs): applied "
             "from its arrival",
             info.submit_s);
    cr_assert_str_eq(sa->message, want);
    sched_job_info(st, (size_t)job, &info);
    cr_assert_eq(info.pinned_gpus, 2);
}

/* Regression: a second `:pin` at the same count said "applied at the next scheduling
 * decision" though nothing changed; so did unpinning a job not pinned. */
Test(command_sched, pin_at_the_count_already_pinned_or_unpin_of_a_job_not_pinned_is_refused)
{
    cr_assert_eq(command_run(sa, "pin resnet110-0 0"), -1);
    cr_assert(sa->message_bad);
    cr_assert_str_eq(sa->message, ":pin: resnet110-0 is not pinned (nothing done)");
    cr_assert_eq(command_run(sa, "pin resnet110-0 2"), 0, "%s", sa->message);
    cr_assert_eq(command_run(sa, "pin resnet110-0 2"), -1);
    cr_assert(sa->message_bad);
    cr_assert_str_eq(sa->message, ":pin: resnet110-0 is already pinned at 2 GPUs (nothing done)");
    cr_assert_eq(command_run(sa, "pin resnet110-0 1"), 0, "%s", sa->message);
    cr_assert_eq(command_run(sa, "pin resnet110-0 1"), -1);
    cr_assert_str_eq(sa->message, ":pin: resnet110-0 is already pinned at 1 GPU (nothing done)");
    cr_assert_eq(command_run(sa, "pin resnet110-0 0"), 0, "%s", sa->message);
    cr_assert_not(sa->message_bad, "%s", sa->message);
}

/* An override of a job that runs no more, and a resume of a job not paused, are said and
 * refused, not "applied". */
Test(command_sched, overrides_of_a_finished_job_or_a_resume_not_paused_are_refused)
{
    SchedState *st = simsched_state_mut(sa->ss);
    cr_assert_eq(command_run(sa, "resume resnet110-0"), -1);
    cr_assert_str_eq(sa->message, ":resume: resnet110-0 is not paused (nothing done)");
    cr_assert_eq(command_run(sa, "pause resnet110-0"), 0, "%s", sa->message);
    cr_assert_eq(command_run(sa, "pause resnet110-0"), -1);
    cr_assert_str_eq(sa->message, ":pause: resnet110-0 is already paused (nothing done)");
    cr_assert_eq(command_run(sa, "resume resnet110-0"), 0, "%s", sa->message);

    Error err;
    SchedJobInfo info;
    for (int i = 0; i < 1000; i++) {
        sched_job_info(st, 0, &info);
        if (info.state == SCHED_JOB_DONE)
            break;
        cr_assert_geq(sched_advance(st, 600, &err), 0, "%s", err.msg);
    }
    cr_assert_eq(info.state, SCHED_JOB_DONE);
    cr_assert_eq(command_run(sa, "pin resnet110-0 2"), -1);
    cr_assert_str_eq(sa->message, ":pin: resnet110-0 is done: it runs no more (nothing done)");
}
