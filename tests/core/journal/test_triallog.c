/* The trials' own output beside the journal: tags, terminal safety, the per-trial bound
 * (head as it comes, tail at the end), no file before a line, never through a link. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/journal/triallog.h"

static char dir[] = "/tmp/td-triallog-XXXXXX";
static char journal[4200];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(journal, sizeof journal, "%s/20261127-000000-abcdef.jsonl", dir);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(triallog, .init = setup, .fini = teardown);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    return text;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* 2026-11-27T06:30:01Z */
static const time_t NOW = 1795761001;

Test(triallog, lines_are_tagged_and_terminal_safe_and_the_file_is_made_at_the_first)
{
    TrialLog *l = triallog_new(journal);
    char want[4300];
    snprintf(want, sizeof want, "%s/20261127-000000-abcdef.log", dir);
    cr_assert_str_eq(triallog_path(l), want);
    triallog_end(l, 1, "ok", NOW); /* a trial that printed nothing: no file */
    cr_assert_eq(access(want, F_OK), -1);
    cr_assert_not(triallog_written(l));
    triallog_line(l, 2, "h1", "stderr", "CUDA \033[2Jerror\r", NOW);
    triallog_line(l, 2, "h2", "stdout", "bad \xff byte", NOW);
    triallog_end(l, 2, "failed: exit 3", NOW);
    cr_assert(triallog_written(l));
    cr_assert_null(triallog_error(l));
    cr_assert_eq(triallog_count(l, 2), 2);
    cr_assert_eq(triallog_count(l, 1), 0);
    struct stat st;
    cr_assert_eq(stat(want, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_str_eq(slurp(want), "2026-11-27T06:30:01Z trial 2 h1 stderr: CUDA ^[[2Jerror^M\n"
                                  "2026-11-27T06:30:01Z trial 2 h2 stdout: bad \\xFF byte\n"
                                  "2026-11-27T06:30:01Z trial 2 ended: failed: exit 3\n");
    triallog_free(l);
}

Test(triallog, a_loud_trial_keeps_its_head_and_tail_with_a_note_of_what_was_left_out)
{
    TrialLog *l = triallog_new(journal);
    char line[128];
    for (int i = 0; i < 2000; i++) {
        snprintf(line, sizeof line, "line %04d %s", i, "................................................");
        triallog_line(l, 7, "local", "stderr", line, NOW);
    }
    triallog_line(l, 7, "local", "stderr", "the last words", NOW);
    /* the head is on disk before the trial ends (a killed session keeps it) */
    const char *text = slurp(triallog_path(l));
    cr_assert(strstr(text, "line 0000"));
    cr_assert_null(strstr(text, "the last words"));
    triallog_end(l, 7, "failed: lost", NOW);
    text = slurp(triallog_path(l));
    size_t size = strlen(text);
    cr_assert_leq(size, TRIALLOG_HEAD_BYTES + TRIALLOG_TAIL_BYTES + 512, "%zu bytes", size);
    cr_assert_gt(size, TRIALLOG_HEAD_BYTES + TRIALLOG_TAIL_BYTES - 512, "%zu bytes", size);
    cr_assert(strstr(text, "line 0000"));
    cr_assert(strstr(text, "line 1999"));
    cr_assert_null(strstr(text, "line 1000"), "the middle is left out");
    const char *note = strstr(text, "lines (");
    cr_assert_not_null(note, "%s", text);
    cr_assert(strstr(text, "left out here: the log keeps each trial's first 8 and last 24 KiB"));
    cr_assert(strstr(text, "trial 7 local stderr: the last words\n2026-11-27T06:30:01Z trial 7 "
                           "ended: failed: lost\n"));
    cr_assert_eq(triallog_count(l, 7), 2001);
    cr_assert_eq(count(text, " ended: "), 1);
    triallog_free(l);
}

Test(triallog, a_long_line_is_cut_and_says_so)
{
    TrialLog *l = triallog_new(journal);
    char *big = malloc(5000);
    memset(big, 'x', 4999);
    big[4999] = 0;
    triallog_line(l, 1, "local", "stdout", big, NOW);
    free(big);
    const char *text = slurp(triallog_path(l));
    cr_assert(strstr(text, " [3975 more bytes cut]\n"), "%s", text);
    cr_assert_lt(strlen(text), TRIALLOG_LINE_MAX + 200);
    triallog_free(l);
}

Test(triallog, a_resumed_session_appends_and_a_new_trials_line_ends_the_last_ones_part)
{
    TrialLog *l = triallog_new(journal);
    triallog_line(l, 1, "local", "stderr", "first run", NOW);
    triallog_free(l); /* killed: trial 1 never ended */
    l = triallog_new(journal);
    triallog_line(l, 2, "local", "stderr", "second run", NOW);
    triallog_line(l, 3, "local", "stderr", "next trial", NOW);
    triallog_end(l, 3, "ok", NOW);
    const char *text = slurp(triallog_path(l));
    cr_assert(strstr(text, "first run\n"));
    cr_assert(strstr(text, "second run\n") > strstr(text, "first run\n"));
    cr_assert(strstr(text, "next trial\n") > strstr(text, "second run\n"));
    triallog_free(l);
}

Test(triallog, a_link_in_its_place_is_never_followed)
{
    char target[4300], path[4300];
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    snprintf(path, sizeof path, "%s/20261127-000000-abcdef.log", dir);
    cr_assert_eq(symlink(target, path), 0);
    TrialLog *l = triallog_new(journal);
    triallog_line(l, 1, "local", "stderr", "secret", NOW);
    cr_assert_not_null(triallog_error(l));
    cr_assert(strstr(triallog_error(l), path), "%s", triallog_error(l));
    cr_assert_not(triallog_written(l));
    cr_assert_eq(access(target, F_OK), -1, "nothing written through the link");
    triallog_free(l);
}

/* A trial printing `lines` lines of about 100 bytes, then ending with `outcome`. */
static void trial(TrialLog *l, int n, int lines, const char *outcome)
{
    char line[128];
    for (int i = 0; i < lines; i++) {
        snprintf(line, sizeof line, "trial-%04d line %03d %s", n, i,
                 "..............................................................");
        triallog_line(l, n, "h1", "stderr", line, NOW);
    }
    triallog_end(l, n, outcome, NOW);
}

static off_t size_of(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return st.st_size;
}

Test(triallog, the_whole_log_is_bounded_keeping_the_latest_and_the_failed_trials_whole)
{
    TrialLog *l = triallog_new(journal);
    triallog_set_total(l, TRIALLOG_TOTAL_MIN);
    /* 300 trials of ~3 KiB each (~900 KiB unbounded); every 25th fails */
    for (int n = 1; n <= 300; n++) {
        trial(l, n, 30, n % 25 == 0 ? "failed: exit 1" : "ok");
        cr_assert_leq(size_of(triallog_path(l)), TRIALLOG_TOTAL_MIN, "after trial %d", n);
    }
    const char *text = slurp(triallog_path(l));
    cr_assert_null(triallog_error(l), "%s", triallog_error(l));
    /* the latest trials, whole */
    cr_assert(strstr(text, "trial-0300 line 000"));
    cr_assert(strstr(text, "trial-0300 line 029"));
    cr_assert(strstr(text, "trial-0290 line 000"));
    /* the failed ones, whole, from long before */
    cr_assert(strstr(text, "trial-0025 line 000"), "the first failed trial is kept");
    cr_assert(strstr(text, "trial-0025 line 029"));
    cr_assert(strstr(text, "trial 25 ended: failed: exit 1"));
    /* an old one that went well is left out, and the log says where */
    cr_assert_null(strstr(text, "trial-0001 line"));
    cr_assert(strstr(text, " trials 1-24 left out here (720 lines): the log keeps at most"),
              "%.400s", text);
    cr_assert(triallog_left_out(l, 1));
    cr_assert_eq(triallog_count(l, 1), 0);
    cr_assert_not(triallog_left_out(l, 25));
    cr_assert_eq(triallog_count(l, 25), 30);
    cr_assert_eq(triallog_count(l, 300), 30);
    triallog_free(l);
}

Test(triallog, a_resume_reads_the_log_back_its_counts_and_its_bound_hold_across_runs)
{
    TrialLog *l = triallog_new(journal);
    triallog_set_total(l, TRIALLOG_TOTAL_MIN);
    for (int n = 1; n <= 150; n++)
        trial(l, n, 30, n == 7 ? "failed: exit 1" : "ok");
    trial(l, 151, 2000, "failed: lost"); /* a loud one: its middle left out */
    triallog_line(l, 152, "h1", "stderr", "killed here", NOW); /* never ended */
    triallog_free(l);
    /* the next run of the session */
    l = triallog_new(journal);
    triallog_set_total(l, TRIALLOG_TOTAL_MIN);
    cr_assert(triallog_written(l), "an earlier run's log is worth naming");
    cr_assert_eq(triallog_count(l, 7), 30);
    cr_assert_eq(triallog_count(l, 150), 30);
    cr_assert_eq(triallog_count(l, 151), 2000);
    cr_assert_eq(triallog_count(l, 152), 1);
    cr_assert(triallog_left_out(l, 1));
    for (int n = 153; n <= 400; n++) {
        trial(l, n, 30, "ok");
        cr_assert_leq(size_of(triallog_path(l)), TRIALLOG_TOTAL_MIN, "after trial %d", n);
    }
    const char *text = slurp(triallog_path(l));
    /* the failed ones of the first run, and the killed one, survive both runs' rewrites */
    cr_assert(strstr(text, "trial-0007 line 029"));
    cr_assert(strstr(text, "trial 152 h1 stderr: killed here"));
    cr_assert(strstr(text, "trial-0151 line 1999"));
    cr_assert(strstr(text, "trial-0400 line 029"));
    cr_assert_eq(triallog_count(l, 7), 30);
    cr_assert_eq(triallog_count(l, 151), 2000);
    cr_assert_eq(triallog_count(l, 400), 30);
    /* the notes of both runs' rewrites became one per stretch left out */
    cr_assert_null(strstr(strstr(text, " left out here (") + 1, "trials 1-6"), "%s", text);
    triallog_free(l);
    l = triallog_new(journal);
    cr_assert_eq(triallog_count(l, 151), 2000);
    cr_assert_eq(triallog_count(l, 152), 1);
    cr_assert(triallog_left_out(l, 2));
    cr_assert(triallog_left_out(l, 160));
    triallog_free(l);
}

Test(triallog, a_killed_runs_half_line_is_ended_before_the_next_runs_first)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/20261127-000000-abcdef.log", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("2026-11-27T06:30:01Z trial 1 h1 stderr: whole\n2026-11-27T06:30:01Z trial 1 h1 std", f);
    fclose(f);
    chmod(path, 0600);
    TrialLog *l = triallog_new(journal);
    cr_assert_eq(triallog_count(l, 1), 2, "the half line is one the trial printed");
    triallog_line(l, 2, "h1", "stderr", "next run", NOW);
    cr_assert_str_eq(slurp(path), "2026-11-27T06:30:01Z trial 1 h1 stderr: whole\n"
                                  "2026-11-27T06:30:01Z trial 1 h1 std\n"
                                  "2026-11-27T06:30:01Z trial 2 h1 stderr: next run\n");
    triallog_free(l);
}
