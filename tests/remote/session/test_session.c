/* One session module for `tune` and the console: spec -> cluster, launcher, pool, tuner,
 * journal; a resumed spec comes back from the journal. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/session/session.h"
#include "remote/session/session_priv.h"
#include "tests/support/fixtures.h"
#include "tests/support/marked.h"
#include "tests/support/ownkill.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

#define LOOPBACK TUNEDECK_SOURCE_DIR "/examples/loopback-cluster.json"
#define TINY_JOB TUNEDECK_SOURCE_DIR "/examples/tiny-job.json"

static char state_dir[] = "/tmp/tunedeck-session-test.XXXXXX";

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

TestSuite(session, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static SessionSpec sim_spec(int budget)
{
    SessionSpec s = {.sim = "B:googlenet",
                     .optimizer = "random",
                     .seed = 3,
                     .budget = budget,
                     .trial_timeout_s = 600};
    return s;
}

typedef struct {
    int finished;
} Seen;

static void count_finished(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)rec;
    ((Seen *)ud)->finished += ev == TUNER_EVENT_FINISHED;
}

Test(session, the_simulator_gets_the_sim_launcher_and_no_pool)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = sim_spec(2);
    Seen seen = {0};
    spec.on_event = count_finished;
    spec.userdata = &seen;
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_str_eq(s->launcher, "sim");
    cr_assert_null(s->pool);
    cr_assert_not_null(s->sim);
    cr_assert_not_null(s->tuner);
    cr_assert_eq(session_journal_begin(s, &err), 0, "no journal asked: nothing to begin");
    cr_assert_not(s->journal_open);
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(s->tuner), 2);
    cr_assert_eq(seen.finished, 2, "the caller hears every event after the journal");
    cr_assert_str_eq(tune_journal_id(s->journal), "");
    session_free(s);
}

Test(session, an_unknown_launcher_is_named_with_the_choices)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = sim_spec(1);
    spec.launcher = "carrier-pigeon";
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), -1);
    cr_assert_not_null(strstr(err.msg, "--launcher: unknown launcher 'carrier-pigeon'"), "%s",
                       err.msg);
    cr_assert_not_null(strstr(err.msg, "per-host"), "%s", err.msg);
    cr_assert_null(s->tuner);
    session_free(s);
}

Test(session, the_sim_launcher_on_a_real_cluster_is_refused)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = {.cluster = LOOPBACK,
                        .ssh_config = TEST_SSH_CONFIG,
                        .job = TINY_JOB,
                        .launcher = "sim",
                        .optimizer = "random",
                        .budget = 1,
                        .trial_timeout_s = 5};
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), -1);
    cr_assert_not_null(strstr(err.msg, "--launcher sim"), "%s", err.msg);
    session_free(s);
}

Test(session, a_command_launcher_without_a_command_is_refused)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = sim_spec(1);
    spec.launcher = "local";
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), -1);
    cr_assert_not_null(strstr(err.msg, "--trial-cmd: the local launcher needs a trial command"),
                       "%s", err.msg);
    session_free(s);
}

Test(session, the_inventory_chooses_launcher_and_command_when_the_flags_do_not)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = {.cluster = LOOPBACK,
                        .ssh_config = TEST_SSH_CONFIG,
                        .job = TINY_JOB,
                        .optimizer = "random",
                        .budget = 1,
                        .trial_timeout_s = 5};
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_str_eq(s->launcher, "local");
    cr_assert_str_eq(s->trial_cmd, "tunedeck-worker --all-local");
    cr_assert_null(s->pool, "a local launcher needs no SSH");
    session_free(s);
}

/* One CPU machine, a on 127.0.0.1, read from `path` with the trial object `trial` (JSON), for
 * the job `job` (NULL: TINY_JOB's file): opened with the local and per-host launchers and
 * refused by the single one with a message holding `want` (asserted); its refusal, for the
 * caller's further checks. */
static Error only_single_refuses(const char *path, const char *trial, const cJSON *job,
                                 const char *want)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": "
             "[{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, \"machines\": [{\"name\": \"a\", \"host\": "
             "\"127.0.0.1\", \"type\": \"t\"}], \"trial\": %s}",
             trial);
    cJSON *inv = cJSON_Parse(text);
    cr_assert_not_null(inv);
    const char *launchers[] = {"local", "per-host", "single"};
    Error refused = {0};
    for (int i = 0; i < 3; i++) {
        Session *s = session_new(0, NULL);
        SessionSpec spec = {.cluster = path,
                            .cluster_json = inv,
                            .ssh_config = TEST_SSH_CONFIG,
                            .job = job ? "job.json" : TINY_JOB,
                            .job_json = job,
                            .launcher = launchers[i],
                            .optimizer = "random",
                            .budget = 1,
                            .trial_timeout_s = 5};
        Error err = {0};
        int rc = session_open(s, &spec, &err);
        if (i < 2) {
            cr_assert_eq(rc, 0, "%s: %s", launchers[i], err.msg);
        } else {
            cr_assert_eq(rc, -1, "single with %s opened", trial);
            cr_assert(strstr(err.msg, want), "%s", err.msg);
            refused = err;
        }
        session_free(s);
    }
    cJSON_Delete(inv);
    return refused;
}

/* A stale trial.launch_host stops only the launcher that reads it: another launcher, and a
 * resume whose journal holds the inventory, still open. */
Test(session, launch_host_is_checked_only_when_the_single_launcher_is_chosen)
{
    only_single_refuses("saved.json", "{\"command\": \"true\", \"launch_host\": \"gone\"}", NULL,
                        "saved.json: trial: field 'launch_host': expected the name of a machine, "
                        "found 'gone'");
}

/* Regression: "ranks": "per-device" with the single launcher ran one process with the whole
 * batch and no RANK, as if the field were not there; the launchers with a rank fan-out open. */
