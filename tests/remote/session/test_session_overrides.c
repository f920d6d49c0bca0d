/* The operator's override queue in the journal: what ran is replayed once, what was dropped
 * stays dropped, and what waited comes back queued on --resume, in its order. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/session_summary.h"
#include "core/opt/optimizer.h"
#include "remote/session/session.h"
#include "tests/support/timeout.h"

static char state_dir[] = "/tmp/tunedeck-session-overrides.XXXXXX";

static char said[sizeof state_dir + 16]; /* what the resumes wrote on stderr */

/* The resumes' messages go to a file the tests read (they were printed amid `make unit`'s
 * output, as if something had gone wrong). */
static void setup(void)
{
    cr_assert_not_null(mkdtemp(state_dir));
    setenv("TUNEDECK_STATE_DIR", state_dir, 1);
    snprintf(said, sizeof said, "%s/stderr", state_dir);
    int fd = open(said, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(fd >= 0);
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", state_dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(session_overrides, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* n different valid schedules for the session's cluster (a random optimizer's). */
static void schedules(const Session *s, Schedule **out, size_t n)
{
    Error err;
    Optimizer *o = optimizer_new("random", s->cluster, s->job, 9, &err);
    cr_assert_not_null(o, "%s", err.msg);
    for (size_t i = 0; i < n; i++) {
        Suggestion sg;
        cr_assert_eq(optimizer_suggest(o, &sg, &err), 0, "%s", err.msg);
        out[i] = schedule_copy(sg.schedule);
        suggestion_clear(&sg);
    }
    optimizer_free(o);
}

/* A schedule as the journal writes it: comparable across the clusters of two sessions. */
static char *text_of(const Schedule *s)
{
    cJSON *j = schedule_to_json(s);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return t;
}

static int same(const Schedule *s, const char *text)
{
    Schedule *c = schedule_copy(s);
    c->trial = 0; /* the number it ran as is not its roles */
    char *t = text_of(c);
    schedule_free(c);
    int eq = strcmp(t, text) == 0;
    free(t);
    return eq;
}

/* The schedule of that text on this session's cluster. */
static Schedule *on(const Session *s, const char *text)
{
    cJSON *j = cJSON_Parse(text);
    Error err;
    Schedule *out = schedule_from_json(j, s->cluster, "test", &err);
    cJSON_Delete(j);
    cr_assert_not_null(out, "%s", err.msg);
    return out;
}

/* How many lines of the file hold `needle`. */
static int lines_with(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

Test(session_overrides, a_resume_runs_the_queued_overrides_left_and_none_twice)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 2,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[4];
    schedules(first, s, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(tuner_override(first->tuner, s[i], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override_drop(first->tuner, 2), 0); /* the third: never to run */
    /* the budget of 2 runs the first two; the fourth waits when the console is killed */
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(first->tuner), 2);
    cr_assert_eq(tuner_overrides(first->tuner), 1);
    char path[4096], *text[4];
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    for (int i = 0; i < 4; i++) {
        text[i] = text_of(s[i]);
        schedule_free(s[i]); /* of the first session's cluster */
    }
    session_free(first); /* no `ended` line: killed */
    cr_assert_eq(lines_with(path, "\"event\":\"override_queued\""), 4);
    cr_assert_eq(lines_with(path, "\"event\":\"override_dropped\",\"override\":3"), 1);
    cr_assert_eq(lines_with(path, "\"override\":1"), 2, "queued, then taken by trial 1");

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 4};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2, "the overrides that ran are replayed");
    cr_assert(tuner_trial(again->tuner, 0)->overridden && tuner_trial(again->tuner, 1)->overridden);
    cr_assert_eq(tuner_overrides(again->tuner), 1, "only the one that waited is queued again");
    cr_assert_eq(tuner_override_id(again->tuner, 0), 4);
    cr_assert(same(tuner_override_at(again->tuner, 0), text[3]));
    /* a new override takes an id the journal never used */
    Schedule *third_again = on(again, text[2]);
    cr_assert_eq(tuner_override(again->tuner, third_again, &err), 0, "%s", err.msg);
    schedule_free(third_again);
    cr_assert_eq(tuner_override_id(again->tuner, 1), 5);
    cr_assert_eq(tuner_run_blocking(again->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 4);
    cr_assert(same(tuner_trial(again->tuner, 0)->suggestion.schedule, text[0]));
    cr_assert(same(tuner_trial(again->tuner, 1)->suggestion.schedule, text[1]));
    cr_assert(same(tuner_trial(again->tuner, 2)->suggestion.schedule, text[3]),
              "the waiting override runs first");
    cr_assert(same(tuner_trial(again->tuner, 3)->suggestion.schedule, text[2]));
    session_journal_end(again);
    session_free(again);

    /* a second resume finds nothing left queued: each ran once */
    Session *third = session_new(1, dir);
    SessionSpec rs3 = {.budget = 5};
    cr_assert_eq(session_resume(third, path, &rs3, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(third, &rs3, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(third, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(third->tuner), 4);
    cr_assert_eq(tuner_overrides(third->tuner), 0, "nothing run is queued again");
    session_free(third);
    for (int i = 0; i < 4; i++)
        free(text[i]);
    unlink(path);
    rmdir(dir);
}

Test(session_overrides, a_queued_line_the_cluster_refuses_is_said_and_the_rest_restored)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[1];
    schedules(first, s, 1);
    tuner_set_paused(first->tuner, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    schedule_free(s[0]);
    session_free(first);
    /* a damaged queued line: its schedule lost */
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fprintf(f, "{\"event\":\"override_queued\",\"override\":2,\"wall_s\":1}\n");
    fclose(f);

    Session *again = session_new(1, dir);
    SessionSpec rs = {0};
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_overrides(again->tuner), 1, "the good one is back");
    const char *const *problems;
    size_t n = tune_journal_problems(again->journal, &problems);
    int said = 0;
    for (size_t i = 0; i < n; i++)
        said += strstr(problems[i], "override_queued") && strstr(problems[i], "schedule") &&
                strstr(problems[i], "override not restored");
    cr_assert_eq(said, 1, "the bad line is said with its line and field");
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Drops the lines of the file that hold any of the needles. */
static void drop_lines(const char *path, const char *const *needles, size_t n)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char kept[1 << 20], line[65536];
    kept[0] = 0;
    while (fgets(line, sizeof line, f)) {
        int drop = 0;
        for (size_t i = 0; i < n; i++)
            drop |= strstr(line, needles[i]) != NULL;
        if (!drop)
            strcat(kept, line);
    }
    fclose(f);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(kept, f);
    fclose(f);
}

/* Regression: the console died between an override's suggested line and its trial's start;
 * the resume marked the trial interrupted and never queued the override again, so the
 * operator's override was lost. It runs first on --resume, the budget raised for it (its
 * interrupted trial spent one), and a second resume finds it run. */
Test(session_overrides, an_override_whose_trial_never_started_runs_on_resume)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    char *text = text_of(s[0]);
    schedule_free(s[0]);
    session_free(first); /* no `ended` line: killed */
    /* killed between trial 1's suggested line and its start */
    const char *const after[] = {"\"event\":\"started\"", "\"event\":\"finished\""};
    drop_lines(path, after, 2);
    cr_assert_eq(lines_with(path, "\"event\":\"suggested\""), 1);

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 1};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 1);
    cr_assert_eq(tuner_trial(again->tuner, 0)->obs->status, TRIAL_INTERRUPTED);
    cr_assert_eq(tuner_overrides(again->tuner), 1, "the override waits again");
    cr_assert_eq(tuner_override_id(again->tuner, 0), 1);
    cr_assert_eq(tuner_budget(again->tuner), 2, "a trial more for it: trial 1 spent one");
    cr_assert_eq(tuner_run_blocking(again->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2);
    const TrialRecord *r = tuner_trial(again->tuner, 1);
    cr_assert(r->overridden && r->override_id == 1);
    cr_assert(same(r->suggestion.schedule, text));
    session_journal_end(again);
    session_free(again);
    cr_assert_eq(lines_with(path, "\"budget\":2,\"raised\":1,\"trials\":1"), 1,
                 "the raise is journaled, in the resumed line");

    Session *third = session_new(1, dir);
    SessionSpec rs3 = {.budget = 3};
    cr_assert_eq(session_resume(third, path, &rs3, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(third, &rs3, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(third, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(third->tuner), 2);
    cr_assert_eq(tuner_overrides(third->tuner), 0, "it ran: not queued again");
    session_free(third);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* A session of the sim with these trials run, its journal's path in path; the session open. */
static Session *ran(const char *dir, int budget, char *path, size_t cap)
{
    Error err;
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = budget,
                        .trial_timeout_s = 600};
    Session *s = session_new(1, dir);
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    snprintf(path, cap, "%s", tune_journal_path(s->journal));
    return s;
}

/* Resumes the journal at path, with budget when budget_set. */
static Session *resumed(const char *dir, const char *path, int budget, int budget_set)
{
    Error err;
    Session *s = session_new(1, dir);
    SessionSpec rs = {.budget = budget};
    cr_assert_eq(session_resume(s, path, &rs, budget_set, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(s, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    return s;
}

/* Regression: the budget's raise for a queued override lived only in memory, so after a
 * resume dropping the override gave nothing back and the optimizer ran a trial nobody asked
 * for. The raise is journaled beside the budget and restored; a --budget is the operator's. */
Test(session_overrides, a_raise_for_an_override_is_given_back_after_a_resume)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 3, path, sizeof path);
    cr_assert_eq(tuner_n_trials(first->tuner), 3);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    tuner_override_fit_budget(first->tuner); /* as the console does */
    cr_assert_eq(tuner_budget(first->tuner), 4);
    session_journal_end(first); /* quit */
    session_free(first);

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 4);
    cr_assert_eq(tuner_overrides(again->tuner), 1);
    cr_assert_eq(tuner_override_drop(again->tuner, 0), 0);
    cr_assert_eq(tuner_budget(again->tuner), 3, "the raise for the dropped override goes back");
    session_journal_end(again);
    session_free(again);
    Session *third = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(third->tuner), 3);
    cr_assert_eq(tuner_budget_raised(third->tuner), 0);
    session_free(third);

    /* queued again, then the operator's --budget: no raise in it to give back */
    Session *fourth = resumed(dir, path, 0, 0);
    schedules(fourth, s, 1);
    cr_assert_eq(tuner_override(fourth->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    tuner_override_fit_budget(fourth->tuner);
    session_free(fourth); /* killed: no `ended` line */
    Session *fifth = resumed(dir, path, 4, 1);
    cr_assert_eq(tuner_budget_raised(fifth->tuner), 0);
    cr_assert_eq(tuner_override_drop(fifth->tuner, 0), 0);
    cr_assert_eq(tuner_budget(fifth->tuner), 4, "--budget 4 is the operator's");
    session_free(fifth);
    unlink(path);
    rmdir(dir);
}

/* The same for the raise a resume makes for an override whose trial never started: a second
 * resume still knows it, and dropping the override gives it back. */
Test(session_overrides, a_resumes_raise_for_an_unstarted_override_outlives_a_second_resume)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    session_free(first);
    const char *const after[] = {"\"event\":\"started\"", "\"event\":\"finished\""};
    drop_lines(path, after, 2);

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 2, "raised for the override's trial");
    session_free(again); /* killed before it ran */

    Session *third = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(third->tuner), 2);
    cr_assert_eq(tuner_overrides(third->tuner), 1);
    cr_assert_eq(tuner_override_drop(third->tuner, 0), 0);
    cr_assert_eq(tuner_budget(third->tuner), 1, "the resume's raise goes back");
    session_free(third);
    unlink(path);
    rmdir(dir);
}

/* Cuts the file's last line off (a session killed before it was written). */
static void cut_last_line(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_assert(n > 1 && text[n - 1] == '\n');
    n--;
    while (n > 0 && text[n - 1] != '\n')
        n--;
    cr_assert_eq(truncate(path, (off_t)n), 0);
}

/* Regression: dropping an override wrote override_dropped, then the budget it gave back; a
 * session killed between the two lines came back with the override gone and its raise kept.
 * The override_dropped line holds the budget it leaves. */
Test(session_overrides, a_drop_cut_before_its_budget_line_still_gives_the_raise_back)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 3, path, sizeof path);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    tuner_override_fit_budget(first->tuner);
    cr_assert_eq(tuner_budget(first->tuner), 4);
    cr_assert_eq(tuner_override_drop(first->tuner, 0), 0);
    cr_assert_eq(tuner_budget(first->tuner), 3);
    session_free(first); /* killed */
    cr_assert_eq(lines_with(path, "\"event\":\"override_dropped\""), 1);
    cut_last_line(path); /* the budget line after it */
    cr_assert_eq(lines_with(path, "\"event\":\"budget\""), 1, "only the raise's is left");

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_overrides(again->tuner), 0);
    cr_assert_eq(tuner_budget(again->tuner), 3, "the drop gave the raise back");
    cr_assert_eq(tuner_budget_raised(again->tuner), 0);
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Regression: a resume raised the budget for an override whose trial never started up to the
 * last queued override's trial, past an explicit --budget (2 became 4). It raises by what the
 * unstarted one needs, and only where the budget is short. */
Test(session_overrides, a_resume_raises_only_for_the_unstarted_override)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[3];
    schedules(first, s, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(tuner_override(first->tuner, s[i], &err), 0, "%s", err.msg);
        schedule_free(s[i]);
    }
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    session_free(first);
    const char *const after[] = {"\"event\":\"started\"", "\"event\":\"finished\""};
    drop_lines(path, after, 2); /* trial 1, override 1's, never started */

    Session *again = resumed(dir, path, 2, 1);
    cr_assert_eq(tuner_overrides(again->tuner), 3);
    cr_assert_eq(tuner_budget(again->tuner), 2, "--budget 2 covers the unstarted one's trial");
    session_free(again);
    Session *third = resumed(dir, path, 1, 1);
    cr_assert_eq(tuner_budget(third->tuner), 2, "--budget 1: raised by the one trial it needs");
    session_free(third);
    unlink(path);
    rmdir(dir);
}

