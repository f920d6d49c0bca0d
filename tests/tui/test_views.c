/* Views drawn into a real curses screen (written to a temporary file) and read back. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <curses.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "tests/support/screen.h"
#include "tui/app.h"
#include "tui/draw.h"
#include "tui/keys.h"
#include "tui/logview.h"
#include "tui/simsched.h"
#include "tui/trials.h"
#include "tui/view.h"

static SimCluster *sim;

static void setup(void)
{
    fixture_screen_open(30, 100);
    Error err;
    sim = simcluster_new("B:googlenet", &err);
    cr_assert_not_null(sim);
}

static void teardown(void)
{
    fixture_screen_close();
    simcluster_free(sim);
}

TestSuite(views, .init = setup, .fini = teardown);

Test(views, surrogate_shows_predicted_bars_with_their_spread)
{
    const Cluster *c = simcluster_cluster(sim);
    TrialRecord rec;
    memset(&rec, 0, sizeof rec);
    rec.trial = 4;
    rec.launched = 1;
    Schedule *s = schedule_new(c, simcluster_job(sim));
    s->worker[1] = s->ps[1] = s->worker[2] = 1;
    s->inputs[c->machines[1].first_device] = 400;
    s->inputs[c->machines[2].first_device] = 368;
    double mean[16] = {0}, p10[16] = {0}, p90[16] = {0};
    for (size_t m = 0; m < c->n_machines; m++) {
        mean[m] = 5.0 + (double)m;
        p10[m] = mean[m] - 1;
        p90[m] = mean[m] + 2;
    }
    rec.suggestion = (Suggestion){.schedule = s,
                                  .has_prediction = 1,
                                  .mean_s = 20,
                                  .p10_s = 18,
                                  .p90_s = 23,
                                  .machine_mean_s = mean,
                                  .machine_p10_s = p10,
                                  .machine_p90_s = p90};
    erase();
    view_surrogate_draw((Rect){0, 0, 100, 14}, &rec, c, "bespoke", 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Surrogate: trial 4 (bespoke)"), "%s", text);
    cr_assert(strstr(text, "predicted 20.00 s [18.00-23.00]"), "%s", text);
    cr_assert(strstr(text, "compute (p10-p90)"), "%s", text);
    cr_assert(strstr(text, "6.00s") && strstr(text, "7.00s"), "per-machine means: %s", text);
    cr_assert(strstr(text, "cpu 400") && strstr(text, "cpu 368"), "device shares: %s", text);
    cr_assert(strstr(text, "\xe2\x94\xa4"), "a p90 tick on the bars: %s", text);
    cr_assert(strstr(text, "running"), "a trial without outcome is running: %s", text);
    free(text);
    rec.launched = 0; /* held before its launch: not running yet */
    erase();
    view_surrogate_draw((Rect){0, 0, 100, 14}, &rec, c, "bespoke", 0);
    text = fixture_screen_text();
    cr_assert(strstr(text, "waiting") && !strstr(text, "running"), "%s", text);
    free(text);
    schedule_free(s);
}

/* Millisecond per-machine times keep their unit in the pane's 6-column value (0.0072 filled
 * it and lost its s). */
Test(views, surrogate_shows_millisecond_times_with_their_unit)
{
    const Cluster *c = simcluster_cluster(sim);
    TrialRecord rec;
    memset(&rec, 0, sizeof rec);
    rec.trial = 2;
    Schedule *s = schedule_new(c, simcluster_job(sim));
    s->worker[1] = s->ps[1] = s->worker[2] = 1;
    s->inputs[c->machines[1].first_device] = 400;
    s->inputs[c->machines[2].first_device] = 368;
    double mean[16] = {0}, p10[16] = {0}, p90[16] = {0};
    for (size_t m = 0; m < c->n_machines; m++) {
        mean[m] = m == 1 ? 0.0072 : 0.014;
        p10[m] = mean[m] * 0.9;
        p90[m] = mean[m] * 1.2;
    }
    rec.suggestion = (Suggestion){.schedule = s,
                                  .has_prediction = 1,
                                  .mean_s = 0.02,
                                  .p10_s = 0.018,
                                  .p90_s = 0.023,
                                  .machine_mean_s = mean,
                                  .machine_p10_s = p10,
                                  .machine_p90_s = p90};
    erase();
    view_surrogate_draw((Rect){0, 0, 100, 14}, &rec, c, "bespoke", 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, " 7.2ms"), "machine 1's 7.2 ms: %s", text);
    cr_assert(strstr(text, "0.014s"), "machine 2's 14 ms: %s", text);
    cr_assert_null(strstr(text, "0.0072"), "%s", text);
    free(text);
    schedule_free(s);
}

Test(views, surrogate_without_a_model_says_so)
{
    const Cluster *c = simcluster_cluster(sim);
    TrialRecord rec;
    memset(&rec, 0, sizeof rec);
    rec.trial = 1;
    rec.suggestion.schedule = schedule_new(c, simcluster_job(sim));
    erase();
    view_surrogate_draw((Rect){0, 0, 60, 14}, &rec, c, "random", 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "no prediction (random has no model)"), "%s", text);
    cr_assert(strstr(text, "measured compute"), "%s", text);
    free(text);
    schedule_free(rec.suggestion.schedule);
    erase();
    view_surrogate_draw((Rect){0, 0, 60, 14}, NULL, c, "random", 1);
    text = fixture_screen_text();
    cr_assert(strstr(text, "suggesting..."), "%s", text);
    free(text);
}

Test(views, cluster_grid_labels_each_gpu_by_its_job_and_unknown_load_is_not_zero)
{
    HostLoad hosts[3];
    JobRow jobs[2];
    memset(hosts, 0, sizeof hosts);
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < 3; i++) {
        snprintf(hosts[i].name, sizeof hosts[i].name, "node%d", i);
        hosts[i].cpu = 0.5;
        hosts[i].gpu = i == 2 ? NAN : 0.25;
        hosts[i].mem = hosts[i].share = 0.1;
        hosts[i].n_gpus = 8;
        for (int g = 0; g < 8; g++)
            hosts[i].gpu_job[g] = (short)(i == 0 ? 0 : i == 1 ? (g < 4 ? 1 : -1) : -1);
    }
    snprintf(jobs[0].name, sizeof jobs[0].name, "resnet");
    jobs[0].state = jobs[1].state = -1;
    jobs[0].gpus = 8;
    jobs[0].progress = 0.5;
    jobs[0].eta_s = 120;
    snprintf(jobs[1].name, sizeof jobs[1].name, "bert");
    jobs[1].gpus = 4;
    jobs[1].progress = NAN;
    jobs[1].eta_s = NAN;
    jobs[1].resizes = 2;
    snprintf(jobs[1].history, sizeof jobs[1].history, "1>2>4");
    ClusterSnapshot s = {.hosts = hosts, .n_hosts = 3, .jobs = jobs, .n_jobs = 2};
    snprintf(s.source, sizeof s.source, "test");
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "GPUs: 12/24 held"), "%s", text);
    cr_assert(strstr(text, "node0  AAAAAAAA"), "%s", text);
    cr_assert(strstr(text, "node1  BBBB"), "%s", text);
    cr_assert(strstr(text, "gpu n/a"), "unknown GPU load shown as unknown: %s", text);
    cr_assert(strstr(text, "1>2>4"), "%s", text);
    cr_assert(strstr(text, " 2m00s "), "the ETA in h/m/s: %s", text);
    free(text);
}