Test(session, per_device_ranks_are_refused_by_the_single_launcher)
{
    /* an allreduce job: per-device ranks with a PS job are refused by every launcher (below) */
    cJSON *job = cJSON_Parse("{\"name\": \"j\", \"model_mb\": 1, \"batch\": 8, \"sync\": "
                             "\"allreduce\"}");
    cr_assert_not_null(job);
    Error err = only_single_refuses("inv.json", "{\"command\": \"true\", \"ranks\": \"per-device\"}",
                                    job,
                                    "inv.json: trial: field 'ranks': \"per-device\" needs the "
                                    "local, per-host or slurm launcher");
    cr_assert_eq(err.kind, ERROR_INPUT, "a bad input file: exit status 3");
    cJSON_Delete(job);
}

/* Regression: a parameter-server job ("sync": "ps", the default) with per-device ranks opened,
 * and every trial ran the user's command on the workers' devices only, its PS machines idle:
 * a time for a schedule the trial never ran. Refused for every launcher, naming both files. */
Test(session, per_device_ranks_are_refused_for_a_parameter_server_job)
{
    cJSON *inv = cJSON_Parse(
        "{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": "
        "[{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, \"machines\": [{\"name\": \"a\", \"host\": "
        "\"127.0.0.1\", \"type\": \"t\"}], \"trial\": {\"command\": \"true\", \"ranks\": "
        "\"per-device\"}}");
    cr_assert_not_null(inv);
    const char *launchers[] = {"local", "per-host"};
    for (int i = 0; i < 2; i++) {
        Session *s = session_new(0, NULL);
        SessionSpec spec = {.cluster = "inv.json",
                            .cluster_json = inv,
                            .ssh_config = TEST_SSH_CONFIG,
                            .job = TINY_JOB,
                            .launcher = launchers[i],
                            .optimizer = "random",
                            .budget = 1,
                            .trial_timeout_s = 5};
        Error err = {0};
        cr_assert_eq(session_open(s, &spec, &err), -1, "%s: a PS job with per-device ranks opened",
                     launchers[i]);
        cr_assert(strstr(err.msg, "inv.json: trial: field 'ranks': \"per-device\" needs an "
                                  "allreduce job, but " TINY_JOB ": field 'sync' is \"ps\""),
                  "%s", err.msg);
        cr_assert(strstr(err.msg, "expected \"sync\": \"allreduce\" in the job"), "%s", err.msg);
        cr_assert_eq(err.kind, ERROR_INPUT, "a bad input file: exit status 3");
        session_free(s);
    }
    cJSON_Delete(inv);
}

Test(session, remote_launchers_get_a_pool_that_connects_on_use)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = {.cluster = LOOPBACK,
                        .ssh_config = TEST_SSH_CONFIG,
                        .job = TINY_JOB,
                        .launcher = "per-host",
                        .optimizer = "random",
                        .budget = 1,
                        .trial_timeout_s = 5};
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_not_null(s->pool);
    cr_assert_eq(hostpool_size(s->pool), 3);
    HostInfo hi;
    hostpool_info(s->pool, 0, &hi);
    cr_assert_eq(hi.state, HOST_IDLE);
    session_free(s);
}

Test(session, keep_hosts_connects_every_host_even_without_a_job)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = {.cluster = LOOPBACK, .keep_hosts = 1, .ssh_config = TEST_SSH_CONFIG};
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_null(s->tuner, "no job: the console's live scheduler alone");
    cr_assert_not_null(s->pool);
    for (size_t m = 0; m < hostpool_size(s->pool); m++) {
        HostInfo hi;
        hostpool_info(s->pool, m, &hi);
        cr_assert_neq(hi.state, HOST_IDLE, "host %zu was not asked to connect", m);
    }
    session_free(s);
}

/* Regression (walkthrough): the console with an inventory and --launcher local connected
 * every host, which the hosts view then showed "down" though the session never used them.
 * SESSION_KEEP_USED connects them only when something reaches them: a remote launcher, or
 * no job (watched, or the live scheduler's); SESSION_KEEP_ALL whatever the launcher. */
Test(session, kept_hosts_are_connected_only_when_the_session_uses_them)
{
    static const struct {
        const char *launcher;
        int keep, pool, connected;
    } CASES[] = {{"local", SESSION_KEEP_USED, 0, 0},
                 {"per-host", SESSION_KEEP_USED, 1, 1},
                 {"single", SESSION_KEEP_USED, 1, 1},
                 {"local", SESSION_KEEP_ALL, 1, 1},
                 {"per-host", 0, 1, 0}};
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        Session *s = session_new(0, NULL);
        SessionSpec spec = {.cluster = LOOPBACK,
                            .ssh_config = TEST_SSH_CONFIG,
                            .job = TINY_JOB,
                            .launcher = CASES[i].launcher,
                            .keep_hosts = CASES[i].keep,
                            .optimizer = "random",
                            .budget = 1,
                            .trial_timeout_s = 5};
        Error err;
        cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
        cr_assert_eq(s->pool != NULL, CASES[i].pool, "case %zu (%s)", i, CASES[i].launcher);
        for (size_t m = 0; s->pool && m < hostpool_size(s->pool); m++) {
            HostInfo hi;
            hostpool_info(s->pool, m, &hi);
            cr_assert_eq(hi.state != HOST_IDLE, CASES[i].connected, "case %zu host %zu", i, m);
        }
        session_free(s);
    }
}

/* Runs a journalled session of `spec` in `dir` to its end and keeps its journal's path. */
static void run_journalled(const char *dir, SessionSpec *spec, char *path, size_t size)
{
    Error err;
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    cr_assert(first->journal_open);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    session_journal_end(first);
    snprintf(path, size, "%s", tune_journal_path(first->journal));
    cr_assert_eq(access(path, R_OK), 0, "%s", path);
    session_free(first);
}

