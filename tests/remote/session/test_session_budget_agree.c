/* `tunedeck sessions` says the budget a resume goes on with: on random journals (a session's
 * lines, then queued, dropped, suggested, started, finished, resumed and budget lines as a
 * console and its resumes write them, damaged ones among them: a repeated id, a stray lower
 * trial number, a trial number past 1e6, a resume killed before its `finished` lines), the
 * summary's resume_budget is the budget the resume takes. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/session_summary.h"
#include "core/journal/journal_override.h"
#include "core/journal/journal_trial.h"
#include "core/opt/optimizer.h"
#include "remote/session/session.h"
#include "tests/support/timeout.h"

static char state_dir[] = "/tmp/tunedeck-budget-agree.XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(state_dir));
    setenv("TUNEDECK_STATE_DIR", state_dir, 1);
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", state_dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(session_budget_agree, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static void add(FILE *f, cJSON *ev)
{
    char *line = cJSON_PrintUnformatted(ev);
    fprintf(f, "%s\n", line);
    free(line);
    cJSON_Delete(ev);
}

static cJSON *with_budget(cJSON *ev, int budget)
{
    cJSON_AddNumberToObject(ev, "budget", budget);
    return ev;
}

static cJSON *finished(int trial, const Schedule *s, TrialStatus status)
{
    Observation *o = observation_new(s);
    o->status = status;
    o->time_s = status == TRIAL_OK ? 0.5 : -1;
    cJSON *j = journal_finished_json(trial, o);
    observation_free(o);
    return j;
}

/* A line the cluster refuses, as a damaged or edited line has it: a device the machine does
 * not have, no schedule object at all, or (a suggested line) a left-out machine it does not
 * have. */
static cJSON *refused(cJSON *ev, int how)
{
    cJSON *sj = cJSON_GetObjectItemCaseSensitive(ev, "schedule");
    const cJSON *event = cJSON_GetObjectItemCaseSensitive(ev, "event");
    if (how % 3 == 2 && cJSON_IsString(event) && !strcmp(event->valuestring, "suggested")) {
        /* its left-out machines: one the cluster does not have (both must read the field) */
        cJSON *names = cJSON_AddArrayToObject(ev, "left_out");
        cJSON_AddItemToArray(names, cJSON_CreateString("nosuchhost"));
        return ev;
    }
    if (how % 2) {
        cJSON_ReplaceItemInObjectCaseSensitive(ev, "schedule", cJSON_CreateNumber(5));
        return ev;
    }
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sj, "machines"), 0);
    cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "devices"), 0);
    cr_assert_not_null(d);
    cJSON_ReplaceItemInObjectCaseSensitive(d, "id", cJSON_CreateString("gpu9"));
    return ev;
}

/* A queued or suggested line, its schedule refused now and then when `refusing`. */
static cJSON *maybe_refused(unsigned *seed, int refusing, cJSON *ev)
{
    return refusing && rand_r(seed) % 4 == 0 ? refused(ev, rand_r(seed)) : ev;
}

/* Random lines after the session's: what a console, killed now and then, and its resumes
 * write; with `refusing`, some queued and suggested lines have a schedule a resume refuses. */