/* On Slurm, GPUs other users' jobs hold are foreign: their own glyph, not counted as held by
 * ours, and the title says how many with the glyph as its legend. */
Test(views, cluster_grid_draws_other_users_gpus_as_foreign_with_a_legend)
{
    HostLoad hosts[2];
    JobRow jobs[1];
    memset(hosts, 0, sizeof hosts);
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < 2; i++) {
        snprintf(hosts[i].name, sizeof hosts[i].name, "n%d", i + 1);
        hosts[i].cpu = hosts[i].gpu = hosts[i].mem = hosts[i].share = NAN;
        hosts[i].n_gpus = 2;
    }
    hosts[0].gpu_job[0] = hosts[0].gpu_job[1] = 0;
    hosts[1].gpu_job[0] = -1;
    hosts[1].gpu_job[1] = SNAP_GPU_FOREIGN;
    snprintf(jobs[0].name, sizeof jobs[0].name, "solo");
    jobs[0].state = -1;
    jobs[0].gpus = 2;
    jobs[0].progress = jobs[0].eta_s = NAN;
    ClusterSnapshot s = {.hosts = hosts, .n_hosts = 2, .jobs = jobs, .n_jobs = 1};
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    char *text = fixture_screen_text();
    const char *glyph = draw_unicode() ? "\xe2\x96\x92" : "#";
    char title[64], row[64];
    snprintf(title, sizeof title, "GPUs: 2/4 held, 1 %s other users' jobs", glyph);
    snprintf(row, sizeof row, "%s", glyph);
    cr_assert(strstr(text, title), "%s", text);
    cr_assert(strstr(text, "n1     AA"), "%s", text);
    const char *n2 = strstr(text, "n2     ");
    cr_assert(n2 && strstr(n2, row) && strstr(n2, row) < n2 + 16, "%s", text);
    free(text);
}

/* On Slurm, idle GPUs held back for other users' pending jobs have their own glyph, are not
 * counted as held by ours, and the title gives their legend. */
Test(views, cluster_grid_draws_gpus_kept_for_pending_jobs_with_a_legend)
{
    HostLoad hosts[1];
    memset(hosts, 0, sizeof hosts);
    snprintf(hosts[0].name, sizeof hosts[0].name, "n2");
    hosts[0].cpu = hosts[0].gpu = hosts[0].mem = hosts[0].share = NAN;
    hosts[0].n_gpus = 2;
    hosts[0].gpu_job[0] = 0;
    hosts[0].gpu_job[1] = SNAP_GPU_KEPT;
    JobRow jobs[1];
    memset(jobs, 0, sizeof jobs);
    snprintf(jobs[0].name, sizeof jobs[0].name, "new");
    jobs[0].state = -1;
    jobs[0].gpus = 1;
    jobs[0].progress = jobs[0].eta_s = NAN;
    ClusterSnapshot s = {.hosts = hosts, .n_hosts = 1, .jobs = jobs, .n_jobs = 1};
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    char *text = fixture_screen_text();
    const char *glyph = draw_unicode() ? "\xe2\x96\x91" : "+";
    char title[128], row[32];
    snprintf(title, sizeof title, "GPUs: 1/2 held, 1 %s kept for pending jobs", glyph);
    snprintf(row, sizeof row, "n2     A%s", glyph);
    cr_assert(strstr(text, title), "%s", text);
    cr_assert(strstr(text, row), "%s", text);
    free(text);
}

/* Every word of every key's help appears in the text (words of one entry may wrap). */
/* An App whose tuner tunes the simulated cluster `on` at random (seed 3), no trial run yet:
 * the tests run it, or give its table the records they draw. */
static App *app_tuning_at_random(SimCluster *on, int budget)
{
    TunerConfig cfg = {.cluster = simcluster_cluster(on),
                       .job = simcluster_job(on),
                       .optimizer = "random",
                       .seed = 3,
                       .budget = budget,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = on, .seed = 3}};
    Error err;
    App *a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->tuner = tuner_new(&cfg, &err);
    cr_assert_not_null(a->tuner, "%s", err.msg);
    return a;
}

/* n trials with a schedule each, ok in first_s + i * step_s, ptr[i] naming recs[i]. */
static void ok_records(TrialRecord *recs, const TrialRecord **ptr, int n, double first_s,
                       double step_s)
{
    memset(recs, 0, (size_t)n * sizeof *recs);
    for (int i = 0; i < n; i++) {
        recs[i].trial = i + 1;
        recs[i].suggestion.schedule = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
        recs[i].obs = observation_new(recs[i].suggestion.schedule);
        recs[i].obs->status = TRIAL_OK;
        recs[i].obs->time_s = first_s + i * step_s;
        ptr[i] = &recs[i];
    }
}

/* Frees app_tuning_at_random's App and the n records ok_records made. */
static void app_tuning_free(App *a, TrialRecord *recs, int n)
{
    for (int i = 0; i < n; i++) {
        observation_free(recs[i].obs);
        schedule_free(recs[i].suggestion.schedule);
    }
    trials_free(&a->table);
    tuner_free(a->tuner);
    free(a);
}

/* The tune view at 100x30, its trial table alone: the other panes need a run. */
static void tune_view_table_alone(App *a)
{
    a->view = VIEW_TUNE;
    layout_compute(100, 30, VIEW_TUNE, 0, &a->layout);
    for (int p = 0; p < PANE_COUNT; p++)
        if (p != PANE_TRIALS)
            a->layout.shown[p] = 0;
}