/* before_launch that never lets the trial go: a leftover group being stopped, for seconds. */
static int not_yet(void *ud, const Schedule *s, char *why, size_t cap)
{
    (void)ud, (void)s, (void)why, (void)cap;
    return 1;
}

/* Regression: the journal's `started` line was written when before_launch began to hold the
 * trial (stopping a leftover group on its hosts, which lasts seconds); a session killed there
 * came back with the trial "interrupted ... while it ran" and its override forgotten. The line
 * is written when the launcher is about to start the trial (TUNER_EVENT_LAUNCHED). */
Test(session_overrides, an_override_held_before_launch_when_killed_runs_on_resume)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    /* the session's journal, fed by a tuner whose hook holds every trial (the session's own
     * holds one only while its hosts stop a group, which the sim has none of) */
    TunerConfig cfg = {.cluster = first->cluster,
                       .job = first->job,
                       .optimizer = "random",
                       .seed = 3,
                       .budget = 1,
                       .launcher = launcher_find("sim"),
                       .launch = {.sim = first->sim, .seed = 3},
                       .on_event = tune_journal_on_event,
                       .before_launch = not_yet,
                       .userdata = first->journal};
    Tuner *held = tuner_new(&cfg, &err);
    cr_assert_not_null(held, "%s", err.msg);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(held, s[0], &err), 0, "%s", err.msg);
    char *text = text_of(s[0]);
    schedule_free(s[0]);
    tuner_step(held, NULL, 0, 0);
    cr_assert(tuner_running(held), "held by before_launch");
    cr_assert_eq(lines_with(path, "\"event\":\"suggested\""), 1);
    cr_assert_eq(lines_with(path, "\"event\":\"started\""), 0, "not launched: not started");
    tuner_halt(held); /* the console quit, or tune's SIGTERM */
    tuner_free(held);
    session_free(first); /* no `ended` line */

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_n_trials(again->tuner), 1);
    const Observation *o = tuner_trial(again->tuner, 0)->obs;
    cr_assert_eq(o->status, TRIAL_INTERRUPTED);
    cr_assert(strstr(o->reason, "was about to start"), "%s", o->reason);
    cr_assert_eq(tuner_overrides(again->tuner), 1, "the override waits again");
    cr_assert(same(tuner_override_at(again->tuner, 0), text));
    cr_assert_eq(tuner_budget(again->tuner), 2, "its trial raised as for any unstarted one");
    session_free(again);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* A trial that launches has its `started` line before its outcome, as before. */