Test(session, a_resumed_session_comes_back_from_its_journal_and_goes_on)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(2);
    spec.seed = 11;
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 3};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), 0, "%s", err.msg);
    cr_assert_str_eq(rs.sim, "B:googlenet");
    cr_assert_str_eq(rs.optimizer, "random");
    cr_assert_eq(rs.seed, 11);
    cr_assert_eq(rs.budget, 3, "a budget the caller set stays");
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2, "the journal's trials are replayed");
    /* the journal read back is not held for the session (it held 370 MB for 20,000 trials);
     * the simulator has no pool, so no interrupted group to collect from it */
    cr_assert_eq(tune_journal_log(again->journal)->n, 0, "the parsed journal is freed");
    cr_assert_eq(tuner_run_blocking(again->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 3);
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Regression: the console's `:budget 40` on a 60-trial session was lost on quitting: the
 * journal kept 60, so `tunedeck sessions` said 24/60 and a resume went on to 60. */
Test(session, the_budget_changed_during_a_session_is_the_one_a_resume_goes_on_to)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(4);
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    tuner_set_budget(first->tuner, 2); /* what the console's :budget 2 does */
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(first->tuner), 2);
    session_journal_end(first);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    session_free(first);

    Session *again = session_new(1, dir);
    SessionSpec rs = {0};
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(rs.budget, 2, "the budget at the session's end, not the first line's 4");
    session_free(again);
    unlink(path);
    rmdir(dir);
}

/* Regression: the :budget was written only in the `ended` line, so a console killed outright
 * (SIGKILL: no `ended`) lost it and a resume went on to the session line's budget. */
Test(session, a_changed_budget_is_journaled_when_it_changes)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(5);
    Session *first = session_new(1, dir);
    cr_assert_eq(session_open(first, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(first, &err), 0, "%s", err.msg);
    tuner_set_budget(first->tuner, 2);
    cr_assert_eq(tuner_run_blocking(first->tuner, &err), 0, "%s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(first->journal));
    session_free(first); /* no session_journal_end: the process was killed */

    Session *again = session_new(1, dir);
    SessionSpec rs = {0};
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(rs.budget, 2, "the budget typed, not the first line's 5");
    session_free(again);
    unlink(path);
    rmdir(dir);
}

Test(session, resume_without_a_journal_is_refused)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = {0};
    Error err;
    cr_assert_eq(session_resume(s, "20990101-000000-000000", &spec, 0, &err), -1);
    cr_assert_not_null(strstr(err.msg, "journal"), "%s", err.msg);
    session_free(s);
}

/* Regression: `tune --resume ID --budget 2` on a 4-trial session showed 4/2 trials. */
Test(session, a_resumed_budget_below_the_trials_already_run_is_refused_naming_both)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(4);
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 2};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), -1, "a budget of 2 under 4 trials");
    cr_assert_not_null(strstr(err.msg, "--budget 2"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "already has 4 trials"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, path), "%s", err.msg);
    session_free(again);

    Session *same = session_new(1, dir);
    SessionSpec eq = {.budget = 4};
    cr_assert_eq(session_resume(same, path, &eq, 1, &err), 0, "the trials so far: %s", err.msg);
    session_free(same);
    unlink(path);
    rmdir(dir);
}

/* Damages the line of a journal that holds `needle` (as a torn write in the middle would). */
static void damage_line(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, needle);
    cr_assert_not_null(at, "%s has no %s", path, needle);
    memcpy(at + strlen(needle), "garbage", 7);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, n, f);
    fclose(f);
}

/* Regression: with trial 2's suggested line damaged the budget check counted 1 trial (the
 * unbroken run 1, 2, ...) while the decoder keeps 3, so `--budget 2` was accepted and the
 * session started at 3/2. */
Test(session, the_resumed_budget_counts_the_trials_kept_after_a_damaged_line)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(4);
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);
    damage_line(path, "{\"event\":\"suggested\",\"trial\":2,");

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 2};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), -1, "a budget of 2 under 3 trials");
    cr_assert_not_null(strstr(err.msg, "already has 3 trials"), "%s", err.msg);
    session_free(again);

    Session *same = session_new(1, dir);
    SessionSpec eq = {.budget = 3};
    cr_assert_eq(session_resume(same, path, &eq, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(same, &eq, &err), 0, "%s", err.msg);
    tune_journal_set_quiet(same->journal, 1);
    cr_assert_eq(session_journal_begin(same, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(same->tuner), 3, "the check and the replay agree");
    session_free(same);
    unlink(path);
    rmdir(dir);
}

/* Replaces the first `from` in a journal with `to`, of the same length (a field's value
 * damaged in place). */
static void replace_once(const char *path, const char *from, const char *to)
{
    cr_assert_eq(strlen(from), strlen(to));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, from);
    cr_assert_not_null(at, "%s has no %s", path, from);
    memcpy(at, to, strlen(to));
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, n, f);
    fclose(f);
}

/* Regression: a trial whose `finished` line was damaged (a wrong field type, or a line that is
 * no JSON at all, with later trials after it) was marked "interrupted: the session ended while
 * it ran", in the journal for good, though the session had gone on: the operator was sent
 * looking for a crash, not at the damaged line. */
Test(session, a_trial_whose_finished_line_was_damaged_is_marked_so_not_as_a_crash)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(3);
    spec.no_prune = 1; /* every trial ok: its status is the field damaged */
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);
    damage_line(path, "{\"event\":\"finished\",\"trial\":1,");
    replace_once(path, "{\"event\":\"finished\",\"trial\":2,\"status\":\"ok\"",
                 "{\"event\":\"finished\",\"trial\":2,\"status\":true");

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 3};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    tune_journal_set_quiet(again->journal, 1);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 3);
    session_journal_end(again);
    session_free(again);

    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    const char *after = strstr(text, "{\"event\":\"resumed\"");
    cr_assert_not_null(after, "%s", text);
    cr_assert_null(strstr(after, "the session ended while it"), "%s", after);
    cr_assert_not_null(strstr(after, "{\"event\":\"finished\",\"trial\":1,\"status\":"
                                     "\"interrupted\",\"reason\":\"interrupted: its outcome "
                                     "was lost to a damaged journal line"),
                       "%s", after);
    cr_assert_not_null(strstr(after, "{\"event\":\"finished\",\"trial\":2,\"status\":"
                                     "\"interrupted\",\"reason\":\"interrupted: its finished "
                                     "line (journal line 7) could not be read"),
                       "%s", after);
    unlink(path);
    rmdir(dir);
}