static void assert_every_key_and_word(const char *text, int cols, int rows)
{
    for (size_t i = 0; i < HELP_KEYS_COUNT; i++) {
        cr_assert(strstr(text, HELP_KEYS[i].keys), "%dx%d: missing key '%s': %s", cols, rows,
                  HELP_KEYS[i].keys, text);
        char words[256];
        snprintf(words, sizeof words, "%s", HELP_KEYS[i].what);
        for (char *save, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
            cr_assert(strstr(text, w), "%dx%d: missing '%s' of '%s': %s", cols, rows, w,
                      HELP_KEYS[i].what, text);
    }
}

/* At 100x30 it all shows at once (the long `:` entry wraps, the rest fits its row). */
Test(views, help_overlay_lists_every_key)
{
    erase();
    cr_assert_eq(keys_draw_help(100, 30, 0, NULL), 0);
    cr_assert(keys_help_fits(100, 30));
    char *text = fixture_screen_text();
    assert_every_key_and_word(text, 100, 30);
    free(text);
}

/* The `:` entry and the rows that continue it (no keys of their own), as one text. */
static void colon_entry_text(char *what, size_t size)
{
    what[0] = '\0';
    for (size_t i = 0, in = 0; i < HELP_KEYS_COUNT; i++) {
        in = strcmp(HELP_KEYS[i].keys, ":") == 0 || (in && !HELP_KEYS[i].keys[0]);
        if (in)
            strncat(what, HELP_KEYS[i].what, size - strlen(what) - 1);
    }
    cr_assert(strstr(what, "theme NAME") && strstr(what, "undrain NODE"), "%s", what);
}

/* How many of the `:` entry's commands stand whole in a screen line: a space before, and
 * after it ',', ';' or a space (so "pause" in "pause/resume JOB" does not count). */
static int commands_in_line(const char *what, const char *line)
{
    char items[512];
    snprintf(items, sizeof items, "%s", what);
    int found = 0;
    for (char *save, *it = strtok_r(items, ",;", &save); it; it = strtok_r(NULL, ",;", &save)) {
        while (*it == ' ')
            it++;
        for (const char *at = strstr(line, it); at; at = strstr(at + 1, it)) {
            char after = at[strlen(it)];
            if (at > line && at[-1] == ' ' && (after == ',' || after == ';' || after == ' ')) {
                found++;
                break;
            }
        }
    }
    return found;
}

/* Regression: the `:` entry was four rows cut by hand for 100 columns, so at 80 each wrapped
 * again ("pause, resume," alone on a row, "filter" and "TEXT" apart); and at 90-94 columns
 * "theme NAME;" was left alone on a row under two full ones. At every width from 80 to 200
 * each command shows whole on one row, and no row holds one command alone. */
Test(views, help_overlay_keeps_each_command_of_the_colon_entry_on_one_row)
{
    char what[512];
    colon_entry_text(what, sizeof what);
    for (int cols = 80; cols <= 200; cols++) {
        resizeterm(60, cols);
        erase();
        keys_draw_help(cols, 60, 0, NULL);
        char *text = fixture_screen_text();
        char items[512];
        snprintf(items, sizeof items, "%s", what);
        for (char *save, *it = strtok_r(items, ",;", &save); it; it = strtok_r(NULL, ",;", &save)) {
            while (*it == ' ')
                it++;
            cr_assert(strstr(text, it), "%d columns: '%s' is not whole on one row: %s", cols, it,
                      text);
        }
        char *lines = strdup(text);
        for (char *save, *line = strtok_r(lines, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            int n = commands_in_line(what, line);
            cr_assert(n != 1, "%d columns: a command alone on its row: '%s' in %s", cols, line,
                      text);
        }
        free(lines);
        free(text);
    }
    resizeterm(30, 100);
}

/* Regression: the scheduler entry's Slurm part ("Slurm: drain NODE [REASON], undrain NODE
 * (asks)") took two rows at 80 columns; then, at 90-94 columns, its row broke before
 * "undrain NODE" (a break after "; " counted only in a row's second half). A group that fits
 * one row now never breaks: the Slurm part is whole on one row at every width 80-200. */
Test(views, help_overlay_keeps_the_slurm_commands_on_one_row)
{
    const char *slurm = NULL;
    for (size_t i = 0; i < HELP_KEYS_COUNT && !slurm; i++)
        slurm = strstr(HELP_KEYS[i].what, "Slurm");
    cr_assert_not_null(slurm);
    for (int cols = 80; cols <= 200; cols++) {
        resizeterm(60, cols);
        erase();
        keys_draw_help(cols, 60, 0, NULL);
        char *text = fixture_screen_text();
        cr_assert(strstr(text, slurm), "%d columns: '%s' is not whole on one row: %s", cols, slurm,
                  text);
        free(text);
    }
    resizeterm(30, 100);
}

/* Keys config.json moved are named in the title: the table under it lists the defaults. */
Test(views, help_overlay_names_rebound_keys)
{
    erase();
    keys_draw_help(100, 30, 0, "x quit, h help");
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Keys (any key closes); rebound: x quit, h help"), "%s", text);
    free(text);
    erase();
    keys_draw_help(100, 30, 0, "");
    text = fixture_screen_text();
    cr_assert_null(strstr(text, "rebound"), "%s", text);
    free(text);
}

Test(views, help_overlay_scrolls_to_every_key_on_small_screens)
{
    /* At 80x24 the help once hid five keys below the screen and cut eight lines short. */
    static const int SIZES[][2] = {{80, 24}, {60, 15}, {40, 10}, {100, 30}};
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
        int cols = SIZES[s][0], rows = SIZES[s][1];
        size_t cap = 1 << 20, used = 0;
        char *all = calloc(cap, 1);
        cr_assert_not_null(all);
        for (int top = 0, drawn = -1;; top += rows - 4) { /* a page: the box's inner rows */
            erase();
            int now = keys_draw_help(cols, rows, top, NULL);
            if (now == drawn)
                break; /* the last row is on screen: scrolling stops */
            drawn = now;
            char *text = fixture_screen_text();
            size_t n = strlen(text);
            cr_assert_lt(used + n, cap);
            memcpy(all + used, text, n + 1);
            used += n;
            free(text);
        }
        assert_every_key_and_word(all, cols, rows);
        free(all);
    }
}

/* The help's text keeps a blank column inside each border: a full row's text touched the
 * right one, and every row's the left one ("│global  1 2 3"). */
Test(views, help_overlay_text_keeps_a_blank_column_inside_each_border)
{
    static const int SIZES[][2] = {{100, 30}, {80, 24}, {60, 15}, {40, 10}};
    const char *bar = "\xe2\x94\x82"; /* │ */
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
        int cols = SIZES[s][0], rows = SIZES[s][1];
        resizeterm(rows, cols);
        erase();
        keys_draw_help(cols, rows, 0, NULL);
        char *text = fixture_screen_text();
        int boxed = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            char *left = strstr(line, bar), *right = left ? strstr(left + 3, bar) : NULL;
            if (!right)
                continue;
            while (strstr(right + 3, bar))
                right = strstr(right + 3, bar);
            boxed++;
            cr_assert_eq(left[3], ' ', "%dx%d: text touches the left border: %s", cols, rows, line);
            cr_assert_eq(right[-1], ' ', "%dx%d: text touches the right border: %s", cols, rows,
                         line);
        }
        cr_assert_gt(boxed, 3, "%dx%d: no box drawn", cols, rows);
        free(text);
    }
    resizeterm(30, 100);
}

/* A job list longer than its pane scrolls, says which rows show, and never goes past its
 * last page; a long job name keeps its column (cut in the middle). */