Test(session_overrides, a_launched_trial_is_journaled_started)
{
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 2, path, sizeof path);
    session_free(first);
    cr_assert_eq(lines_with(path, "\"event\":\"started\""), 2);
    unlink(path);
    rmdir(dir);
}

/* Regression: queuing an override past the budget wrote override_queued, then the budget
 * raised for it; a session killed between the two lines came back with the override queued
 * and no trial left to run it (or the optimizer's trial taken by it). The override_queued line
 * holds the budget that runs it, for a resume and for `tunedeck sessions` alike. */
Test(session_overrides, a_queue_cut_before_its_budget_line_still_raises_for_it)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 3, path, sizeof path);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override_fitted(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    cr_assert_eq(tuner_budget(first->tuner), 4);
    session_free(first); /* killed */
    cut_last_line(path); /* the budget line after it */
    cr_assert_eq(lines_with(path, "\"event\":\"override_queued\""), 1);
    cr_assert_eq(lines_with(path, "\"event\":\"budget\""), 0, "only the queue's line is left");

    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    cr_assert_eq(sum.budget, 4, "tunedeck sessions: the raise is in the override_queued line");

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_overrides(again->tuner), 1);
    cr_assert_eq(tuner_budget(again->tuner), 4, "the override keeps its trial");
    cr_assert_eq(tuner_budget_raised(again->tuner), 1, "and a drop can give it back");
    cr_assert_eq(tuner_override_drop(again->tuner, 0), 0);
    cr_assert_eq(tuner_budget(again->tuner), 3);
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Replaces the first `from` in the file with `to`. */
static void replace_in(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[1 << 20], out[(1 << 20) + 256];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s", from);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(out, f);
    fclose(f);
}