/* Regression: after a resume that crossed a gap (trial 2's suggested line damaged, so the
 * file's trial 3 is the tuner's 2) the next trial's command saw TUNEDECK_TRIAL=3 while the
 * journal recorded it as trial 4, so a later resume looking for TUNEDECK_TRIAL=4 in its
 * processes found them "gone" and left them running. Now both carry the file's number. */
Test(session, a_trial_after_a_gap_has_the_files_number_in_its_environment_and_journal)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char seen[4200], cmd[4400];
    snprintf(seen, sizeof seen, "%s/trials", dir);
    snprintf(cmd, sizeof cmd, "cat >/dev/null; echo \"$TUNEDECK_TRIAL\" >>'%s'", seen);
    SessionSpec spec = sim_spec(3);
    spec.launcher = "local";
    spec.trial_cmd = cmd;
    spec.trial_timeout_s = 20;
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);
    damage_line(path, "{\"event\":\"suggested\",\"trial\":2,");

    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 3};
    cr_assert_eq(session_resume(again, path, &rs, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    tune_journal_set_quiet(again->journal, 1);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2, "the file's trials 1 and 3");
    cr_assert_eq(tuner_run_blocking(again->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 3);
    cr_assert_eq(tuner_outside_number(again->tuner, 3), 4);
    session_journal_end(again);
    session_free(again);

    FILE *f = fopen(seen, "r");
    cr_assert_not_null(f);
    int n[4] = {0}, k = 0;
    while (k < 4 && fscanf(f, "%d", &n[k]) == 1)
        k++;
    fclose(f);
    cr_assert_eq(k, 4, "three trials, then one after the resume");
    cr_assert(n[0] == 1 && n[1] == 2 && n[2] == 3, "%d %d %d", n[0], n[1], n[2]);
    cr_assert_eq(n[3], 4, "TUNEDECK_TRIAL=%d after the gap, the journal says trial 4", n[3]);
    f = fopen(path, "r");
    char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    cr_assert_not_null(strstr(text, "{\"event\":\"started\",\"trial\":4,"), "%s", text);
    const char *after = strstr(text, "{\"event\":\"resumed\"");
    cr_assert_not_null(after, "%s", text);
    cr_assert_null(strstr(after, "{\"event\":\"started\",\"trial\":3,"),
                   "the file's trial 3 was numbered again after the resume: %s", after);
    unlink(seen);
    unlink(path);
    rmdir(dir);
}

/* The console's stops (stops_on_loop) are only begun: the caller's loop steps the pool and
 * session_stop_step ends them. Here the pool is never stepped, so the host (TEST-NET, never
 * reached) never answers and the stop ends at its deadline, asked at chosen instants. */
static char lost_said[2][512];
static int n_lost_said;

static void keep_line(void *ud, const char *line)
{
    (void)ud;
    if (n_lost_said < 2)
        snprintf(lost_said[n_lost_said], sizeof lost_said[0], "%s", line);
    n_lost_said++;
}

Test(session, on_the_callers_loop_the_quits_stop_of_lost_groups_is_begun_and_ended_by_steps)
{
    Session *s = session_new(0, NULL);
    SessionSpec spec = sim_spec(1);
    spec.stops_on_loop = 1;
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    Cluster *c = fixture_cluster_json(
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m0\", \"host\": \"192.0.2.1\", \"type\": \"t\"}]}");
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    s->pool = hostpool_new(&po, &err); /* the session frees it */
    cr_assert_not_null(s->pool, "%s", err.msg);
    cr_assert_eq(hostpool_add_cluster(s->pool, c, &err), 0, "%s", err.msg);
    cr_assert_not(session_stop_busy(s));
    cr_assert_eq(session_stop_deadline(s), -1);
    cr_assert_eq(orphans_add(&s->procs.lost, 1, "m0", 4242, NULL), 0);
    n_lost_said = 0;
    session_stop_lost(s, keep_line, NULL);
    cr_assert(session_stop_busy(s), "begun, not waited for");
    cr_assert_eq(s->procs.lost.n, 0, "the stop holds them now");
    int64_t deadline = session_stop_deadline(s);
    cr_assert_eq(session_stop_step(s, deadline - 1), 1);
    cr_assert_eq(n_lost_said, 0);
    cr_assert_eq(session_stop_step(s, deadline), 0);
    cr_assert_not(session_stop_busy(s));
    cr_assert_eq(n_lost_said, 1);
    /* Nothing was checked on m0: said once for the host, with the group and how to stop it. */
    cr_assert_str_eq(lost_said[0], "leftover check on m0: not checked (m0 did not answer: no "
                                   "answer within 15 s); trial 1's process group 4242 may still "
                                   "run: stop it by hand with: ssh 192.0.2.1 kill -KILL -- -4242");
    session_stop_lost(s, keep_line, NULL); /* nothing left: nothing begun */
    cr_assert_not(session_stop_busy(s));
    session_free(s);
    cluster_free(c);
}

/* A console whose loop ended on an error ends the journal with a stop still under way: the
 * stop is waited for first, so its result comes before the journal's `ended` line. (A closed
 * port on this machine: no answer, the result is said at once or at the deadline.) */
Test(session, the_journals_end_waits_for_a_stop_still_under_way)
{
    Session *s = session_new(1, state_dir);
    SessionSpec spec = sim_spec(1);
    spec.stops_on_loop = 1;
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    Cluster *c = fixture_cluster_json(
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m0\", \"host\": \"127.0.0.1\", \"port\": 1, "
        "\"type\": \"t\"}]}");
    HostPoolOptions po = {.backoff_base_s = 60}; /* no reconnect within the sweep's 15 s */
    s->pool = hostpool_new(&po, &err); /* the session frees it */
    cr_assert_not_null(s->pool, "%s", err.msg);
    cr_assert_eq(hostpool_add_cluster(s->pool, c, &err), 0, "%s", err.msg);
    cr_assert_eq(orphans_add(&s->procs.lost, 1, "m0", 4242, NULL), 0);
    n_lost_said = 0;
    session_stop_lost(s, keep_line, NULL);
    cr_assert(session_stop_busy(s), "begun, not waited for");
    session_journal_end(s);
    cr_assert_not(session_stop_busy(s));
    cr_assert_eq(n_lost_said, 1, "the stop's result was said before the end");
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    cluster_free(c);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[4096], last[4096] = "";
    int stop_seen = 0;
    while (fgets(line, sizeof line, f)) {
        cr_assert_null(strstr(last, "\"event\":\"ended\""), "a line after the end: %s", line);
        stop_seen += strstr(line, "\"event\":\"remote_process_stop\"") != NULL;
        snprintf(last, sizeof last, "%s", line);
    }
    fclose(f);
    cr_assert_eq(stop_seen, 1, "the stop's result journaled");
    cr_assert_not_null(strstr(last, "\"event\":\"ended\""), "%s", last);
}

/* A simulated session, its journal begun, whose pool holds one host, m0, at a closed port of
 * this machine (refused at once) and no reconnect within 60 s (none within a sweep's 15 s);
 * *c its cluster, the caller's to free. */
static Session *session_with_a_closed_host(Cluster **c)
{
    Session *s = session_new(1, state_dir);
    SessionSpec spec = sim_spec(1);
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    *c = fixture_cluster_json(
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m0\", \"host\": \"127.0.0.1\", \"port\": 1, "
        "\"type\": \"t\"}]}");
    HostPoolOptions po = {.backoff_base_s = 60};
    s->pool = hostpool_new(&po, &err); /* the session frees it */
    cr_assert_not_null(s->pool, "%s", err.msg);
    cr_assert_eq(hostpool_add_cluster(s->pool, *c, &err), 0, "%s", err.msg);
    return s;
}

/* Regression: at the end of a session with a host down, the sweep said "not stopped: ssh …
 * failed" for every group ever seen there, those of trials that ended cleanly included. Now
 * one line for the host says nothing was checked and names only the group no stop saw end,
 * the one journaled `not stopped`. (A closed port on this machine: refused at once.) */
Test(session, a_down_host_at_the_end_is_said_unchecked_naming_only_groups_that_may_run)
{
    Cluster *c;
    Session *s = session_with_a_closed_host(&c);
    cr_assert_eq(orphans_add(&s->procs.seen, 1, "m0", 4200, NULL), 0); /* trial 1 ended cleanly */
    cr_assert_eq(orphans_add(&s->procs.seen, 2, "m0", 4242, NULL), 0); /* its connection dropped */
    cr_assert_eq(orphans_add(&s->procs.lost, 2, "m0", 4242, NULL), 0);
    n_lost_said = 0;
    session_stop_leftovers(s, keep_line, NULL);
    session_journal_end(s);
    cr_assert_eq(n_lost_said, 1, "%s", lost_said[1]);
    cr_assert(strstr(lost_said[0], "leftover check on m0: not checked (m0 did not answer: ") ==
                  lost_said[0],
              "%s", lost_said[0]);
    const char *tail = "); trial 2's process group 4242 may still run: stop it by hand with: "
                       "ssh -p 1 127.0.0.1 kill -KILL -- -4242";
    size_t n = strlen(lost_said[0]);
    cr_assert(n > strlen(tail) && strcmp(lost_said[0] + n - strlen(tail), tail) == 0, "%s",
              lost_said[0]);
    cr_assert_null(strstr(lost_said[0], "4200"), "%s", lost_said[0]);
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    cluster_free(c);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[4096];
    int stops = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"event\":\"remote_process_stop\""))
            continue;
        stops++;
        cr_assert_not_null(strstr(line, "\"trial\":2,\"machine\":\"m0\",\"pgid\":4242,"), "%s",
                           line);
        cr_assert_not_null(strstr(line, "\"result\":\"not stopped: "), "%s", line);
    }
    fclose(f);
    cr_assert_eq(stops, 1, "only the group that may still run is journaled");
}