static void random_tail(unsigned *seed, FILE *f, const Schedule *s, int trial, int refusing)
{
    int next_id = 1, queued[64], nq = 0, budget = 3;
    int open_trials[64], nopen = 0; /* no outcome yet: a real resume names them all */
    for (int step = 0, steps = 2 + rand_r(seed) % 14; step < steps; step++) {
        int r = rand_r(seed) % 100;
        if (r < 25 && nq < 64) {
            int id = rand_r(seed) % 10 == 0 && next_id > 1 ? next_id - 1 : next_id++;
            cJSON *j = maybe_refused(seed, refusing, journal_override_queued_json(id, s));
            add(f, rand_r(seed) % 2 ? with_budget(j, ++budget) : j);
            queued[nq++] = id;
        } else if (r < 32 && nq) {
            add(f, journal_override_dropped_json(queued[rand_r(seed) % nq]));
        } else if (r < 38) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "event", "budget");
            budget = 1 + rand_r(seed) % 12;
            add(f, with_budget(j, budget));
        } else {
            int number = ++trial;
            if (rand_r(seed) % 12 == 0)
                number = trial += 1000000; /* past 1e6: a resume keeps it */
            else if (rand_r(seed) % 12 == 0)
                number = trial - 2; /* a stray lower number: a resume skips the line */
            Suggestion sg;
            memset(&sg, 0, sizeof sg);
            sg.schedule = (Schedule *)s;
            int id = nq && rand_r(seed) % 2 ? queued[rand_r(seed) % nq] : 0;
            add(f,
                maybe_refused(seed, refusing, journal_suggested_json(number, id > 0, id, &sg, 0)));
            /* its lines kept: 0 none, 1 started, 2 and an outcome, 3 the interrupted a resume
             * gives, 4 a resume's `resumed` line naming it and no more (killed there) */
            int fate = rand_r(seed) % 5;
            while (rand_r(seed) % 3 == 0 && nq < 64) { /* queued while it starts */
                add(f, journal_override_queued_json(next_id, s));
                queued[nq++] = next_id++;
            }
            if (fate == 1 || fate == 2)
                add(f, journal_started_json(number));
            if (fate == 2)
                add(f, finished(number, s, TRIAL_OK));
            if (fate == 3)
                add(f, finished(number, s, TRIAL_INTERRUPTED));
            if ((fate == 0 || fate == 1) && number == trial && nopen < 64)
                open_trials[nopen++] = number;
            if (fate == 4) {
                cJSON *j = cJSON_CreateObject();
                cJSON_AddStringToObject(j, "event", "resumed");
                cJSON_AddNumberToObject(j, "budget", budget);
                cJSON *in = cJSON_AddArrayToObject(j, "interrupted");
                /* the earlier trials still without an outcome too: a fate-0 trial that took
                 * an override and was followed by more suggested lines is named only here */
                for (int i = 0; i < nopen; i++)
                    cJSON_AddItemToArray(in, cJSON_CreateNumber(open_trials[i]));
                cJSON_AddItemToArray(in, cJSON_CreateNumber(number));
                add(f, j);
                if (rand_r(seed) % 2) /* not killed: its `finished` lines follow */
                    for (int i = 0; i < nopen; i++)
                        add(f, finished(open_trials[i], s, TRIAL_INTERRUPTED));
                nopen = 0;
            }
        }
    }
}

/* A journal at path: base, then random_tail's lines after trial 3; its text, kept until the
 * next call (the assertions show it). */
static const char *damaged_journal(const char *path, const char *base, unsigned *seed,
                                   const Schedule *s, int refusing)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(base, f);
    random_tail(seed, f, s, 3, refusing);
    fclose(f);
    static char text[1 << 18];
    f = fopen(path, "r");
    cr_assert_not_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    return text;
}

/* A session of 3 trials run to its end in a scratch folder made from the template `dir`:
 * its journal's lines but its `ended` in `lines` (cap bytes), its first trial's schedule in
 * *s (the session's: lines written for it need it). Caller frees the session (session_free)
 * and removes the folder. */
static Session *session_run(char *dir, char *lines, size_t cap, const Schedule **s)
{
    Error err;
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = {.sim = "B:googlenet", .optimizer = "random", .seed = 3, .budget = 3,
                        .trial_timeout_s = 600};
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    *s = tuner_trial(first->tuner, 0)->suggestion.schedule;
    FILE *f = fopen(tune_journal_path(first->journal), "r");
    cr_assert_not_null(f);
    static char line[1 << 14];
    size_t len = 0;
    lines[0] = 0;
    while (fgets(line, sizeof line, f))
        if (!strstr(line, "\"event\":\"ended\"")) {
            size_t n = strlen(line);
            cr_assert_lt(len + n, cap, "the session's journal outgrew the test's buffer");
            memcpy(lines + len, line, n + 1);
            len += n;
        }
    fclose(f);
    return first;
}