/* The override_queued line's budget read as any budget line's: an older journal's line
 * without one keeps the budget before it; one that is not a budget is said with its line and
 * not used, by a resume and by `tunedeck sessions` alike (regression: it took 2.5 as 2). */
Test(session_overrides, an_override_queued_line_without_a_good_budget_keeps_the_one_before)
{
    for (size_t k = 0; k < 2; k++) {
        Error err;
        char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
        cr_assert_not_null(mkdtemp(dir));
        Session *first = ran(dir, 3, path, sizeof path);
        Schedule *s[1];
        schedules(first, s, 1);
        cr_assert_eq(tuner_override_fitted(first->tuner, s[0], &err), 0, "%s", err.msg);
        schedule_free(s[0]);
        session_free(first);
        cut_last_line(path); /* the budget line */
        replace_in(path, ",\"budget\":4,\"raised\":1}", k ? ",\"budget\":2.5}" : "}");
        /* `tunedeck sessions` reads it by the same rule (it took 2.5 as 2) */
        SessionSummary sum;
        session_summary_read(path, "id", &sum);
        cr_assert_eq(sum.budget, 3, "case %zu: tunedeck sessions", k);

        Session *again = resumed(dir, path, 0, 0);
        cr_assert_eq(tuner_overrides(again->tuner), 1);
        cr_assert_eq(tuner_budget(again->tuner), 3, "case %zu", k);
        cr_assert_eq(tuner_budget_raised(again->tuner), 0);
        const char *const *problems;
        size_t n = tune_journal_problems(again->journal, &problems);
        int said = 0;
        for (size_t i = 0; i < n; i++)
            said += strstr(problems[i], "override_queued: field 'budget'") &&
                    strstr(problems[i], "(budget not used)");
        cr_assert_eq(said, (int)k, "case %zu: the bad budget said with its line", k);
        session_free(again);
        unlink(path);
        rmdir(dir);
    }
}