/* The file `path` whole (the test's small files). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    return text;
}

/* Regression: a finished trial's group whose connection dropped was journaled "not stopped"
 * only by the end-of-session sweep. A session killed before it (SIGKILL, a crash, the machine
 * lost) left a journal where trial 1 had an outcome and its group no stop line, so a resume
 * neither stopped nor checked it, and the worker it left held the port and GPU of the resumed
 * trials. Now the drop is journaled at once, and the resume stops the group over SSH (a real
 * sshd; the group is a marked daemon, as a trial's `setsid` worker is). */
static Sshd lost_sshd;
static pid_t lost_daemon;
static Session *lost_session;
static char lost_mark[GROUPSTOP_MARK_CHARS + 1];

static void lost_fini(void)
{
    if (ownkill_child(lost_daemon, SIGKILL) == 0) /* a test that reaped it sent none */
        waitpid(lost_daemon, NULL, 0);
    sshd_fixture_stop(&lost_sshd);
    teardown();
}

/* As the per-host launcher does for trial 1: its group reported, then its connection dropped
 * before its end was seen (LaunchConfig.on_proc, .on_proc_lost), before its outcome. */
static void trial_1_drops(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    (void)ud;
    if (ev != TUNER_EVENT_STARTED || rec->suggestion.schedule->trial != 1)
        return;
    tune_procs_on_proc(&lost_session->procs, 1, "m0", (long)lost_daemon, lost_mark);
    tune_procs_on_proc_lost(&lost_session->procs, 1, "m0", (long)lost_daemon, lost_mark,
                            PROC_LOST_DROPPED);
}