Test(views, cluster_job_list_scrolls_and_fits_long_names)
{
    enum { N = 30 };
    JobRow jobs[N];
    HostLoad host;
    memset(jobs, 0, sizeof jobs);
    memset(&host, 0, sizeof host);
    snprintf(host.name, sizeof host.name, "n0");
    for (int i = 0; i < N; i++) {
        snprintf(jobs[i].name, sizeof jobs[i].name, "job%02d", i);
        jobs[i].state = -1;
        jobs[i].gpus = 1;
        jobs[i].progress = jobs[i].eta_s = NAN;
    }
    snprintf(jobs[N - 1].name, sizeof jobs[N - 1].name,
             "imagenet-resnet152-mixed-precision-large-batch-n42");
    ClusterSnapshot s = {.hosts = &host, .n_hosts = 1, .jobs = jobs, .n_jobs = N};
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    int rows = l.rect[PANE_JOBS].h - 3;
    cr_assert_gt(rows, 3);
    erase();
    view_cluster_draw(&s, &l, 0, 12);
    char *text = fixture_screen_text();
    char range[32], first[16], before[16];
    snprintf(range, sizeof range, "  13-%d/%d ", 12 + rows, N);
    snprintf(first, sizeof first, "job12 ");
    snprintf(before, sizeof before, "job11 ");
    cr_assert(strstr(text, range), "%s: %s", range, text);
    cr_assert(strstr(text, first), "%s", text);
    cr_assert_null(strstr(text, before), "%s", text);
    free(text);
    /* past the end: the last page, the long name cut to its 12 columns */
    erase();
    view_cluster_draw(&s, &l, 0, 1000);
    text = fixture_screen_text();
    snprintf(range, sizeof range, "  %d-%d/%d ", N - rows + 1, N, N);
    cr_assert(strstr(text, range), "%s: %s", range, text);
    const char *cut = draw_unicode() ? "image\xe2\x80\xa6" "ch-n42   1" : "image~ch-n42   1";
    cr_assert(strstr(text, cut), "%s", text);
    free(text);
}

/* The job list at the default 100 x 30: a note the row would cut (why a job waits, what
 * its real process does) shows whole on a line under its job; a short one stays on the
 * row; the last page still ends with the last job, its note with it. */
Test(views, cluster_job_note_shows_whole_at_100x30)
{
    enum { N = 12 };
    JobRow jobs[N];
    HostLoad host;
    memset(jobs, 0, sizeof jobs);
    memset(&host, 0, sizeof host);
    snprintf(host.name, sizeof host.name, "n0");
    for (int i = 0; i < N; i++) {
        snprintf(jobs[i].name, sizeof jobs[i].name, "job%02d", i);
        snprintf(jobs[i].state_name, sizeof jobs[i].state_name, "running");
        snprintf(jobs[i].history, sizeof jobs[i].history, "8>4>2");
        jobs[i].state = -1;
        jobs[i].gpus = 2;
        jobs[i].progress = 0.5;
        jobs[i].eta_s = 12345;
    }
    const char *longest = "run 0,1,2,3 step 123456 loss 0.1234; resize 4>2, restart 30s left";
    snprintf(jobs[1].note, sizeof jobs[1].note, "%s", longest);
    snprintf(jobs[2].note, sizeof jobs[2].note, "paused");
    snprintf(jobs[2].history, sizeof jobs[2].history, "2");
    snprintf(jobs[N - 1].note, sizeof jobs[N - 1].note, "resize 2>4, restart 37s left");
    ClusterSnapshot s = {.hosts = &host, .n_hosts = 1, .jobs = jobs, .n_jobs = N};
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    cr_assert(l.shown[PANE_JOBS]);
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    char *text = fixture_screen_text();
    /* wrapped at its spaces, whole */
    cr_assert(strstr(text, "run 0,1,2,3 step 123456 loss 0.1234; resize 4>2,"),
              "the long note cut: %s", text);
    cr_assert(strstr(text, " restart 30s left "), "the long note's end is lost: %s", text);
    cr_assert(strstr(text, "  2  paused "), "the short note left its row: %s", text);
    free(text);
    erase();
    view_cluster_draw(&s, &l, 0, SIZE_MAX);
    text = fixture_screen_text();
    cr_assert(strstr(text, "job11 "), "%s", text);
    cr_assert(strstr(text, "resize 2>4, restart 37s left"), "%s", text);
    char range[32];
    snprintf(range, sizeof range, "/%d ", N);
    cr_assert(strstr(text, range), "the range is not in the title: %s", text);
    free(text);
}

/* Whatever the size, the scroll and the notes, the list stays inside its pane (a property
 * over sizes, as nvtop tests its layout). */
/* Regression: the job list's title said "(* pinned)" with no job pinned (a legend for a mark
 * no row had); it says it once one is. */
Test(views, the_pinned_legend_shows_only_when_a_job_is_pinned)
{
    HostLoad host;
    JobRow jobs[2];
    memset(&host, 0, sizeof host);
    memset(jobs, 0, sizeof jobs);
    snprintf(host.name, sizeof host.name, "n0");
    for (int i = 0; i < 2; i++) {
        snprintf(jobs[i].name, sizeof jobs[i].name, "j%d", i);
        jobs[i].state = -1;
        jobs[i].progress = jobs[i].eta_s = NAN;
    }
    ClusterSnapshot s = {.hosts = &host, .n_hosts = 1, .jobs = jobs, .n_jobs = 2};
    Layout l;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
    resizeterm(30, 100);
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Jobs") && !strstr(text, "pinned"), "%s", text);
    free(text);
    jobs[1].pinned = 1;
    erase();
    view_cluster_draw(&s, &l, 0, 0);
    text = fixture_screen_text();
    cr_assert(strstr(text, "Jobs (* pinned)"), "%s", text);
    free(text);
}

Test(views, cluster_job_list_stays_in_its_pane_at_every_size)
{
    enum { N = 9 };
    JobRow jobs[N];
    HostLoad host;
    memset(jobs, 0, sizeof jobs);
    memset(&host, 0, sizeof host);
    snprintf(host.name, sizeof host.name, "n0");
    for (int i = 0; i < N; i++) {
        snprintf(jobs[i].name, sizeof jobs[i].name, "j%d", i);
        jobs[i].state = -1;
        jobs[i].progress = jobs[i].eta_s = NAN;
        if (i % 2)
            snprintf(jobs[i].note, sizeof jobs[i].note, "a note, long enough to go below");
    }
    ClusterSnapshot s = {.hosts = &host, .n_hosts = 1, .jobs = jobs, .n_jobs = N};
    const size_t scrolls[] = {0, 4, 8, SIZE_MAX}; /* SIZE_MAX: G, the last page */
    for (int cols = 40; cols <= 200; cols += 7)
        for (int rows = 10; rows <= 60; rows += 3)
            for (size_t si = 0; si < sizeof scrolls / sizeof *scrolls; si++) {
                size_t scroll = scrolls[si];
                Layout l;
                layout_compute(cols, rows, VIEW_CLUSTER, 0, &l);
                resizeterm(rows, cols);
                if (!l.shown[PANE_JOBS])
                    continue;
                Rect b = l.rect[PANE_JOBS];
                erase();
                view_cluster_draw(&s, &l, 0, scroll);
                char *text = fixture_screen_text();
                /* the title's range ("  3-6/9"; none when all fit) is what the pane holds:
                 * every job in it drawn, none past it (the jobs list in index order here) */
                char *line = text;
                for (int y = 0; y < b.y && line; y++) {
                    char *next = strchr(line, '\n');
                    line = next ? next + 1 : NULL;
                }
                cr_assert_not_null(line);
                size_t first = 1, last = N, listed = N;
                char *title_end = strchr(line, '\n');
                for (const char *p = line; *p && p + 2 < (title_end ? title_end : p + 3); p++)
                    if (p[0] == ' ' && p[1] == ' ' && isdigit((unsigned char)p[2]) &&
                        sscanf(p, "  %zu-%zu/%zu", &first, &last, &listed) == 3)
                        break;
                cr_assert(first >= 1 && first <= last && last <= N && listed == N);
                for (int i = 0; i < N; i++) {
                    char name[8];
                    snprintf(name, sizeof name, " j%d ", i);
                    int drawn = 0;
                    const char *row = title_end ? title_end + 1 : NULL;
                    for (int y = b.y + 1; y < b.y + b.h - 1 && row && *row; y++) {
                        const char *eol = strchr(row, '\n');
                        size_t len = eol ? (size_t)(eol - row) : strlen(row);
                        const char *hit = strstr(row, name);
                        drawn |= hit && hit < row + len;
                        row = eol ? eol + 1 : NULL;
                    }
                    int in_range = (size_t)i + 1 >= first && (size_t)i + 1 <= last;
                    cr_assert_eq(drawn, in_range, "%dx%d from %zu: j%d %s (title %zu-%zu/%zu)",
                                 cols, rows, scroll, i, drawn ? "drawn" : "not drawn", first, last,
                                 listed);
                }
                /* its bottom border: no job row, no note drawn over it */
                for (int y = b.y; y < b.y + b.h - 1 && line; y++) {
                    char *next = strchr(line, '\n');
                    line = next ? next + 1 : NULL;
                }
                cr_assert_not_null(line);
                char *end = strchr(line, '\n');
                if (end)
                    *end = 0;
                cr_assert(!strchr(line, 'j') && !strstr(line, "note"),
                          "%dx%d from %zu: the list went past its pane: %s", cols, rows, scroll,
                          line);
                free(text);
            }
    resizeterm(30, 100);
}