/* Cuts the file after its first line holding needle (a session killed right after it). */
static void cut_after(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[65536];
    off_t at = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        at += (off_t)strlen(line);
        found = strstr(line, needle) != NULL;
    }
    fclose(f);
    cr_assert(found, "%s", needle);
    cr_assert_eq(truncate(path, at), 0);
}

/* A session of 3 trials, overrides 1 and 2 queued as the console does (budget 5, raised 2),
 * then :budget `own` when above 0, killed after trial 4 took override 1 and before it started. */
static void killed_before_override_1_started(const char *dir, char *path, size_t cap, int own)
{
    Error err;
    Session *first = ran(dir, 3, path, cap);
    Schedule *s[2];
    schedules(first, s, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(tuner_override_fitted(first->tuner, s[i], &err), 0, "%s", err.msg);
        schedule_free(s[i]);
    }
    cr_assert_eq(tuner_budget(first->tuner), 5);
    cr_assert_eq(tuner_budget_raised(first->tuner), 2);
    if (own > 0)
        tuner_set_budget(first->tuner, own);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    session_free(first);
    cut_after(path, "\"event\":\"suggested\",\"trial\":4,");
}

/* Regression: a resume with the journal's budget raised it only where the unstarted override's
 * own trial was short of it: override 1 went back as trial 5 (within the budget of 5 raised for
 * both), and override 2, raised for as trial 5, became trial 6, past the budget, and never ran.
 * The resume raises by the trial it marks interrupted, in its `resumed` line; a second resume,
 * finding the trial marked, raises nothing again. */