Test(session, a_finished_trials_dropped_group_is_stopped_by_a_resume_after_a_kill,
     .fini = lost_fini)
{
    Error err;
    cr_assert_eq(orphans_mark_new(lost_mark, &err), 0, "%s", err.msg);
    lost_daemon = marked_daemon(lost_mark, 0);
    sshd_fixture_start(&lost_sshd, "");
    SessionSpec spec = sim_spec(1);
    spec.on_event = trial_1_drops;
    lost_session = session_new(1, state_dir);
    cr_assert_eq(session_open(lost_session, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(lost_session, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(lost_session->tuner, &err), 0, "%s", err.msg);
    cr_assert_not_null(tuner_trial(lost_session->tuner, 0)->obs, "trial 1 has an outcome");
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(lost_session->journal));
    /* Killed: no end-of-session sweep, no `ended` line. */
    session_free(lost_session);
    lost_session = NULL;

    Session *again = session_new(1, state_dir);
    SessionSpec rs = {0};
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    again->pool = sshd_fixture_pool(&lost_sshd, "m0"); /* the session frees it */
    tune_journal_set_quiet(again->journal, 1);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    n_lost_said = 0;
    session_stop_interrupted(again, keep_line, NULL);
    cr_assert_eq(n_lost_said, 1, "the resume said %d lines", n_lost_said);
    char want[128];
    snprintf(want, sizeof want, "leftover of trial 1: process group %ld on m0: stopped",
             (long)lost_daemon);
    cr_assert_str_eq(lost_said[0], want);
    cr_assert_neq(ended_status(lost_daemon), -1, "the dropped group still runs");
    lost_daemon = 0;
    session_free(again);
    /* The stop's line is the group's last word: a second resume has nothing to stop. */
    const char *text = slurp(path);
    const char *last = NULL;
    for (const char *p = text; (p = strstr(p, "\"event\":\"remote_process_stop\"")); p++)
        last = p;
    cr_assert_not_null(last, "%s", text);
    cr_assert_not_null(strstr(last, "\"result\":\"stopped\""), "%s", last);
}

/* The results of the journal's `remote_process_stop` lines for group `pgid`, in order (at most
 * 4 kept); returns how many. */
static int stop_results(const char *path, long pgid, char results[4][512])
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *ev = cJSON_Parse(line);
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ev, "event");
        const cJSON *pg = cJSON_GetObjectItemCaseSensitive(ev, "pgid");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(ev, "result");
        if (cJSON_IsString(kind) && strcmp(kind->valuestring, "remote_process_stop") == 0 &&
            cJSON_IsNumber(pg) && (long)pg->valuedouble == pgid && cJSON_IsString(r)) {
            if (n < 4)
                snprintf(results[n], 512, "%s", r->valuestring);
            n++;
        }
        cJSON_Delete(ev);
    }
    fclose(f);
    return n;
}

/* Each group whose end was not seen is journaled with its own cause, under the field and
 * the words ("not stopped: its end was not seen") a reader looks for. Regression: one
 * sentence named all three causes, and the operator could not tell which it was. */
Test(session, a_lost_group_is_journaled_with_the_cause_its_launcher_saw)
{
    Cluster *c;
    Session *s = session_with_a_closed_host(&c);
    tune_procs_on_proc_lost(&s->procs, 1, "m0", 4301, NULL, PROC_LOST_DROPPED);
    tune_procs_on_proc_lost(&s->procs, 1, "m0", 4302, NULL, PROC_LOST_FAILED);
    tune_procs_on_proc_lost(&s->procs, 1, "m0", 4303, NULL, PROC_LOST_STOP_UNANSWERED);
    cr_assert_eq(s->procs.lost.n, 3, "each kept for the next trial's stop");
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    cluster_free(c);
    const char *want[] = {
        "not stopped: its end was not seen (its connection dropped, which stops nothing there)",
        "not stopped: its end was not seen (its command failed, and what it started may still "
        "run)",
        "not stopped: its end was not seen (the stop of its group went unanswered)"};
    for (long k = 0; k < 3; k++) {
        char results[4][512];
        cr_assert_eq(stop_results(path, 4301 + k, results), 1, "group %ld", 4301 + k);
        cr_assert_str_eq(results[0], want[k]);
    }
}

/* A stop before a trial that could not reach a dropped connection's group (its host refuses:
 * a closed port) journals its own "not stopped: why", after the drop's line: the group's last
 * word is what the latest stop knew, should the session be killed now. Regression: only the
 * stops a host answered were journaled. */
Test(session, a_stop_before_a_trial_that_cannot_reach_a_dropped_group_journals_it_not_stopped)
{
    Cluster *c;
    Session *s = session_with_a_closed_host(&c);
    tune_procs_on_proc(&s->procs, 1, "m0", 4242, NULL);
    tune_procs_on_proc_lost(&s->procs, 1, "m0", 4242, NULL, PROC_LOST_DROPPED);
    Schedule *sch = fixture_schedule(c, 10);
    sch->trial = 2;
    sch->worker[0] = sch->ps[0] = 1;
    char why[512] = "untouched";
    n_lost_said = 0;
    cr_assert_eq(tune_orphans_before_trial(s->pool, s->journal, &s->procs.lost, sch, keep_line,
                                           NULL, why, sizeof why),
                 0, "%s", why);
    cr_assert_eq(s->procs.lost.n, 1, "kept for a later trial");
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s); /* killed: no end */
    schedule_free(sch);
    cluster_free(c);
    char results[4][512];
    int n = stop_results(path, 4242, results);
    cr_assert_eq(n, 2, "the drop's line and the stop's: %d", n);
    cr_assert(strncmp(results[0], "not stopped: its end was not seen (", 35) == 0, "%s",
              results[0]);
    cr_assert(strncmp(results[1], "not stopped: ", 13) == 0 && strcmp(results[1], results[0]),
              "%s", results[1]);
}

/* The end's sweep (quiet: it says nothing of a group gone) journals a dropped connection's
 * group that it finds gone: its last line said "not stopped" since the drop, and every later
 * resume would look for it again. (A real sshd; a group id no process has.) */