/* Frees session_run's session; removes its journal and the scratch folder. */
static void session_gone(Session *first, const char *dir)
{
    char own[4096], cmd[4200];
    snprintf(own, sizeof own, "%s", tune_journal_path(first->journal));
    session_free(first);
    unlink(own);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A resume of the journal at path, as `tunedeck tune --resume` opens it, its stderr (the
 * resume's problems) quiet; what and text name the journal where it fails. Caller frees. */
static Session *resume_of(const char *dir, const char *path, const char *what, const char *text)
{
    Error err;
    int quiet = open("/dev/null", O_WRONLY), saved = dup(2);
    dup2(quiet, 2);
    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 0};
    int rc = session_resume(again, path, &rs, 0, &err);
    if (rc == 0)
        rc = session_open(again, &rs, &err);
    if (rc == 0)
        rc = session_journal_begin(again, &err);
    dup2(saved, 2);
    close(quiet);
    close(saved);
    cr_assert_eq(rc, 0, "%s: %s\n%s", what, err.msg, text);
    return again;
}

static int resume_budget_of(const char *dir, const char *path)
{
    Session *again = resume_of(dir, path, path, "");
    int budget = tuner_budget(again->tuner);
    session_free(again);
    return budget;
}

Test(session_budget_agree, sessions_says_the_budget_the_resume_takes)
{
    char dir[] = "/tmp/td-budget-agree-XXXXXX", path[4096];
    static char base[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, base, sizeof base, &s);
    /* another file: first holds its own (in use), and its schedule is needed for the lines */
    snprintf(path, sizeof path, "%s/agree.jsonl", dir);

    unsigned seed = 11;
    int raised_seen = 0;
    for (int k = 0; k < 120; k++) {
        const char *text = damaged_journal(path, base, &seed, s, 0);
        SessionSummary sum;
        session_summary_read(path, "id", &sum);
        char what[32];
        snprintf(what, sizeof what, "journal %d", k);
        Session *again = resume_of(dir, path, what, text);
        cr_assert_eq(sum.resume_budget, tuner_budget(again->tuner),
                     "journal %d: sessions says %ld, the resume takes %d:\n%s", k,
                     sum.resume_budget, tuner_budget(again->tuner), text);
        raised_seen += sum.resume_budget > sum.budget;
        session_free(again);
    }
    cr_assert_gt(raised_seen, 5, "the journals reach the raise");
    session_gone(first, dir);
}

/* Override 1 taken by trial 4, which never started, and trial 5 suggested after it (a damaged
 * journal), override 2 still queued: the resume names both in its `interrupted` and writes
 * their `finished` lines. Those lines come after trial 4 was settled, and still mark it: no
 * second raise, killed before its `finished` lines or not, and sessions says so too. */
Test(session_budget_agree, a_later_mark_of_a_settled_trial_counts)
{
    char dir[] = "/tmp/td-budget-later-XXXXXX", path[4096];
    static char text[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, text, sizeof text, &s);
    snprintf(path, sizeof path, "%s/later.jsonl", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    add(f, journal_override_queued_json(1, s));
    add(f, journal_override_queued_json(2, s)); /* room under the cap for a second raise */
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    add(f, journal_suggested_json(4, 1, 1, &sg, 0));
    add(f, journal_suggested_json(5, 0, 0, &sg, 0));
    fclose(f);

    int raised = resume_budget_of(dir, path); /* writes resumed{interrupted:[4,5]}, finished */
    f = fopen(path, "r");
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    char *resumed = strstr(text, "\"event\":\"resumed\"");
    cr_assert_not_null(resumed, "%s", text);
    cr_assert_not_null(strstr(resumed, "\"status\":\"interrupted\""), "%s", text);
    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    cr_assert_eq(sum.resume_budget, raised, "sessions says %ld after the resume's %d:\n%s",
                 sum.resume_budget, raised, text);
    int again = resume_budget_of(dir, path);
    cr_assert_eq(again, raised, "the next resume takes %d, not %d:\n%s", again, raised, text);

    /* killed after its `resumed` line: the next resume finds the marks there */
    f = fopen(path, "r");
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    resumed = strstr(text, "\"event\":\"resumed\"");
    char *cut = strchr(resumed, '\n');
    cr_assert_not_null(cut);
    f = fopen(path, "w");
    fwrite(text, 1, (size_t)(cut + 1 - text), f);
    fclose(f);
    session_summary_read(path, "id", &sum);
    again = resume_budget_of(dir, path);
    cr_assert_eq(again, raised, "killed, the next resume takes %d, not %d", again, raised);
    cr_assert_eq(sum.resume_budget, raised, "killed, sessions says %ld, not %d",
                 sum.resume_budget, raised);
    session_gone(first, dir);
}

/* The trials a resume replays, read from the journal at path (before the resume appends to
 * it): how many it keeps and how many of those have an outcome. */
static void replayed(const char *path, const Cluster *c, size_t *kept, size_t *finished)
{
    JournalLog log;
    JournalTrials jt;
    Error err;
    cr_assert_eq(journal_load(path, &log, &err), 0, "%s", err.msg);
    cr_assert_eq(journal_trials_decode(&log, c, path, &jt, &err), 0, "%s", err.msg);
    *kept = jt.n;
    *finished = 0;
    for (size_t i = 0; i < jt.n; i++)
        *finished += jt.trials[i].obs != NULL;
    journal_trials_clear(&jt);
    journal_log_clear(&log);
}

/* Queued and suggested lines whose schedule a resume refuses (a device the cluster lacks, or
 * no schedule object), among the random damage above: `sessions` counts the trials the resume
 * replays, their outcomes, and says the budget it takes, on the same reading of each line. */
Test(session_budget_agree, a_schedule_the_resume_refuses_is_refused_in_sessions_too)
{
    char dir[] = "/tmp/td-budget-refused-XXXXXX", path[4096];
    static char base[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, base, sizeof base, &s);
    snprintf(path, sizeof path, "%s/refused.jsonl", dir);

    int quiet = open("/dev/null", O_WRONLY), saved = dup(2);
    unsigned seed = 5;
    int refused_seen = 0;
    for (int k = 0; k < 120; k++) {
        const char *text = damaged_journal(path, base, &seed, s, 1);
        SessionSummary sum;
        session_summary_read(path, "id", &sum);
        size_t kept, finished;
        dup2(quiet, 2);
        replayed(path, first->cluster, &kept, &finished);
        dup2(saved, 2);
        char what[32];
        snprintf(what, sizeof what, "journal %d", k);
        Session *again = resume_of(dir, path, what, text);
        cr_assert_eq((size_t)sum.suggested, kept,
                     "journal %d: sessions counts %d trials, the resume replays %zu:\n%s", k,
                     sum.suggested, kept, text);
        cr_assert_eq((size_t)sum.finished, finished,
                     "journal %d: sessions counts %d finished, the resume %zu:\n%s", k,
                     sum.finished, finished, text);
        cr_assert_eq(sum.resume_budget, tuner_budget(again->tuner),
                     "journal %d: sessions says %ld, the resume takes %d:\n%s", k,
                     sum.resume_budget, tuner_budget(again->tuner), text);
        /* the budget counts the trials replayed: never one past its end */
        cr_assert_geq(tuner_budget(again->tuner), (int)tuner_n_trials(again->tuner),
                      "journal %d: the resume starts at %zu/%d:\n%s", k,
                      tuner_n_trials(again->tuner), tuner_budget(again->tuner), text);
        refused_seen += strstr(text, "\"gpu9\"") != NULL;
        session_free(again);
    }
    close(quiet);
    close(saved);
    cr_assert_gt(refused_seen, 20, "the journals hold refused schedules");
    session_gone(first, dir);
}

/* Out of order (a damaged journal): trial 5's line, its schedule refused, before trial 4's,
 * which takes override 1 and never starts; overrides 2 and 3 wait behind it, the budget 6. The
 * resume keeps trial 4 (5 was refused, so 4 follows 3) and marks it interrupted now: the
 * override's trial is spent, so the budget is raised for it, to 7. Counting trial 5 instead
 * (its number alone) left trial 4 a stray, no raise made, and the mark written: the raise was
 * lost for every later resume. `sessions` says 7 too, and the next resume keeps it. */
Test(session_budget_agree, an_out_of_order_refused_line_leaves_the_next_trial_fresh)
{
    char dir[] = "/tmp/td-budget-order-XXXXXX", path[4096];
    static char text[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, text, sizeof text, &s);
    snprintf(path, sizeof path, "%s/order.jsonl", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    for (int id = 1; id <= 3; id++)
        add(f, journal_override_queued_json(id, s));
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "event", "budget");
    add(f, with_budget(b, 6));
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    add(f, refused(journal_suggested_json(5, 0, 0, &sg, 0), 0));
    add(f, journal_suggested_json(4, 1, 1, &sg, 0));
    fclose(f);

    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    int quiet = open("/dev/null", O_WRONLY), saved = dup(2);
    dup2(quiet, 2);
    int raised = resume_budget_of(dir, path);
    dup2(saved, 2);
    f = fopen(path, "r");
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    cr_assert_eq(raised, 7, "the resume takes %d:\n%s", raised, text);
    cr_assert_not_null(
        strstr(text, "{\"event\":\"finished\",\"trial\":4,\"status\":\"interrupted\""), "%s", text);
    cr_assert_eq(sum.suggested, 4, "sessions counts %d trials", sum.suggested);
    cr_assert_eq(sum.resume_budget, 7, "sessions says %ld", sum.resume_budget);
    dup2(quiet, 2);
    int again = resume_budget_of(dir, path);
    dup2(saved, 2);
    close(quiet);
    close(saved);
    cr_assert_eq(again, 7, "the next resume takes %d:\n%s", again, text);
    session_gone(first, dir);
}

/* Regression: the trials a resume's budget counts were counted by their numbers alone, a line
 * it then refuses included. Out of order (trial 6's suggested line, its schedule refused,
 * before trials 4 and 5's, as a crash between writes can leave them) 4 and 5 were strays to
 * the count and trials to the replay: 4 counted, 5 kept, and the resume of a journal whose
 * budget (3) it had run past started at 5/4, past its end; `--budget 4` was taken. The count
 * is the replay's: 5. */
Test(session_budget_agree, a_refused_line_out_of_order_leaves_the_budget_at_the_trials_kept)
{
    char dir[] = "/tmp/td-budget-stray-XXXXXX", path[4096];
    static char text[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, text, sizeof text, &s);
    snprintf(path, sizeof path, "%s/stray.jsonl", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    add(f, refused(journal_suggested_json(6, 0, 0, &sg, 0), 0));
    for (int trial = 4; trial <= 5; trial++) {
        add(f, journal_suggested_json(trial, 0, 0, &sg, 0));
        add(f, journal_started_json(trial));
        add(f, finished(trial, s, TRIAL_OK));
    }
    fclose(f);

    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    int quiet = open("/dev/null", O_WRONLY), saved = dup(2);
    dup2(quiet, 2);
    Error err;
    Session *under = session_new(1, dir);
    SessionSpec four = {.budget = 4};
    int rc = session_resume(under, path, &four, 1, &err);
    session_free(under);
    Session *again = resume_of(dir, path, path, "");
    dup2(saved, 2);
    close(quiet);
    close(saved);
    cr_assert_eq(rc, -1, "--budget 4 under the 5 trials the resume keeps was taken");
    cr_assert_not_null(strstr(err.msg, "already has 5 trials"), "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 5, "the replay keeps trials 1 to 5");
    cr_assert_eq(tuner_budget(again->tuner), 5, "the resume starts at %zu/%d",
                 tuner_n_trials(again->tuner), tuner_budget(again->tuner));
    cr_assert_eq(sum.suggested, 5, "sessions counts %d trials", sum.suggested);
    cr_assert_eq(sum.resume_budget, 5, "sessions says %ld", sum.resume_budget);
    session_free(again);
    session_gone(first, dir);
}

/* Regression: in order, a refused trial 4 (it ran, its schedule is not one the cluster takes)
 * was counted too: the resume of a journal that had run past its budget (3) went on to 5 with
 * 4 trials kept, and ran one more. The budget counts the trials kept: 4, none more to run. */
Test(session_budget_agree, a_refused_line_is_not_a_trial_the_budget_counts)
{
    char dir[] = "/tmp/td-budget-inorder-XXXXXX", path[4096];
    static char text[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, text, sizeof text, &s);
    snprintf(path, sizeof path, "%s/inorder.jsonl", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    for (int trial = 4; trial <= 5; trial++) {
        cJSON *j = journal_suggested_json(trial, 0, 0, &sg, 0);
        add(f, trial == 4 ? refused(j, 0) : j);
        add(f, journal_started_json(trial));
        add(f, finished(trial, s, TRIAL_OK));
    }
    fclose(f);

    SessionSummary sum;
    session_summary_read(path, "id", &sum);
    Session *again = resume_of(dir, path, path, ""); /* it quiets stderr itself */
    cr_assert_eq(tuner_n_trials(again->tuner), 4, "the replay keeps trials 1, 2, 3 and 5");
    cr_assert_eq(tuner_budget(again->tuner), 4, "the resume goes on to %d with %zu trials",
                 tuner_budget(again->tuner), tuner_n_trials(again->tuner));
    cr_assert_eq(sum.resume_budget, 4, "sessions says %ld", sum.resume_budget);
    session_free(again);
    session_gone(first, dir);
}

/* Regression: `sessions` took a finished line the resume refuses: an ok time under protocol
 * v1's least (1e-6 s), or a per-device array of the wrong length or with a value that is no
 * time. Its best was that line's time (5e-7 s), its count of finished trials one more, where
 * the resume replays the trial unfinished (interrupted). Both read the line alike now. */
Test(session_budget_agree, a_finished_line_the_resume_refuses_is_no_best_in_sessions)
{
    char dir[] = "/tmp/td-budget-best-XXXXXX", path[4096];
    static char base[1 << 16];
    const Schedule *s;
    Session *first = session_run(dir, base, sizeof base, &s);
    snprintf(path, sizeof path, "%s/best.jsonl", dir);
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    int quiet = open("/dev/null", O_WRONLY), saved = dup(2);
    for (int k = 0; k < 3; k++) {
        FILE *f = fopen(path, "w");
        fputs(base, f);
        add(f, journal_suggested_json(4, 0, 0, &sg, 0));
        add(f, journal_started_json(4));
        cJSON *j = finished(4, s, TRIAL_OK);
        cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "device_time_s");
        cJSON_ReplaceItemInObjectCaseSensitive(j, "time_s",
                                               cJSON_CreateNumber(k == 0 ? 5e-7 : 1e-3));
        if (k == 1)
            cJSON_DeleteItemFromArray(d, 0);
        if (k == 2)
            cJSON_ReplaceItemInArray(d, 0, cJSON_CreateNumber(-2));
        add(f, j);
        fclose(f);

        SessionSummary sum;
        session_summary_read(path, "id", &sum);
        size_t kept, done;
        dup2(quiet, 2);
        replayed(path, first->cluster, &kept, &done);
        Session *again = resume_of(dir, path, path, "");
        dup2(saved, 2);
        const TrialRecord *best = tuner_best(again->tuner);
        cr_assert_not_null(best);
        cr_assert_eq(done, 3, "case %d: the resume refuses trial 4's outcome", k);
        cr_assert_eq((size_t)sum.suggested, tuner_n_trials(again->tuner), "case %d", k);
        cr_assert_eq((size_t)sum.finished, done, "case %d: sessions counts %d finished", k,
                     sum.finished);
        cr_assert_eq(sum.best_s, best->obs->time_s,
                     "case %d: sessions' best is %g s, the resume's %g s", k, sum.best_s,
                     best->obs->time_s);
        cr_assert_gt(sum.problems, 0, "case %d: the refused line is a problem", k);
        session_free(again);
        unlink(path);
    }
    close(quiet);
    close(saved);
    session_gone(first, dir);
}