Test(session_overrides, a_resume_keeps_a_trial_for_every_override_raised_for)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    killed_before_override_1_started(dir, path, sizeof path, 0);

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_n_trials(again->tuner), 4);
    cr_assert_eq(tuner_overrides(again->tuner), 2);
    cr_assert_eq(tuner_override_id(again->tuner, 0), 1, "override 1 first, as trial 5");
    cr_assert_eq(tuner_budget(again->tuner), 6, "override 2 keeps a trial: 6");
    cr_assert_eq(tuner_budget_raised(again->tuner), 3);
    session_free(again); /* killed at once */
    cr_assert_eq(lines_with(path, "\"event\":\"resumed\""), 1);
    cr_assert_eq(lines_with(path, "\"budget\":6,\"raised\":3,\"trials\":4"), 1,
                 "the resumed line holds the raise");
    cr_assert_eq(lines_with(path, "\"event\":\"budget\""), 2, "the two queued ones' alone");

    Session *third = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(third->tuner), 6, "not raised again");
    cr_assert_eq(tuner_budget_raised(third->tuner), 3);
    cr_assert_eq(tuner_overrides(third->tuner), 2);
    cr_assert_eq(tuner_run_blocking(third->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(third->tuner), 6);
    cr_assert_eq(tuner_overrides(third->tuner), 0, "both ran");
    cr_assert(tuner_trial(third->tuner, 5)->overridden);
    session_free(third);
    unlink(path);
    rmdir(dir);
}

/* An override the operator's :budget left without a trial stays so: the resume raises for the
 * interrupted trial alone. */
Test(session_overrides, a_resume_does_not_fund_an_override_the_operators_budget_left_out)
{
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    killed_before_override_1_started(dir, path, sizeof path, 4);

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_n_trials(again->tuner), 4);
    cr_assert_eq(tuner_overrides(again->tuner), 2);
    cr_assert_eq(tuner_budget(again->tuner), 5, "override 1's trial, not override 2's");
    cr_assert_eq(tuner_budget_raised(again->tuner), 1);
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Regression: `:budget 4` on a budget of 4 raised 1 for an override made the raise the
 * operator's in memory only (the number did not change, so no `budget` line): after a resume
 * the journal's `raised` 1 came back, and dropping the override lowered the budget to 3. */
Test(session_overrides, a_budget_of_the_same_number_is_journaled_as_the_operators)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 3, path, sizeof path);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override_fitted(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    cr_assert_eq(tuner_budget(first->tuner), 4);
    cr_assert_eq(tuner_budget_raised(first->tuner), 1);
    tuner_set_budget(first->tuner, 4); /* the console's :budget 4 */
    cr_assert_eq(tuner_budget_raised(first->tuner), 0);
    session_free(first); /* killed */

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 4);
    cr_assert_eq(tuner_budget_raised(again->tuner), 0, "the :budget made it the operator's");
    cr_assert_eq(tuner_override_drop(again->tuner, 0), 0);
    cr_assert_eq(tuner_budget(again->tuner), 4, "nothing raised to give back");
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Regression: a :budget typed after a first resume, down to the trials done, left override 1
 * (its trial never started) without a trial; a second resume raised nothing (the interrupted
 * trial already marked), so the override came back queued and never ran, on every resume after.
 * Any resume gives an unstarted override its trial, as --budget does; the overrides behind it
 * keep the operator's :budget. */
Test(session_overrides, an_unstarted_override_the_operators_budget_left_out_runs_on_a_later_resume)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    killed_before_override_1_started(dir, path, sizeof path, 0);

    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 6);
    cr_assert_eq(tuner_override_id(again->tuner, 0), 1);
    tuner_set_budget(again->tuner, 4); /* the console's :budget 4: the trials done */
    session_journal_end(again);        /* quit */
    session_free(again);

    Session *third = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_overrides(third->tuner), 2);
    cr_assert_eq(tuner_override_id(third->tuner, 0), 1);
    cr_assert_eq(tuner_budget(third->tuner), 5, "override 1's trial, not override 2's");
    cr_assert_eq(tuner_budget_raised(third->tuner), 1,
                 "a raise a drop gives back where nothing queued behind needs it");
    cr_assert_eq(lines_with(path, "\"budget\":5,\"raised\":1,\"trials\":4"), 1,
                 "the resumed line holds the raise");
    cr_assert_eq(tuner_run_blocking(third->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(third->tuner), 5);
    cr_assert(tuner_trial(third->tuner, 4)->overridden);
    cr_assert_eq(tuner_trial(third->tuner, 4)->override_id, 1);
    cr_assert_eq(tuner_overrides(third->tuner), 1, "override 2 waits for a :budget");
    cr_assert_eq(tuner_override_id(third->tuner, 0), 2);
    session_journal_end(third);
    session_free(third);

    Session *fourth = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(fourth->tuner), 5, "override 2 is not raised for");
    cr_assert_eq(tuner_overrides(fourth->tuner), 1);
    session_free(fourth);
    unlink(path);
    rmdir(dir);
}