/* At 80x24 the help overlay stands clear of the panes under it (a blank column each side:
 * once their borders touched its own, "┌┌ Keys", "└│"), and a description wrapped onto the
 * next row hangs 2 columns in, so it does not read as a key of its own. */
Test(views, help_overlay_has_a_margin_and_hangs_wrapped_text)
{
    resizeterm(24, 80);
    erase();
    for (int y = 1; y < 23; y++) /* a pane's borders where the margin goes */
        mvaddstr(y, 0, "#"), mvaddstr(y, 79, "#");
    keys_draw_help(80, 24, 0, NULL);
    char *text = fixture_screen_text();
    resizeterm(30, 100);
    cr_assert_null(strstr(text, "#"), "a pane's border touches the overlay: %s", text);
    /* "command: budget N, ..." wraps before "pause, resume"; the rest hangs under it */
    const char *cmd = strstr(text, "command: budget N");
    const char *resume = strstr(text, "pause, resume,");
    cr_assert(cmd && resume, "%s", text);
    const char *cmd_line = cmd, *resume_line = resume;
    while (cmd_line > text && cmd_line[-1] != '\n')
        cmd_line--;
    while (resume_line > text && resume_line[-1] != '\n')
        resume_line--;
    /* in bytes: both lines have the same multi-byte border before them */
    size_t cmd_col = (size_t)(cmd - cmd_line), resume_col = (size_t)(resume - resume_line);
    cr_assert_eq(resume_col, cmd_col + 2, "wrapped text at byte %zu, its entry's at %zu: %s",
                 resume_col, cmd_col, text);
    free(text);
}

/* The tune view of a session with no tuning says so across the screen at 80x24, whole: it
 * was cut to the surrogate pane's half of the screen. With no scheduler either (Slurm
 * watched: this App has none) it points at the hosts view, which shows Slurm's nodes: it
 * said "2 shows the live scheduler", where 2 showed "no scheduler in this session". */
Test(views, tune_view_without_tuning_says_so_whole_at_80x24)
{
    resizeterm(24, 80);
    App *a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->view = VIEW_TUNE;
    layout_compute(80, 24, VIEW_TUNE, 0, &a->layout);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    resizeterm(30, 100);
    free(a);
    cr_assert(strstr(text, "3 shows Slurm's nodes and queue"), "%s", text);
    cr_assert(!strstr(text, "live scheduler"), "%s", text);
    free(text);
}

/* Trial 1's probe reason is longer than its row at 100x30: selected, it shows whole under
 * the table (as a job's note under its row in the cluster view), the selected row stays on
 * screen, and no row is drawn over by it. */
Test(views, trial_note_of_the_selected_trial_shows_whole_at_100x30)
{
    App *a = app_tuning_at_random(sim, 20);
    enum { N = 20 };
    TrialRecord recs[N];
    const TrialRecord *ptr[N];
    ok_records(recs, ptr, N, 10, 1);
    recs[0].obs->status = TRIAL_PRUNED;
    const char *probe = "probe: stopped after 20 of 200 iterations (nothing measured yet to "
                        "compare with; kept as a 20-iteration measurement)";
    snprintf(recs[0].obs->reason, sizeof recs[0].obs->reason, "%s", probe);
    trials_build(&a->table, ptr, N, TRIAL_COL_NUMBER, 0, "");
    tune_view_table_alone(a);
    cr_assert(a->layout.shown[PANE_TRIALS]);
    int plain_rows = a->layout.rect[PANE_TRIALS].h - 3;

    a->sel = N - 1; /* a short note: the table's rows, none given to a note */
    a->scroll = 0;
    view_trials_clamp_scroll(a);
    cr_assert_eq(view_trials_rows(a), plain_rows);
    a->sel = 0;
    view_trials_clamp_scroll(a);
    int rows = view_trials_rows(a);
    cr_assert(rows < plain_rows && rows >= 1, "%d of %d rows", rows, plain_rows);
    cr_assert_eq(a->scroll, 0, "the selected trial stays on screen");
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    /* the note wrapped: every word of it on screen, and its last words whole */
    char words[300];
    snprintf(words, sizeof words, "%s", probe);
    for (char *save, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
        cr_assert(strstr(text, w), "missing '%s': %s", w, text);
    cr_assert(strstr(text, "20-iteration measurement)"), "%s", text);
    char last_row[16];
    snprintf(last_row, sizeof last_row, "%5d  ok", rows); /* rows 1..rows drawn, in order */
    cr_assert(strstr(text, last_row), "row %d still shows: %s", rows, text);
    free(text);

    /* paging down to the last trial gives the rows back */
    a->sel = N - 1;
    view_trials_clamp_scroll(a);
    cr_assert_eq(a->scroll, (size_t)(N - plain_rows));
    app_tuning_free(a, recs, N);
}

/* The operator's queued overrides show under the trials as the trials they will be, the next
 * first, marked queued; they take at most half the table's rows (the last then counts the
 * rest), and the selected trial stays on screen. */
Test(views, queued_overrides_show_under_the_trials_as_the_trials_they_will_be)
{
    Error err;
    App *a = app_tuning_at_random(sim, 20);
    cr_assert_eq(tuner_run_blocking(a->tuner, &err), 0, "%s", err.msg);
    a->follow = 1;
    app_rebuild_table(a);
    tune_view_table_alone(a);
    int plain_rows = view_trials_rows(a);
    const Schedule *s = tuner_trial(a->tuner, 0)->suggestion.schedule;
    for (int i = 0; i < 2; i++)
        cr_assert_eq(tuner_override(a->tuner, s, &err), 0, "%s", err.msg);
    cr_assert_eq(view_trials_rows(a), plain_rows - 2, "a row each");
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "   21  queued "), "%s", text);
    cr_assert(strstr(text, "   22  queued "), "%s", text);
    cr_assert(strstr(text, "   21  queued ") < strstr(text, "   22  queued "), "the next first");
    cr_assert(strstr(text, "   20  ok") || strstr(text, "   20  pruned"),
              "the newest trial, selected, stays on screen: %s", text);
    free(text);

    /* the predicted column: what the cache holds (tui/queuepred.h), as a suggested trial's
     * row shows its prediction; none is a dash (here the random optimizer's) */
    cr_assert_eq(queuepred_update(&a->queue_pred, a->tuner), 1);
    cr_assert(isnan(queuepred_mean_s(&a->queue_pred, tuner_override_id(a->tuner, 0))));
    a->queue_pred.v[1].mean_s = 4.25;
    erase();
    view_get(VIEW_TUNE)->draw(a);
    text = fixture_screen_text();
    char *row21 = strstr(text, "   21  queued "), *row22 = strstr(text, "   22  queued ");
    cr_assert(row21 && row22, "%s", text);
    *strchr(row21, '\n') = 0;
    *strchr(row22, '\n') = 0;
    cr_assert_not_null(strstr(row22, "queued             -         -      4.25  "), "%s", row22);
    cr_assert_not_null(strstr(row21, "queued             -         -         -  "), "%s", row21);
    free(text);

    for (int i = 0; i < 10; i++)
        cr_assert_eq(tuner_override(a->tuner, s, &err), 0, "%s", err.msg);
    int half = (plain_rows) / 2;
    cr_assert_eq(view_trials_rows(a), plain_rows - half, "at most half the rows");
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    text = fixture_screen_text();
    char more[64];
    snprintf(more, sizeof more, "override (+%d more queued)", 12 - half);
    cr_assert(strstr(text, more), "'%s': %s", more, text);
    free(text);
    trials_free(&a->table);
    tuner_free(a->tuner);
    free(a);
}