Test(session, a_dropped_group_found_gone_at_the_end_is_journaled_so_no_resume_looks_for_it,
     .fini = lost_fini)
{
    sshd_fixture_start(&lost_sshd, "");
    pid_t child = gone_group();
    Session *s = session_new(1, state_dir);
    SessionSpec spec = sim_spec(1);
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    s->pool = sshd_fixture_pool(&lost_sshd, "m0"); /* the session frees it */
    tune_procs_on_proc(&s->procs, 1, "m0", (long)child, NULL);
    tune_procs_on_proc_lost(&s->procs, 1, "m0", (long)child, NULL, PROC_LOST_DROPPED);
    n_lost_said = 0;
    session_stop_leftovers(s, keep_line, NULL);
    session_journal_end(s);
    cr_assert_eq(n_lost_said, 0, "%s", lost_said[0]);
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    char results[4][512];
    int n = stop_results(path, (long)child, results);
    cr_assert_eq(n, 2, "the drop's line and the sweep's: %d", n);
    cr_assert_str_eq(results[1], "gone");
}

/* Before, the launchers' on_log was unset for every session: what a trial printed besides
 * the protocol was dropped, and a failed trial showed only its one-line reason. */
Test(session, what_trials_print_besides_the_protocol_is_kept_beside_the_journal)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(2);
    spec.launcher = "local";
    spec.trial_cmd = "cat >/dev/null; echo \"step $TUNEDECK_TRIAL: loading\" >&2; "
                     "echo \"plain words $TUNEDECK_TRIAL\"; printf 'esc \\033]0;title\\n' >&2; "
                     "[ \"$TUNEDECK_TRIAL\" = 2 ] && { echo 'no dataset' >&2; exit 3; }; "
                     "echo '{\"event\":\"done\",\"time_s\":0.5}'";
    spec.trial_timeout_s = 20;
    Session *s = session_new(1, dir);
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    cr_assert_null(session_trial_log(s), "nothing is made before a line");
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_trial(s->tuner, 1)->obs->status, TRIAL_FAILED);
    const char *log = session_trial_log(s);
    cr_assert_not_null(log);
    char want[4200];
    snprintf(want, sizeof want, "%s", tune_journal_path(s->journal));
    strcpy(strstr(want, ".jsonl"), ".log");
    cr_assert_str_eq(log, want, "beside the journal, its name but .log");
    cr_assert_eq(session_trial_log_lines(s, 1), 3);
    cr_assert_eq(session_trial_log_lines(s, 2), 4);
    struct stat st;
    cr_assert_eq(stat(log, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    const char *text = slurp(log);
    cr_assert(strstr(text, "Z trial 1 local stderr: step 1: loading\n"), "%s", text);
    cr_assert(strstr(text, "Z trial 1 local stdout: plain words 1\n"), "%s", text);
    cr_assert(strstr(text, "Z trial 1 ended: ok\n"), "%s", text);
    cr_assert(strstr(text, "Z trial 2 local stderr: no dataset\n"), "%s", text);
    cr_assert(strstr(text, "Z trial 2 ended: failed: "), "%s", text);
    cr_assert(strstr(text, "stderr: esc ^[]0;title\n"), "terminal-safe: %s", text);
    cr_assert_null(strchr(text, '\033'), "%s", text);
    session_journal_end(s);
    session_free(s);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static int trial_2_runs(void *ud)
{
    const char *pidfile = ud;
    return access(pidfile, R_OK) == 0;
}

/* tune's SIGINT: the running trial is stopped and waited for, but gets no outcome, so the
 * journal keeps it unfinished (a resume marks it interrupted); the records stay for the
 * summary, and its lines end "interrupted" in the trial log. */
Test(session, an_interrupt_stops_the_running_trial_and_leaves_it_without_an_outcome)
{
    Error err;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char pidfile[4200], cmd[4400];
    snprintf(pidfile, sizeof pidfile, "%s/trial2.pid", dir);
    snprintf(cmd, sizeof cmd,
             "cat >/dev/null; echo \"trial $TUNEDECK_TRIAL says\" >&2; "
             "if [ \"$TUNEDECK_TRIAL\" = 2 ]; then echo $$ >'%s.tmp'; mv '%s.tmp' '%s'; "
             "exec sleep 60; fi; echo '{\"event\":\"done\",\"time_s\":0.5}'",
             pidfile, pidfile, pidfile);
    SessionSpec spec = sim_spec(3);
    spec.launcher = "local";
    spec.trial_cmd = cmd;
    spec.trial_timeout_s = 120;
    Seen seen = {0};
    spec.on_event = count_finished;
    spec.userdata = &seen;
    Session *s = session_new(1, dir);
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    EvLoop *l = evloop_new();
    cr_assert_gt(tuner_attach(s->tuner, l), 0);
    cr_assert_eq(evloop_run(l, trial_2_runs, pidfile, -1), 1);
    evloop_free(l);
    cr_assert(tuner_running(s->tuner));
    long pid = atol(slurp(pidfile));
    cr_assert_gt(pid, 1);
    session_interrupt(s, "SIGINT");
    cr_assert_eq(kill((pid_t)pid, 0), -1, "the trial's process %ld still runs", pid);
    cr_assert_eq(seen.finished, 1, "no outcome event for the stopped trial");
    cr_assert_eq(tuner_n_trials(s->tuner), 2);
    cr_assert_null(tuner_trial(s->tuner, 1)->obs);
    cr_assert(tuner_done(s->tuner) && !tuner_running(s->tuner), "nothing more starts");
    const char *text = slurp(session_trial_log(s));
    cr_assert(strstr(text, "Z trial 2 local stderr: trial 2 says\n"), "%s", text);
    cr_assert(strstr(text, "Z trial 2 ended: interrupted: SIGINT\n"), "%s", text);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    text = slurp(path);
    cr_assert(strstr(text, "{\"event\":\"started\",\"trial\":2,"), "%s", text);
    cr_assert_null(strstr(text, "{\"event\":\"finished\",\"trial\":2,"), "%s", text);
    cr_assert_null(strstr(text, "{\"event\":\"ended\""), "%s", text);

    Session *again = session_new(1, dir);
    SessionSpec rs = {0};
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(again, &rs, &err), 0, "%s", err.msg);
    tune_journal_set_quiet(again->journal, 1);
    cr_assert_eq(session_journal_begin(again, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(again->tuner), 2);
    cr_assert_eq(tuner_trial(again->tuner, 1)->obs->status, TRIAL_INTERRUPTED);
    session_free(again);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* `tunedeck sessions` asks whether a resume would take a journal of the one reading it
 * summarizes (tune_journal_load_log): the same setup, and the same refusal in the same words,
 * as tune_journal_load reading the file itself. */
Test(session, a_journal_already_read_is_judged_as_a_resume_reads_it)
{
    Error err, e1, e2;
    char dir[] = "/tmp/td-session-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    SessionSpec spec = sim_spec(2);
    char path[4096];
    run_journalled(dir, &spec, path, sizeof path);
    TuneJournal *a = tune_journal_new(NULL), *b = tune_journal_new(NULL);
    TuneSetup sa, sb;
    JournalLog log;
    cr_assert_eq(journal_load(path, &log, &err), 0, "%s", err.msg);
    cr_assert_eq(tune_journal_load(a, path, &sa, &e1), 0, "%s", e1.msg);
    cr_assert_eq(tune_journal_load_log(b, path, &log, &sb, &e2), 0, "%s", e2.msg);
    cr_assert_eq(log.n, 0, "the log is taken");
    cr_assert_str_eq(sa.sim, sb.sim);
    cr_assert_str_eq(sa.optimizer, sb.optimizer);
    cr_assert_eq(sa.budget, sb.budget);
    cr_assert_eq(tune_journal_trials(a, &sa), tune_journal_trials(b, &sb));
    tune_setup_clear(&sa);
    tune_setup_clear(&sb);
    tune_journal_free(a);
    tune_journal_free(b);
    /* a journal whose session line is gone: refused alike */
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"event\":\"started\",\"trial\":1}\n", f);
    fclose(f);
    a = tune_journal_new(NULL);
    b = tune_journal_new(NULL);
    cr_assert_eq(journal_load(path, &log, &err), 0, "%s", err.msg);
    cr_assert_eq(tune_journal_load(a, path, &sa, &e1), -1);
    cr_assert_eq(tune_journal_load_log(b, path, &log, &sb, &e2), -1);
    cr_assert_str_eq(e1.msg, e2.msg);
    cr_assert(strstr(e2.msg, "expected a \"session\" line first"), "%s", e2.msg);
    tune_journal_free(a);
    tune_journal_free(b);
    unlink(path);
    rmdir(dir);
}

/* Regression: a dropped group whose stop found its host down was kept for a later trial on
 * that host only: once the host was back, a session whose next trials ran elsewhere left it
 * running (its GPUs held) until its end. Now the next trial's before_launch stops it, whatever
 * that trial's machines, reports it and journals it "stopped"; `tune` waits for it (no
 * stops_on_loop). Here trial 3 runs on m0 only; trial 1's group is on m1, a real sshd. */
static Sshd back_sshd;
static pid_t back_daemon;

static void back_fini(void)
{
    if (back_daemon > 0 && ownkill_child(back_daemon, SIGKILL) == 0)
        waitpid(back_daemon, NULL, 0);
    sshd_fixture_stop(&back_sshd);
    teardown();
}

Test(session, a_kept_group_is_stopped_before_the_next_trial_once_its_host_is_back_wherever_it_runs,
     .fini = back_fini)
{
    char mark[GROUPSTOP_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(mark, &err), 0, "%s", err.msg);
    back_daemon = marked_daemon(mark, 0);
    sshd_fixture_start(&back_sshd, "");
    Session *s = session_new(1, state_dir);
    SessionSpec spec = sim_spec(1);
    spec.on_report = keep_line;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    s->pool = sshd_fixture_pool(&back_sshd, "m1"); /* connected again; the session frees it */
    Cluster *c = fixture_cluster_json(
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m[0-1]\", \"host\": \"192.0.2.[1-2]\", \"type\": \"t\"}]}");
    Schedule *sch = fixture_schedule(c, 10);
    sch->trial = 3;
    sch->worker[0] = sch->ps[0] = 1; /* m0 only */
    tune_procs_on_proc(&s->procs, 1, "m1", (long)back_daemon, mark);
    tune_procs_on_proc_lost(&s->procs, 1, "m1", (long)back_daemon, mark, PROC_LOST_DROPPED);
    s->procs.lost.items[0].unreached = 1; /* trial 2's stop found m1 down */
    n_lost_said = 0;
    char why[512] = "untouched";
    cr_assert_eq(session_before_launch(s, sch, why, sizeof why), 0, "%s", why);
    cr_assert_eq(s->procs.lost.n, 0, "left for a trial on m1");
    cr_assert_eq(n_lost_said, 2, "said %d lines: %s", n_lost_said, lost_said[0]);
    char want[160];
    snprintf(want, sizeof want, "stopped trial 1's leftover process group %ld on m1 before trial 3",
             (long)back_daemon);
    cr_assert_str_eq(lost_said[1], want);
    pid_t pgid = back_daemon;
    cr_assert_neq(ended_status(back_daemon), -1, "the group still runs");
    back_daemon = 0;
    /* Once: trial 4's stop has nothing to take. */
    sch->trial = 4;
    n_lost_said = 0;
    cr_assert_eq(session_before_launch(s, sch, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n_lost_said, 0, "%s", lost_said[0]);
    char path[1024];
    snprintf(path, sizeof path, "%s", tune_journal_path(s->journal));
    session_free(s);
    schedule_free(sch);
    cluster_free(c);
    char results[4][512];
    int n = stop_results(path, (long)pgid, results);
    cr_assert_eq(n, 2, "the drop's line and the stop's: %d", n);
    cr_assert_str_eq(results[1], "stopped");
}