/* Pins a choice (docs/journal.md, "Resuming"): an override's trial that ran, whose `started`
 * and `finished` lines were both lost with the journal's tail (its `started` line torn), is
 * read as the file says: a trial that never started. It is marked interrupted with no time
 * (its measurement never counted: not the best, not observed as measured) and the override
 * runs again, once, as the next trial, the budget raised for it. Losing an fsync'd `started`
 * line is outside the journal's contract (a torn line is a write that never completed, and
 * the launch waits for it); whether the first run happened or not, its result is gone, and
 * running it again is the only way the operator gets the trial they asked for. */
Test(session_overrides, an_override_whose_started_and_finished_lines_were_lost_runs_again)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet",
                        .optimizer = "random",
                        .seed = 3,
                        .budget = 1,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    Schedule *s[1];
    schedules(first, s, 1);
    cr_assert_eq(tuner_override(first->tuner, s[0], &err), 0, "%s", err.msg);
    schedule_free(s[0]);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(first->tuner), 1);
    cr_assert_not_null(tuner_trial(first->tuner, 0)->obs);
    TrialStatus ran = tuner_trial(first->tuner, 0)->obs->status;
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    session_free(first); /* killed */
    cut_after(path, "\"event\":\"suggested\",\"trial\":1,");
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fputs("{\"event\":\"started\",\"trial\":1,\"wal", f); /* the torn tail */
    fclose(f);

    Session *again = resumed(dir, path, 0, 0);
    const char *const *problems;
    size_t n = tune_journal_problems(again->journal, &problems);
    cr_assert(n >= 1 && strstr(problems[n - 1], "torn last line"), "the torn line is said");
    cr_assert_eq(tuner_n_trials(again->tuner), 1);
    const TrialRecord *lost = tuner_trial(again->tuner, 0);
    cr_assert_eq(lost->obs->status, TRIAL_INTERRUPTED);
    cr_assert_not_null(strstr(lost->obs->reason, "was about to start"), "%s", lost->obs->reason);
    cr_assert_null(tuner_best(again->tuner), "its lost time never counted");
    cr_assert_eq(tuner_overrides(again->tuner), 1);
    cr_assert_eq(tuner_override_id(again->tuner, 0), 1);
    cr_assert_eq(tuner_budget(again->tuner), 2);
    cr_assert_eq(tuner_run_blocking(again->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2);
    const TrialRecord *r = tuner_trial(again->tuner, 1);
    cr_assert(r->overridden && r->override_id == 1);
    cr_assert_eq(r->obs->status, ran, "the same schedule on the same simulator");
    session_journal_end(again);
    session_free(again);
    cr_assert_eq(lines_with(path, "\"override\":1"), 3, "queued, and taken by trials 1 and 2");

    Session *third = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_overrides(third->tuner), 0, "it ran: not queued a third time");
    cr_assert_eq(tuner_budget(third->tuner), 2);
    session_free(third);
    unlink(path);
    rmdir(dir);
}

/* `tunedeck sessions` says the budget of the journal at path that a resume goes on with:
 * resumed here (with the journal's budget, then killed) to compare. */
static void sessions_agrees_with_resume(const char *dir, const char *path, int expected)
{
    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    cr_assert_eq(sum.resume_budget, expected, "tunedeck sessions: %ld, expected %d (%s)",
                 sum.resume_budget,
                 expected, sum.state);
    Session *s = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(s->tuner), expected, "the resume");
    session_free(s);
}

/* Regression: `tunedeck sessions` showed the last line's budget, where a resume goes on with at
 * least the trials already run and raises for an override whose trial never started: an
 * interrupted session read 3/5 (and 4/4) and resumed to 6 (and 5). It now says the resume's
 * budget, by the resume's own rule (journal_resume_budget). */