/* Regression: the queued rows' predictions were not part of the time columns' fit, so an
 * override predicted at 1500 s beside trials of 8 ms printed 1500.0000 in the 8-column field
 * and pushed the rest of its row a column right. */
Test(views, a_queued_prediction_joins_the_time_columns_fit)
{
    const Cluster *c = simcluster_cluster(sim);
    Error err;
    App *a = app_tuning_at_random(sim, 20);
    enum { N = 3 };
    TrialRecord recs[N];
    const TrialRecord *ptr[N];
    ok_records(recs, ptr, N, 0.008, 0);
    trials_build(&a->table, ptr, N, TRIAL_COL_NUMBER, 0, "");
    cr_assert_eq(a->table.decimals, 4, "8 ms alone: four decimals");
    Schedule *s = schedule_new(c, simcluster_job(sim));
    s->worker[0] = s->ps[0] = 1;
    s->inputs[0] = simcluster_job(sim)->batch;
    cr_assert_eq(tuner_override(a->tuner, s, &err), 0, "%s", err.msg);
    schedule_free(s);
    queuepred_update(&a->queue_pred, a->tuner);
    cr_assert_eq(a->queue_pred.n, 1);
    a->queue_pred.v[0].mean_s = 1500;
    tune_view_table_alone(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    char *trial = strstr(text, "    1  ok "), *queued = strstr(text, "  queued ");
    cr_assert(trial && queued, "%s", text);
    /* the roles column (0/0 for the trials, 1/1 for the override) starts at one column */
    char *trial_roles = strstr(trial, "0/0"), *queued_roles = strstr(queued, "1/1");
    cr_assert(trial_roles && queued_roles, "%s", text);
    long trial_col = trial_roles - text, queued_col = queued_roles - text;
    for (char *p = text; p < trial_roles; p++)
        if (*p == '\n')
            trial_col = trial_roles - p - 1;
    for (char *p = text; p < queued_roles; p++)
        if (*p == '\n')
            queued_col = queued_roles - p - 1;
    *strchr(trial, '\n') = 0;
    *strchr(queued, '\n') = 0;
    cr_assert_not_null(strstr(trial, "   0.008 "), "three decimals for all: %s", trial);
    cr_assert_not_null(strstr(queued, "-  1500.000 "), "%s", queued);
    cr_assert_eq(queued_col, trial_col, "the queued row shifted:\n%s\n%s", trial, queued);
    free(text);
    app_tuning_free(a, recs, N);
}

/* The screen's text with its line breaks and border columns taken out, so that a wrapped
 * line reads as one. */
static void unwrap(char *text)
{
    char *o = text;
    for (const char *p = text; *p; p++)
        if (*p != '\n' && *p != '|')
            *o++ = *p;
    *o = 0;
}

/* Regression: a log line longer than the pane was cut at its width (and stored cut at 159
 * bytes), so a trial's long failure could not be read whole. The overlay (L) shows each
 * line wrapped, at any width, newest last, and scrolls back. */
Test(views, the_log_overlay_shows_a_long_line_whole_at_any_width)
{
    static App a;
    memset(&a, 0, sizeof a);
    const char *tail = "the_end_of_the_long_line";
    for (int i = 0; i < 40; i++)
        app_log(&a, "line %d", i);
    app_log(&a, "trial 7: failed: %s %s", "the command failed on h2: exit status 3:", "");
    char longline[400];
    snprintf(longline, sizeof longline, "trial 8: failed on h3: ");
    while (strlen(longline) < 330)
        strcat(longline, "word ");
    strcat(longline, tail);
    app_log(&a, "%s", longline);
    for (int cols = 30; cols <= 100; cols += 35) {
        resizeterm(30, cols);
        erase();
        cr_assert_eq(logview_draw(&a, cols, 30, 0), 0);
        char *text = fixture_screen_text();
        unwrap(text);
        cr_assert(strstr(text, tail), "%d columns: %s", cols, text);
        cr_assert(strstr(text, "Log "), "%s", text);
        free(text);
    }
    /* scrolled back past the long line, the older ones show; back is clamped to the log */
    resizeterm(30, 100);
    erase();
    cr_assert_eq(logview_draw(&a, 100, 30, 1000), 41);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "line 0") && !strstr(text, tail), "%s", text);
    free(text);
}

/* The per-host loads scroll only while a host is below the pane: Down with every host shown
 * moves nothing, and with more hosts than rows it stops when the last one is on the pane's
 * last row, so the pane is never left half empty with hosts scrolled off its top. */
