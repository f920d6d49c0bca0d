/* The console's App outside a terminal (tui/app.c): what pauses the tuner. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "remote/launch/tuner_priv.h" /* its opt_lock: a suggestion holding the model */
#include "remote/session/tune_journal.h"
#include "tests/support/fixtures.h"
#include "tests/support/low_memory.h"
#include "tui/app.h"
#include "tui/editor.h"
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

/* Regression: quitting with overrides queued asked only where no journal was begun (a flag set
 * once); after a journal write failed (a full disk: the session stopped), the queue was kept
 * nowhere, yet the quit did not ask and the overrides were lost. A real journal whose write
 * fails: the file size limit (RLIMIT_FSIZE) at the journal's size. */
Test(app, quitting_asks_while_overrides_wait_that_no_working_journal_keeps)
{
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    Error err;
    tuner_set_paused(a->tuner, 1);
    cr_assert_eq(tuner_override(a->tuner, s, &err), 0, "%s", err.msg);
    schedule_free(s);
    cr_assert(app_quit_drops_overrides(a), "no journal: the queue would be lost");

    char dir[] = "/tmp/tunedeck-test-app-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    TuneJournal *tj = tune_journal_new(dir);
    cr_assert_not_null(tj);
    tune_journal_set_quiet(tj, 1);
    TuneSetup setup = {.sim = "B:googlenet", .optimizer = "random", .launcher = "sim",
                       .seed = 3, .budget = 2};
    cr_assert_eq(tune_journal_start(tj, a->tuner, &setup, &err), 0, "%s", err.msg);
    a->journal = tj;
    cr_assert_not(app_quit_drops_overrides(a), "the journal keeps the queue for a --resume");

    struct stat st;
    cr_assert_eq(stat(tune_journal_path(tj), &st), 0);
    struct rlimit lim = {(rlim_t)st.st_size, (rlim_t)st.st_size};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "event", "note");
    cr_assert_eq(tune_journal_append(tj, ev), -1);
    cr_assert(tune_journal_failed(tj));
    cr_assert(app_quit_drops_overrides(a), "the journal stopped: nothing keeps the queue");

    a->journal = NULL;
    unlink(tune_journal_path(tj));
    rmdir(dir);
    tune_journal_free(tj);
}

/* Launches this schedule from the editor as an override (Enter). */
static void launch_override(const Schedule *s)
{
    a->editor = editor_new(s);
    cr_assert_not_null(a->editor);
    app_editor_key(a, '\n');
    cr_assert_null(a->editor, "not launched: %s", a->message);
}

/* Regression: an override launched past the budget raised it to the trial it runs as; dropping
 * it kept the raise, so the optimizer ran a trial more than the operator asked for. */
Test(app, dropping_an_override_gives_back_the_budget_raised_for_it)
{
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    tuner_set_paused(a->tuner, 1);
    for (int i = 0; i < 3; i++) /* trials 1-3 on a budget of 2: the third raises it */
        launch_override(s);
    cr_assert_eq(tuner_budget(a->tuner), 3);
    app_drop_override(a);
    cr_assert_eq(tuner_budget(a->tuner), 2, "the raise for the dropped override is given back");
    cr_assert(strstr(a->message, "; budget 3 -> 2"), "and said: %s", a->message);
    app_drop_override(a);
    cr_assert_eq(tuner_budget(a->tuner), 2, "no raise was made for this one: none is given");
    cr_assert_null(strstr(a->message, "budget"), "%s", a->message);

    /* a budget the operator types is theirs: a drop after it keeps it */
    launch_override(s);
    launch_override(s);
    cr_assert_eq(tuner_budget(a->tuner), 3);
    tuner_set_budget(a->tuner, 3);
    app_drop_override(a);
    cr_assert_eq(tuner_budget(a->tuner), 3, "the operator's :budget 3 stays");
    schedule_free(s);
}

/* Regression: a busy model was told by "busy" in the error's text, so an edit whose error
 * named a machine busybox-3 was asked again every 50 ms, for ever. */
Test(app, an_error_naming_a_busy_machine_is_not_a_busy_model)
{
    Cluster *c = (Cluster *)simcluster_cluster(sim); /* the test's own simulated cluster */
    snprintf(c->machines[1].name, sizeof c->machines[1].name, "busybox-3");
    TunerConfig cfg = {.cluster = c,
                       .job = simcluster_job(sim),
                       .optimizer = "bespoke", /* a model: the schedule is validated */
                       .seed = 3,
                       .budget = 2,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = sim, .seed = 3}};
    Error err;
    tuner_free(a->tuner);
    a->tuner = tuner_new(&cfg, &err);
    cr_assert_not_null(a->tuner, "%s", err.msg);
    Schedule *s = schedule_new(c, simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    s->inputs[c->machines[1].first_device] = 1; /* not a worker: an error naming it */
    a->editor = editor_new(s);
    schedule_free(s);
    cr_assert_not_null(a->editor);
    a->pred_stale = 1;
    app_refresh_prediction(a);
    cr_assert_not(a->pred_ok);
    cr_assert(strstr(a->pred_why, "busybox-3"), "%s", a->pred_why);
    cr_assert_not(a->pred_stale, "asked once: the error will not get better");
    app_close_editor(a);
}

/* Regression: while a suggestion held the model, the queued rows' and the editor's retries every
 * 50 ms each marked the screen dirty (queuepred's -1 read as "changed"), so the whole console
 * was redrawn 20 times a second for as long as a suggestion ran. */
Test(app, a_busy_model_is_asked_again_without_a_redraw_each_time)
{
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    Error err;
    cr_assert_eq(tuner_override(a->tuner, s, &err), 0, "%s", err.msg);
    a->editor = editor_new(s);
    schedule_free(s);
    cr_assert_not_null(a->editor);
    pthread_mutex_lock(&a->tuner->opt_lock);
    a->queue_pred_stale = a->pred_stale = 1;
    app_refresh_queue_predictions(a);
    app_refresh_prediction(a);
    cr_assert(a->dirty, "the new queued row and the busy note are drawn once");
    for (int i = 0; i < 3; i++) {
        a->dirty = 0;
        app_refresh_queue_predictions(a);
        app_refresh_prediction(a);
        cr_assert(a->queue_pred_stale && a->pred_stale, "asked again while busy");
        cr_assert_not(a->dirty, "retry %d: nothing new to draw", i);
    }
    pthread_mutex_unlock(&a->tuner->opt_lock);
    app_refresh_queue_predictions(a);
    app_refresh_prediction(a);
    cr_assert_not(a->queue_pred_stale || a->pred_stale, "asked once the model is free");
    app_close_editor(a);
}

/* Regression: Esc while the model was busy left the editor's prediction stale, and only an
 * open editor asks it again, so the loop woke every 50 ms for ever after. */
Test(app, closing_the_editor_while_the_model_is_busy_ends_its_retries)
{
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    a->editor = editor_new(s);
    schedule_free(s);
    cr_assert_not_null(a->editor);
    pthread_mutex_lock(&a->tuner->opt_lock);
    a->pred_stale = 1;
    app_refresh_prediction(a);
    cr_assert(app_prediction_retry_due(a), "a busy model is asked again while editing");
    app_close_editor(a);
    cr_assert_not(app_prediction_retry_due(a), "no editor: nothing to ask again");
    pthread_mutex_unlock(&a->tuner->opt_lock);
}