Test(session_overrides, tunedeck_sessions_says_the_budget_a_resume_goes_on_with)
{
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    /* raised for overrides 1 and 2; override 1's trial never started */
    killed_before_override_1_started(dir, path, sizeof path, 0);
    sessions_agrees_with_resume(dir, path, 6);
    sessions_agrees_with_resume(dir, path, 6); /* the trial marked: not raised again */
    unlink(path);

    /* :budget 4 left override 2 out */
    killed_before_override_1_started(dir, path, sizeof path, 4);
    sessions_agrees_with_resume(dir, path, 5);
    cr_assert_eq(lines_with(said, "tunedeck tune: of the 2 overrides queued before the session "
                                  "ended, 1 runs first and 1 waits past the budget of 5 "
                                  "(--budget 6 runs it)"),
                 1, "the resume says which waits");
    /* then a :budget down to the trials done, and quit: override 1 still gets its trial */
    Session *s = resumed(dir, path, 0, 0);
    tuner_set_budget(s->tuner, 4);
    session_journal_end(s);
    session_free(s);
    sessions_agrees_with_resume(dir, path, 5);
    unlink(path);

    /* a journal whose budget is short of its trials (cut before the lines that raised it) */
    session_free(ran(dir, 3, path, sizeof path));
    replace_in(path, "\"budget\":3", "\"budget\":2");
    sessions_agrees_with_resume(dir, path, 3);
    unlink(path);
    rmdir(dir);
}

/* Regression: a resume killed after its `resumed` line (which holds the raise for trial 4,
 * the unstarted override's) and before trial 4's `finished ... interrupted` line: the next
 * resume found the trial without an outcome, took it for fresh and raised a second time (6).
 * A trial an earlier `resumed` line lists as interrupted is marked, in the resume and in
 * `tunedeck sessions` alike. */
Test(session_overrides, a_resume_killed_before_the_interrupted_line_raises_once)
{
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    /* :budget 4 left override 2 out: the raise is for override 1 alone, to 5 */
    killed_before_override_1_started(dir, path, sizeof path, 4);
    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 5);
    session_free(again);
    const char *finished[] = {"\"event\":\"finished\",\"trial\":4,"};
    cr_assert_eq(lines_with(path, finished[0]), 1);
    drop_lines(path, finished, 1); /* killed before it was written */
    cr_assert_eq(lines_with(path, "\"interrupted\":[4]"), 1, "the resumed line lists it");
    sessions_agrees_with_resume(dir, path, 5);
    sessions_agrees_with_resume(dir, path, 5);
    unlink(path);
    rmdir(dir);
}

/* Regression: `tune --resume` said every restored override "runs first", and then ended with
 * those the operator's :budget had left without a trial still queued. It says which wait, and
 * the --budget that runs them. */
Test(session_overrides, a_resume_says_which_restored_overrides_wait_past_the_budget)
{
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    killed_before_override_1_started(dir, path, sizeof path, 4);
    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 5);
    session_free(again);
    cr_assert_eq(lines_with(said, "tunedeck tune: of the 2 overrides queued before the session "
                                  "ended, 1 runs first and 1 waits past the budget of 5 "
                                  "(--budget 6 runs it)"),
                 1);
    cr_assert_eq(lines_with(said, "run first"), 0);
    unlink(path);
    rmdir(dir);
}

/* Regression: with none of the restored overrides within the budget, `tune --resume` said
 * "of the 2 overrides ..., 0 run first and 2 wait". */
Test(session_overrides, a_resume_with_no_room_says_the_overrides_wait)
{
    Error err;
    char dir[] = "/tmp/td-session-ovr-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    Session *first = ran(dir, 3, path, sizeof path);
    Schedule *s[2];
    schedules(first, s, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(tuner_override_fitted(first->tuner, s[i], &err), 0, "%s", err.msg);
        schedule_free(s[i]);
    }
    tuner_set_budget(first->tuner, 3); /* the operator's :budget: no room left */
    session_journal_end(first);
    session_free(first);
    Session *again = resumed(dir, path, 0, 0);
    cr_assert_eq(tuner_budget(again->tuner), 3);
    cr_assert_eq(tuner_overrides(again->tuner), 2);
    session_free(again);
    cr_assert_eq(lines_with(said, "tunedeck tune: the 2 overrides queued before the session "
                                  "ended wait past the budget of 3 (--budget 5 runs them)"),
                 1);
    cr_assert_eq(lines_with(said, "0 run"), 0);
    unlink(path);
    rmdir(dir);
}