Test(views, cluster_loads_scroll_stops_when_the_last_host_shows)
{
    enum { N = 30 };
    HostLoad hosts[N];
    memset(hosts, 0, sizeof hosts);
    for (int i = 0; i < N; i++) {
        snprintf(hosts[i].name, sizeof hosts[i].name, "h%02d", i);
        hosts[i].cpu = hosts[i].gpu = hosts[i].mem = hosts[i].share = NAN;
    }
    App *a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->view = VIEW_CLUSTER;
    layout_compute(100, 30, VIEW_CLUSTER, 0, &a->layout);
    cr_assert(a->layout.shown[PANE_LOADS]);
    int rows = a->layout.rect[PANE_LOADS].h - 2;
    cr_assert_gt(rows, 3);
    cr_assert_lt(rows, N);
    for (int fits = 1; fits >= 0; fits--) {
        int n = fits ? rows - 1 : N;
        a->snap = (ClusterSnapshot){.hosts = hosts, .n_hosts = (size_t)n};
        a->loads_scroll = 0;
        for (int i = 0; i < 2 * N; i++)
            view_get(VIEW_CLUSTER)->key(a, VIEW_ACT_DOWN);
        erase();
        view_get(VIEW_CLUSTER)->draw(a);
        char *text = fixture_screen_text();
        char top[8], last[8], off[8];
        snprintf(top, sizeof top, "h%02d ", fits ? 0 : N - rows);
        snprintf(last, sizeof last, "h%02d ", n - 1);
        snprintf(off, sizeof off, "h%02d ", fits ? 0 : N - rows - 1);
        cr_assert(strstr(text, top), "%s missing: %s", top, text);
        cr_assert(strstr(text, last), "%s missing: %s", last, text);
        if (!fits)
            cr_assert_null(strstr(text, off), "%s shown: %s", off, text);
        free(text);
        /* one Up shows the host above: no Down piled up past the end to take back first */
        view_get(VIEW_CLUSTER)->key(a, VIEW_ACT_UP);
        erase();
        view_get(VIEW_CLUSTER)->draw(a);
        text = fixture_screen_text();
        if (!fits)
            cr_assert(strstr(text, off), "%s missing after Up: %s", off, text);
        free(text);
    }
    free(a);
}

/* Regression: with every node out (the live console's hosts all down) jobs arrive and wait,
 * no decision starts one, and the pane said "waiting for the first arrival". */
Test(views, decisions_pane_says_jobs_wait_for_gpus_when_they_arrived)
{
    SimSchedOptions o;
    simsched_defaults(&o);
    o.nodes = 2;
    o.tick_ms = 0;
    o.catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR;
    Error err;
    App *a = calloc(1, sizeof *a);
    cr_assert_not_null(a);
    a->ss = simsched_new(&o, &err);
    cr_assert_not_null(a->ss, "%s", err.msg);
    SchedState *st = simsched_state_mut(a->ss);
    Rect box = {.y = 0, .x = 0, .h = 6, .w = 60};

    erase();
    view_timeline_draw(a, box);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "waiting for the first arrival"), "%s", text);
    free(text);

    for (int n = 0; n < 2; n++)
        cr_assert_eq(sched_drain_node_by(st, n, SCHED_DRAIN_BACKEND, 1, &err), 0, "%s", err.msg);
    cr_assert_geq(sched_advance(st, 3600, &err), 0, "%s", err.msg);
    cr_assert_eq(sched_event_count(st), 0, "no job could start");
    size_t queued = 0;
    for (size_t i = 0; i < sched_job_count(st); i++) {
        SchedJobInfo info;
        queued += sched_job_info(st, i, &info) == 0 && info.state == SCHED_JOB_QUEUED;
    }
    cr_assert_gt(queued, 1, "jobs arrived within the hour");
    char want[64];
    snprintf(want, sizeof want, "%zu jobs arrived, waiting for GPUs", queued);
    erase();
    view_timeline_draw(a, box);
    text = fixture_screen_text();
    simsched_free(a->ss);
    free(a);
    cr_assert(strstr(text, want), "expected '%s' in:\n%s", want, text);
    cr_assert(!strstr(text, "first arrival"), "%s", text);
    free(text);
}

/* Regression: a job stalled to start (its first allocation, from 0 GPUs) showed the state
 * "resize" beside its note "starting on 4", though it had never run; it says "start", and a
 * job stalled by a real resize still says "resize". */
Test(views, a_job_starting_says_start_and_one_resizing_says_resize)
{
    SimSchedOptions o;
    simsched_defaults(&o);
    o.tick_ms = 0;
    o.catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR;
    Error err;
    SimSched *ss = simsched_new(&o, &err);
    cr_assert_not_null(ss, "%s", err.msg);
    SchedState *st = simsched_state_mut(ss);
    int seen_start = 0, seen_resize = 0;
    for (int t = 0; t < 7200 && !(seen_start && seen_resize); t += 10) {
        cr_assert_geq(sched_advance(st, 10, &err), 0, "%s", err.msg);
        ClusterSnapshot snap;
        memset(&snap, 0, sizeof snap);
        simsched_snapshot(ss, &snap);
        for (size_t j = 0; j < snap.n_jobs; j++) {
            const JobRow *r = &snap.jobs[j];
            int starting = strncmp(r->note, "starting on", 11) == 0;
            int resizing = strncmp(r->note, "resize ", 7) == 0;
            if (!starting && !resizing)
                continue;
            /* that job alone in the list, drawn at 100 x 30 */
            ClusterSnapshot one = snap;
            one.jobs = &snap.jobs[j];
            one.n_jobs = 1;
            Layout l;
            layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
            erase();
            view_cluster_draw(&one, &l, 0, 0);
            char *text = fixture_screen_text();
            char want[128];
            snprintf(want, sizeof want, "%-12s %3d  %-7s ", r->name, r->gpus,
                     starting ? "start" : "resize");
            cr_assert(strstr(text, want), "t=%ds: '%s' (note '%s') not in:\n%s", t, want, r->note,
                      text);
            free(text);
            seen_start |= starting;
            seen_resize |= resizing;
        }
        free(snap.grid);
        free(snap.jobs);
    }
    simsched_free(ss);
    cr_assert(seen_start && seen_resize, "no job started or resized within two hours");
}

/* Regression: the trial table's title gave no hint of rows off its page (the job list's says
 * "11-20/60"): paged or sorted, 20 trials showed as 11 with nothing saying 9 more were above.
 * It says which rows show when not all do, and nothing when all do. */
Test(views, the_trial_table_title_says_which_rows_show_when_not_all_do)
{
    App *a = app_tuning_at_random(sim, 20);
    enum { N = 20 };
    TrialRecord recs[N];
    const TrialRecord *ptr[N];
    ok_records(recs, ptr, N, 10, 1);
    tune_view_table_alone(a);
    int rows = a->layout.rect[PANE_TRIALS].h - 3;
    cr_assert(rows > 2 && rows < N, "%d rows", rows);
    char want[64];

    trials_build(&a->table, ptr, N, TRIAL_COL_NUMBER, 0, "");
    a->sel = N - 1; /* the last page */
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    snprintf(want, sizeof want, "  rows %d-%d of %d ", N - rows + 1, N, N);
    cr_assert(strstr(text, want), "'%s' not in:\n%s", want, text);
    free(text);

    a->sel = 0; /* the first page */
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    text = fixture_screen_text();
    snprintf(want, sizeof want, "  rows 1-%d of %d ", rows, N);
    cr_assert(strstr(text, want), "'%s' not in:\n%s", want, text);
    free(text);

    trials_free(&a->table);
    trials_build(&a->table, ptr, (size_t)rows, TRIAL_COL_NUMBER, 0, ""); /* all fit */
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    text = fixture_screen_text();
    cr_assert(strstr(text, "Trials ") && !strstr(text, "  rows "), "%s", text);
    free(text);

    app_tuning_free(a, recs, N);
}

/* Regression: the W/PS column was 5 wide, so on a cluster of 100 machines or more a row's
 * "200/200" pushed its note 2-4 columns right of the header's "note" and of other rows' notes.
 * The column is as wide as its widest row, and every note starts under "note". */
Test(views, the_trial_table_lines_up_on_a_cluster_of_200_machines)
{
    Error err;
    SimCluster *big = simcluster_new("G200:resnet50", &err);
    cr_assert_not_null(big, "%s", err.msg);
    App *a = app_tuning_at_random(big, 4);
    cr_assert_eq(tuner_run_blocking(a->tuner, &err), 0, "%s", err.msg);
    size_t n = tuner_n_trials(a->tuner);
    const TrialRecord *ptr[8];
    cr_assert(n >= 2 && n <= 8, "%zu trials", n);
    int wide = 0;
    for (size_t i = 0; i < n; i++) {
        ptr[i] = tuner_trial(a->tuner, i);
        wide |= schedule_count_workers(ptr[i]->suggestion.schedule) >= 100;
    }
    cr_assert(wide, "no trial used 100 workers or more");
    trials_build(&a->table, ptr, n, TRIAL_COL_NUMBER, 0, "");
    tune_view_table_alone(a);
    a->sel = n - 1;
    view_trials_clamp_scroll(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    /* the header's "note", then each row's note ("probe: ...", "best", or none), in columns:
     * every glyph here is one column and one byte but the borders' (3 bytes) */
    int note_col = -1, rows = 0;
    char header[512] = "";
    for (char *save, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *h = strstr(line, "W/PS  note");
        if (h) {
            note_col = (int)(h - line) + 6;
            snprintf(header, sizeof header, "%s", line);
        }
        const char *at = strstr(line, "probe:");
        if (!at)
            at = strstr(line, "  best");
        if (at && strstr(line, "  ok  ") == NULL && strstr(line, "pruned") == NULL)
            continue;
        if (at && *at == ' ')
            at += 2;
        if (at && note_col >= 0) {
            cr_assert_eq((int)(at - line), note_col, "a note off its column:\n%s\n%s", header,
                         line);
            rows++;
        }
    }
    cr_assert(note_col >= 0 && rows >= 1, "no header or no note");
    free(text);
    trials_free(&a->table);
    tuner_free(a->tuner);
    free(a);
    simcluster_free(big);
}

/* Regression: the status cell was 9 columns ("cancelled"), so a row whose status is
 * "unreachable" or "interrupted" (11) pushed the rest of its row 2 columns right of the
 * header and of the other rows. Every status keeps the row's columns: each note starts under
 * "note". */
Test(views, a_trial_unreachable_or_interrupted_keeps_its_row_under_the_header)
{
    App *a = app_tuning_at_random(sim, 8);
    enum { N = 7 };
    TrialRecord recs[N];
    const TrialRecord *ptr[N];
    ok_records(recs, ptr, N, 10, 1);
    for (int i = 0; i < N; i++) { /* every status a finished trial can have */
        recs[i].obs->status = (TrialStatus)i;
        snprintf(recs[i].obs->reason, sizeof recs[i].obs->reason, "why%d", i);
    }
    trials_build(&a->table, ptr, N, TRIAL_COL_NUMBER, 0, "");
    tune_view_table_alone(a);
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "unreachable") && strstr(text, "interrupted"), "%s", text);
    int note_col = -1, rows = 0;
    for (char *save, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        const char *h = strstr(line, "W/PS  note"), *why = strstr(line, "why");
        if (h)
            note_col = (int)(h - line) + 6;
        if (why && note_col >= 0) {
            cr_assert_eq((int)(why - line), note_col, "a note off its column:\n%s", line);
            rows++;
        }
    }
    cr_assert_eq(rows, N, "%d rows with a note in:\n%s", rows, text);
    free(text);
    app_tuning_free(a, recs, N);
}

/* Regression: before any trial was measured (two failed, each with its prediction, which
 * draw the plot), the legend said "best - s", a unit after no value. It says there is none. */
Test(views, the_plot_legend_before_a_measured_trial_says_no_best_yet)
{
    App *a = app_tuning_at_random(sim, 4);
    for (int i = 0; i < 2; i++) {
        Suggestion sg;
        memset(&sg, 0, sizeof sg);
        sg.schedule = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
        sg.has_prediction = 1;
        sg.mean_s = 5 + i;
        sg.p10_s = 4 + i;
        sg.p90_s = 6 + i;
        Observation *o = observation_new(sg.schedule);
        o->status = TRIAL_FAILED;
        tuner_replay(a->tuner, &sg, o, 0);
        observation_free(o);
        schedule_free(sg.schedule);
    }
    cr_assert_eq(tuner_n_trials(a->tuner), 2);
    cr_assert_null(tuner_best(a->tuner));
    a->view = VIEW_TUNE;
    layout_compute(100, 30, VIEW_TUNE, 0, &a->layout);
    for (int p = 0; p < PANE_COUNT; p++) /* the plot alone: the other panes need a run */
        if (p != PANE_PLOT)
            a->layout.shown[p] = 0;
    erase();
    view_get(VIEW_TUNE)->draw(a);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Best-so-far"), "%s", text);
    cr_assert_null(strstr(text, "best - s"), "%s", text);
    cr_assert(strstr(text, "best: none yet  measured  predicted"), "%s", text);
    free(text);
    tuner_free(a->tuner);
    free(a);
}

/* Regression: a job's ETA in the job list was raw seconds ("7170s"), where the rest of the
 * console (a live job's retry, "4m10s") reads a span in h/m/s: the list says "4m10s", "2h00m". */
Test(views, a_jobs_eta_reads_in_hours_minutes_and_seconds)
{
    const double eta_s[] = {250, 7170, 42};
    const char *want[] = {"4m10s", "2h00m", "42s"};
    for (size_t i = 0; i < sizeof eta_s / sizeof eta_s[0]; i++) {
        JobRow job;
        memset(&job, 0, sizeof job);
        snprintf(job.name, sizeof job.name, "resnet-%zu", i);
        snprintf(job.state_name, sizeof job.state_name, "running");
        snprintf(job.history, sizeof job.history, "2>4");
        job.state = 1;
        job.gpus = 4;
        job.progress = 0.5;
        job.eta_s = eta_s[i];
        ClusterSnapshot snap;
        memset(&snap, 0, sizeof snap);
        snap.jobs = &job;
        snap.n_jobs = 1;
        Layout l;
        layout_compute(100, 30, VIEW_CLUSTER, 0, &l);
        erase();
        view_cluster_draw(&snap, &l, 0, 0);
        char *text = fixture_screen_text();
        char row[64];
        snprintf(row, sizeof row, "%6s   0  2>4", want[i]); /* eta, resizes, history */
        cr_assert(strstr(text, row), "'%s' not in:\n%s", row, text);
        free(text);
    }
}
