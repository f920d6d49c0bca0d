/* A per-host session on two real sshd (sshd_fixture.h) that may refuse a host for good (its
 * host key not in known_hosts, its identity not in authorized_keys): a refused host gets no
 * trial after the one that met it, and a session whose every host is refused stops as soon as
 * it knows instead of spending its budget, or on the console holds its next trial until a
 * host is no longer refused (session_refused.c). */
#include <criterion/criterion.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/session.h"
#include "remote/session/session_priv.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

static Sshd first, second;
static char dir[] = "/tmp/tunedeck-session-refused.XXXXXX";
static char inventory[128], job[128], known[128];
static char said[8][ERROR_MSG_MAX + 256];
static int n_said;

static void sh_ok(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Two hosts, h1 on the first sshd and h2 on the second, logged in with the first's identity;
 * known_hosts lists the keys of the hosts given (1: h1's, 2: h2's). */
static void write_known_hosts(int h1, int h2)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, ": > %s", known);
    sh_ok(cmd);
    for (int i = 1; i <= 2; i++) {
        const Sshd *d = i == 1 ? &first : &second;
        if (!(i == 1 ? h1 : h2))
            continue;
        snprintf(cmd, sizeof cmd,
                 "printf '[127.0.0.1]:%d %%s\\n' \"$(cut -d' ' -f1,2 %s/host.pub)\" >> %s", d->port,
                 d->dir, known);
        sh_ok(cmd);
    }
}

static void setup(void)
{
    sshd_fixture_start(&first, "");
    sshd_fixture_start(&second, "");
    cr_assert_not_null(mkdtemp(dir));
    setenv("TUNEDECK_STATE_DIR", dir, 1);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cat %s/id.pub >> %s/authorized_keys", first.dir, second.dir);
    sh_ok(cmd);
    snprintf(known, sizeof known, "%s/known_hosts", dir);
    snprintf(job, sizeof job, "%s/job.json", dir);
    snprintf(inventory, sizeof inventory, "%s/inventory.json", dir);
    FILE *f = fopen(job, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"name\": \"tiny\", \"model_mb\": 10, \"batch\": 64, \"iterations\": 3, "
               "\"warmup\": 1}\n");
    fclose(f);
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    f = fopen(inventory, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "{\"name\": \"two\", \"ssh\": {\"user\": \"%s\", \"identity\": \"%s/id\", "
            "\"known_hosts\": \"%s\", \"connect_timeout_s\": 5},\n"
            " \"machine_types\": {\"g\": {\"bandwidth_gbps\": 10, \"devices\": [{\"id\": "
            "\"cpu\", \"kind\": \"cpu\", \"threads\": 1}, {\"id\": \"gpu0\", \"kind\": \"gpu\", "
            "\"model\": \"A100\"}]}},\n"
            " \"machines\": [{\"name\": \"h1\", \"host\": \"127.0.0.1\", \"port\": %d, \"type\": "
            "\"g\"}, {\"name\": \"h2\", \"host\": \"127.0.0.1\", \"port\": %d, \"type\": \"g\"}],\n"
            " \"trial\": {\"launch\": \"per-host\", \"command\": \"python3 %s/tests/fixtures/"
            "trial.py\"}}\n",
            pw->pw_name, first.dir, known, first.port, second.port, TUNEDECK_SOURCE_DIR);
    fclose(f);
    n_said = 0;
}

static void teardown(void)
{
    sshd_fixture_stop(&first);
    sshd_fixture_stop(&second);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(session_refused, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static void keep_line(void *userdata, const char *line)
{
    (void)userdata;
    if (n_said < 8)
        snprintf(said[n_said++], sizeof said[0], "%s", line);
}

/* A 4-trial bespoke session on the inventory, run to its end; tuner_run_blocking's answer. */
/* The three hosts' session: bespoke, seed 1, its lines kept (keep_line). */
static SessionSpec spec_of(int budget)
{
    return (SessionSpec){.cluster = inventory,
                         .job = job,
                         .ssh_config = TEST_SSH_CONFIG,
                         .optimizer = "bespoke",
                         .seed = 1,
                         .budget = budget,
                         .trial_timeout_s = 30,
                         .on_report = keep_line};
}

static int run_session_as(Session *s, const char *launcher, int budget, Error *err)
{
    SessionSpec spec = spec_of(budget);
    spec.launcher = launcher;
    cr_assert_eq(session_open(s, &spec, err), 0, "%s", err->msg);
    cr_assert_eq(session_journal_begin(s, err), 0, "%s", err->msg);
    return tuner_run_blocking(s->tuner, err);
}

static int run_session(Session *s, Error *err)
{
    return run_session_as(s, NULL, 4, err);
}

static int said_count(const char *needle)
{
    int n = 0;
    for (int i = 0; i < n_said; i++)
        n += strstr(said[i], needle) != NULL;
    return n;
}

/* Of run_session's 4 trials, one met machine m's refusal (unreachable, its reason has
 * reason_has) and every later one ran ok without m. */
static void assert_left_out_after_it_refused(const Tuner *t, size_t m, const char *reason_has)
{
    cr_assert_eq(tuner_n_trials(t), 4);
    size_t met = 0;
    while (met < 4 && tuner_trial(t, met)->obs->status != TRIAL_UNREACHABLE)
        met++;
    cr_assert_lt(met, 4, "no trial met h%zu's refusal", m + 1);
    cr_assert(strstr(tuner_trial(t, met)->obs->reason, reason_has), "%s",
              tuner_trial(t, met)->obs->reason);
    for (size_t i = met + 1; i < 4; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        cr_assert_not(r->suggestion.schedule->worker[m] || r->suggestion.schedule->ps[m],
                      "trial %zu uses h%zu", i + 1, m + 1);
        cr_assert_eq(r->obs->status, TRIAL_OK, "trial %zu: %s", i + 1, r->obs->reason);
    }
}

Test(session_refused, a_host_whose_key_is_refused_gets_no_trial_after_the_one_that_met_it)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), 0, "%s", err.msg);
    assert_left_out_after_it_refused(s->tuner, 0, "unknown host key");
    cr_assert_eq(said_count("h1 is left out of the trials from now on: unknown host key"), 1);
    cr_assert_not(session_refused_stopped(s));
    session_free(s);
}

/* Every host refused: the session stopped, each refusal cost at most the (unreachable) trial
 * that met it, and the last trial was cancelled unlaunched, its reason starting so. */
static void assert_stopped_after_the_refusals(const Session *s, const char *reason_has)
{
    cr_assert(session_refused_stopped(s));
    const Tuner *t = s->tuner;
    size_t n = tuner_n_trials(t);
    cr_assert(n >= 2 && n <= 3, "%zu trials: each refusal costs at most the trial that met it", n);
    for (size_t i = 0; i + 1 < n; i++)
        cr_assert_eq(tuner_trial(t, i)->obs->status, TRIAL_UNREACHABLE);
    const Observation *last = tuner_trial(t, n - 1)->obs;
    cr_assert_eq(last->status, TRIAL_CANCELLED);
    cr_assert(strstr(last->reason, reason_has), "%s", last->reason);
}

Test(session_refused, a_session_whose_every_host_is_refused_stops_as_soon_as_it_knows)
{
    write_known_hosts(0, 0);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), -1);
    cr_assert(strstr(err.msg, "the host key of h1, h2 is refused (said above)"), "%s", err.msg);
    assert_stopped_after_the_refusals(s, "not launched: the host key of h1, h2 is refused");
    cr_assert_eq(said_count("h1 is left out"), 1);
    cr_assert_eq(said_count("h2 is left out"), 1);
    session_free(s);
}

/* The single launcher's host refused: trial 1 meets it, trial 2 is cancelled unlaunched and,
 * counted as every begun trial is, spends a budget of 2. The stop says to raise the budget:
 * regression, it said only "tunedeck tune --resume ID", which then ran nothing. */
Test(session_refused, a_stop_that_spent_the_budget_says_to_raise_it)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session_as(s, "single", 2, &err), -1);
    cr_assert_eq(tuner_n_trials(s->tuner), 2);
    cr_assert_eq(tuner_trial(s->tuner, 1)->obs->status, TRIAL_CANCELLED);
    cr_assert(strstr(err.msg, " --budget N (N above 2: the budget is spent, this trial "
                              "included)"),
              "%s", err.msg);
    session_free(s);
    /* with trials left, the plain resume is enough */
    Session *more = session_new(1, dir);
    cr_assert_eq(run_session_as(more, "single", 3, &err), -1);
    cr_assert_eq(tuner_n_trials(more->tuner), 2);
    cr_assert(strstr(err.msg, "then tunedeck tune --resume "), "%s", err.msg);
    cr_assert_null(strstr(err.msg, "--budget"), "%s", err.msg);
    session_free(more);
}

/* The login refused (the identity is not in the server's authorized_keys, and it offers no
 * password): refused again at every attempt until a file is fixed, as a host key is. Regression:
 * only a host key was left out, so such a host cost one unreachable trial every time. */
Test(session_refused, a_host_that_refuses_the_identity_gets_no_trial_after_the_one_that_met_it)
{
    write_known_hosts(1, 1);
    char cmd[512];
    snprintf(cmd, sizeof cmd, ": > %s/authorized_keys", second.dir);
    sh_ok(cmd);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), 0, "%s", err.msg);
    assert_left_out_after_it_refused(s->tuner, 1, "authentication failed");
    cr_assert_eq(said_count("h2 is left out of the trials from now on: authentication failed"), 1);
    cr_assert_eq(said_count("h1 is left out"), 0);
    cr_assert_not(session_refused_stopped(s));
    session_free(s);
}

Test(session_refused, a_session_whose_every_host_refuses_the_identity_stops_as_soon_as_it_knows)
{
    write_known_hosts(1, 1);
    char cmd[512];
    snprintf(cmd, sizeof cmd, ": > %s/authorized_keys; : > %s/authorized_keys", first.dir,
             second.dir);
    sh_ok(cmd);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), -1);
    cr_assert(strstr(err.msg, "h1, h2 are refused (said above), and no trial can run without "
                              "them: fix the files as said above, then tunedeck tune --resume "),
              "%s", err.msg);
    assert_stopped_after_the_refusals(s, "not launched: h1, h2 are refused");
    cr_assert_eq(said_count("h1 is left out of the trials from now on: authentication failed"), 1);
    cr_assert_eq(said_count("h2 is left out of the trials from now on: authentication failed"), 1);
    session_free(s);
}

/* A host down for a passing reason (its sshd stopped: connection refused) is not refused for
 * good: nothing is said and the session goes on trying it, as it did. */
Test(session_refused, a_host_whose_connection_is_refused_is_not_left_out)
{
    write_known_hosts(1, 1);
    sshd_fixture_pause(&second);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), 0, "%s", err.msg);
    const Tuner *t = s->tuner;
    cr_assert_eq(tuner_n_trials(t), 4);
    size_t met = 0;
    while (met < 4 && tuner_trial(t, met)->obs->status != TRIAL_UNREACHABLE)
        met++;
    cr_assert_lt(met, 4, "no trial met h2 down");
    cr_assert_eq(said_count("left out"), 0);
    cr_assert_not(session_refused_stopped(s));
    session_free(s);
}

/* An operator's override, all on machine m (its worker, its PS, the batch on its GPU). */
static Schedule *all_on(const Session *s, size_t m)
{
    const Cluster *c = s->cluster;
    Schedule *o = schedule_new(c, s->job);
    cr_assert_not_null(o);
    o->worker[m] = o->ps[m] = 1;
    o->inputs[c->machines[m].first_device + 1] = s->job->batch; /* gpu0, after the cpu */
    Error err;
    cr_assert_eq(schedule_validate(o, &err), 0, "%s", err.msg);
    return o;
}

/* An override is the operator's schedule, never moved off a refused host: one queued before
 * its host was refused is dropped unrun when its turn comes, said with the pool's words, and
 * one given after is refused at once. Regression: it ran as given and failed unreachable,
 * spending a trial the optimizer got nothing from. */
Test(session_refused, an_override_naming_a_refused_host_is_not_launched)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    SessionSpec spec = spec_of(3);
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    Schedule *on_h1 = all_on(s, 0);
    /* the first meets h1's refused key; the second waits its turn meanwhile */
    cr_assert_eq(tuner_override(s->tuner, on_h1, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_override(s->tuner, on_h1, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    const Tuner *t = s->tuner;
    cr_assert_eq(tuner_overrides(t), 0);
    cr_assert_eq(tuner_n_trials(t), 3, "the dropped override's place goes to the optimizer");
    cr_assert(tuner_trial(t, 0)->overridden);
    cr_assert_eq(tuner_trial(t, 0)->obs->status, TRIAL_UNREACHABLE);
    for (size_t i = 1; i < 3; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        cr_assert_not(r->overridden, "trial %zu ran the override", i + 1);
        cr_assert_eq(r->obs->status, TRIAL_OK, "trial %zu: %s", i + 1, r->obs->reason);
    }
    cr_assert_eq(said_count("override queued as trial 2 not launched, dropped: h1 is left out "
                            "of the trials, its host refused for good: unknown host key"),
                 1);
    /* given now, the same override is refused before it is queued */
    cr_assert_eq(tuner_override(s->tuner, on_h1, &err), -1);
    cr_assert(strstr(err.msg, "h1 is left out of the trials, its host refused for good: unknown "
                              "host key"),
              "%s", err.msg);
    cr_assert_eq(tuner_overrides(t), 0);
    schedule_free(on_h1);
    cr_assert_not(session_refused_stopped(s));
    session_free(s);
}

/* The session's pool stepped until no attempt is under way (or 10 s). */
static void settle(Session *s)
{
    struct pollfd fds[4];
    int64_t until = clock_now_ms() + 10000;
    while (!hostpool_settled(s->pool) && clock_now_ms() < until) {
        int64_t dl = until;
        size_t n = hostpool_pollfds(s->pool, fds, 4, &dl);
        poll(fds, n, 50);
        hostpool_step(s->pool, fds, n, clock_now_ms());
    }
    cr_assert(hostpool_settled(s->pool), "the hosts' attempts did not settle");
}

/* The console (holds_refused): every host refused holds the next trial instead of stopping
 * the session; the line says which hosts and what lets it go on, once; a host no longer
 * refused (here its login fixed and reconnected, as c does) lets it go, after its attempt
 * settles. Regression: the console's session stopped, though its operator could fix it. */
Test(session_refused, the_console_holds_while_every_host_is_refused_and_goes_on_once_one_is_not)
{
    write_known_hosts(1, 1);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp %s/authorized_keys %s/keys.kept && : > %s/authorized_keys",
             first.dir, dir, first.dir);
    sh_ok(cmd);
    snprintf(cmd, sizeof cmd, ": > %s/authorized_keys", second.dir);
    sh_ok(cmd);
    Session *s = session_new(1, dir);
    SessionSpec spec = spec_of(4);
    spec.keep_hosts = SESSION_KEEP_ALL;
    spec.holds_refused = 1;
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    char why[ERROR_MSG_MAX] = "";
    for (size_t m = 0; m < 2; m++)
        hostpool_connect(s->pool, m, 1);
    settle(s);
    cr_assert_eq(session_refused_check(s, why, sizeof why), 1, "%s", why);
    cr_assert_eq(session_refused_check(s, why, sizeof why), 1);
    cr_assert_eq(said_count("trials wait: h1, h2 are refused (said above), and no trial can run "
                            "without them: fix the files as said above, then reconnect with c in "
                            "the hosts view (3)"),
                 1);
    cr_assert(strstr(session_refused_hold(s), "trials wait: h1, h2"), "%s",
              session_refused_hold(s));
    cr_assert_not(session_refused_stopped(s), "the console's session is held, not stopped");
    snprintf(cmd, sizeof cmd, "cp %s/keys.kept %s/authorized_keys", dir, first.dir);
    sh_ok(cmd);
    hostpool_connect(s->pool, 0, 1);
    cr_assert_eq(session_refused_check(s, why, sizeof why), 1, "h1's attempt is under way");
    settle(s);
    cr_assert_eq(session_refused_check(s, why, sizeof why), 0);
    cr_assert_eq(said_count("trials go on: h1 is no longer refused"), 1);
    cr_assert_str_empty(session_refused_hold(s));
    session_free(s);
}

static int tuner_is_done(void *tuner)
{
    return tuner_done(tuner);
}

/* The session id, resumed with the budget given. As `tune` runs it, or as the console does
 * (its hosts connected at the start, the pool stepped by its loop beside the tuner). */
/* The session id, opened to resume with the budget given, its journal replayed and its
 * recheck begun (waited for, as `tune` does, unless console): no new trial yet. */
static Session *resume_begun(const char *id, int budget, int console)
{
    Session *s = session_new(1, dir);
    SessionSpec spec = {.ssh_config = TEST_SSH_CONFIG, .budget = budget, .on_report = keep_line};
    if (console) {
        spec.keep_hosts = SESSION_KEEP_ALL;
        spec.stops_on_loop = spec.holds_refused = 1;
    }
    Error err;
    n_said = 0;
    cr_assert_eq(session_resume(s, id, &spec, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    return s;
}

static Session *resume_to_as(const char *id, int budget, int console)
{
    Session *s = resume_begun(id, budget, console);
    Error err;
    if (console) {
        EvLoop *l = evloop_new();
        cr_assert_not_null(l);
        cr_assert_gt(hostpool_attach(s->pool, l), 0);
        cr_assert_gt(tuner_attach(s->tuner, l), 0);
        cr_assert_eq(evloop_run(l, tuner_is_done, s->tuner, -1), 1);
        evloop_free(l);
        cr_assert_null(tuner_last_error(s->tuner), "%s", tuner_last_error(s->tuner));
    } else {
        cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    }
    cr_assert_eq(tuner_n_trials(s->tuner), (size_t)budget);
    return s;
}

/* The session run_session journaled, resumed with a budget of 7: 3 new trials. */
static Session *resume_to_seven_as(const char *id, int console)
{
    return resume_to_as(id, 7, console);
}

static Session *resume_to_seven(const char *id)
{
    return resume_to_seven_as(id, 0);
}

/* A 4-trial session in which h1's host key is refused (h1 left out after the trial that met
 * it); its id into id. */
static void run_with_h1_refused(char *id, size_t cap)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session(s, &err), 0, "%s", err.msg);
    assert_left_out_after_it_refused(s->tuner, 0, "unknown host key");
    snprintf(id, cap, "%s", tune_journal_id(s->journal));
    session_free(s);
}

static int uses(const TrialRecord *r, size_t m)
{
    return r->suggestion.schedule->worker[m] || r->suggestion.schedule->ps[m];
}

/* Trials from..to-1 (0-based) of the session ran ok, none of them on h1. */
static void assert_ok_off_h1(const Session *s, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const TrialRecord *r = tuner_trial(s->tuner, i);
        cr_assert_eq(r->obs->status, TRIAL_OK, "trial %zu: %s", i + 1, r->obs->reason);
        cr_assert_not(uses(r, 0), "trial %zu uses h1", i + 1);
    }
}

/* A resume checks the hosts its journal left out before its first new trial: h1, still
 * refused, is left out from the start, said once with why and how to accept it. Regression:
 * the fresh pool did not know, so a new trial could try h1 again and be lost unreachable. */
static void assert_resume_left_h1_out(int console)
{
    char id[64];
    run_with_h1_refused(id, sizeof id);
    Session *s = resume_to_seven_as(id, console);
    assert_ok_off_h1(s, 4, 7);
    cr_assert_eq(said_count("h1 is still left out of the trials (refused when the session last "
                            "ran, and again now): unknown host key"),
                 1);
    cr_assert_eq(said_count("accept it with --accept-new-host-keys"), 1);
    cr_assert_eq(said_count("h1 is left out of the trials from now on"), 0);
    cr_assert_eq(said_count("in the trials again"), 0);
    session_free(s);
}

Test(session_refused, a_resume_leaves_a_host_still_refused_out_from_its_first_trial)
{
    assert_resume_left_h1_out(0);
}

/* On the console the hosts connect as it starts, its loop stepping them: its first new trial
 * waits for h1's answer before its suggestion is made. */
Test(session_refused, a_console_resume_leaves_a_host_still_refused_out_from_its_first_trial)
{
    assert_resume_left_h1_out(1);
}

/* ... and h1, its key added to known_hosts since, is used again, said once. */
Test(session_refused, a_resume_uses_again_a_host_no_longer_refused)
{
    char id[64];
    run_with_h1_refused(id, sizeof id);
    write_known_hosts(1, 1);
    Session *s = resume_to_seven(id);
    int on_h1 = 0;
    for (size_t i = 4; i < 7; i++) {
        const TrialRecord *r = tuner_trial(s->tuner, i);
        cr_assert_eq(r->obs->status, TRIAL_OK, "trial %zu: %s", i + 1, r->obs->reason);
        on_h1 += uses(r, 0);
    }
    cr_assert_gt(on_h1, 0, "no new trial used h1");
    cr_assert_eq(said_count("h1 is in the trials again: it was left out when the session last "
                            "ran (its host refused), and its host key and login are accepted "
                            "now"),
                 1);
    cr_assert_eq(said_count("left out of the trials"), 0);
    session_free(s);
}

/* A 1-trial session whose one trial met h1's refusal, lost unreachable: the session stopped
 * before any later suggestion could journal h1 left out. Its resume to 3 checks h1 again too
 * (a host of a trial lost unreachable after the last suggestion), so h1, still refused, is
 * left out from its first new trial, said once. Regression: the journal's last `left_out`
 * did not name it, so the resume's first trial tried h1 again and was lost unreachable. */
static void assert_resume_left_out_the_last_trials_refused_host(int console)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session_as(s, NULL, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(tuner_n_trials(s->tuner), 1);
    const TrialRecord *last = tuner_trial(s->tuner, 0);
    cr_assert_eq(last->obs->status, TRIAL_UNREACHABLE, "%s", last->obs->reason);
    cr_assert(strstr(last->obs->reason, "unknown host key"), "%s", last->obs->reason);
    cr_assert_null(last->left_out);
    char id[64];
    snprintf(id, sizeof id, "%s", tune_journal_id(s->journal));
    session_free(s);
    s = resume_to_as(id, 3, console);
    assert_ok_off_h1(s, 1, 3);
    cr_assert_eq(said_count("h1 is left out of the trials from now on: unknown host key"), 1);
    cr_assert_eq(said_count("in the trials again"), 0);
    session_free(s);
}

Test(session_refused, a_resume_leaves_out_a_host_refused_in_the_last_trial_before_it)
{
    assert_resume_left_out_the_last_trials_refused_host(0);
}

Test(session_refused, a_console_resume_leaves_out_a_host_refused_in_the_last_trial_before_it)
{
    assert_resume_left_out_the_last_trials_refused_host(1);
}

/* A console resume with no trial left (its budget the 4 trials run), given 3 by :budget
 * before h1's first connection answered: its recheck, skipped at the start, runs before the
 * first of them, so h1, still refused, is left out from it and said so. Regression: only the
 * start decided the recheck, so the raised budget's first trial could try h1 and be lost
 * unreachable (or h1 be said refused as if for the first time). */
Test(session_refused, a_console_resume_with_no_trial_left_rechecks_when_its_budget_is_raised)
{
    char id[64];
    run_with_h1_refused(id, sizeof id);
    Session *s = session_new(1, dir);
    SessionSpec spec = {.ssh_config = TEST_SSH_CONFIG,
                        .budget = 4,
                        .on_report = keep_line,
                        .keep_hosts = SESSION_KEEP_ALL,
                        .stops_on_loop = 1,
                        .holds_refused = 1};
    Error err;
    n_said = 0;
    cr_assert_eq(session_resume(s, id, &spec, 1, &err), 0, "%s", err.msg);
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    EvLoop *l = evloop_new();
    cr_assert_not_null(l);
    cr_assert_gt(hostpool_attach(s->pool, l), 0);
    cr_assert_gt(tuner_attach(s->tuner, l), 0);
    tuner_set_budget(s->tuner, 7); /* the operator's :budget 7 */
    cr_assert_eq(evloop_run(l, tuner_is_done, s->tuner, -1), 1);
    evloop_free(l);
    cr_assert_null(tuner_last_error(s->tuner), "%s", tuner_last_error(s->tuner));
    cr_assert_eq(tuner_n_trials(s->tuner), 7);
    assert_ok_off_h1(s, 4, 7);
    cr_assert_eq(said_count("h1 is still left out of the trials (refused when the session last "
                            "ran, and again now): unknown host key"),
                 1);
    cr_assert_eq(said_count("h1 is left out of the trials from now on"), 0);
    session_free(s);
}

/* Machine m's host as the session's pool knows it now. */
static HostInfo host_now(const Session *s, size_t m)
{
    HostInfo hi;
    hostpool_info(s->pool, m, &hi);
    return hi;
}

/* The single launcher's host (h1) refused: trial 1 met it, and trial 2, cancelled unlaunched,
 * was suggested with h1 left out, journaled as the per-host launcher's are (the optimizer not
 * told: no schedule avoids the launch host). Its resume to 3 checks h1 again before its first
 * new trial: still refused, that trial is cancelled unlaunched, said "still left out", or,
 * its key added since, h1 is used again, said once, and the trial runs. Regression: the
 * single launcher journaled no left_out, so the resume's first trial tried h1 and was lost
 * unreachable, a trial of the budget spent on learning what the journal could have said. */
static void assert_single_resume_checks_its_launch_host(int fixed)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    Error err;
    cr_assert_eq(run_session_as(s, "single", 2, &err), -1);
    cr_assert_eq(tuner_n_trials(s->tuner), 2);
    const TrialRecord *first = tuner_trial(s->tuner, 0), *second = tuner_trial(s->tuner, 1);
    cr_assert_eq(first->obs->status, TRIAL_UNREACHABLE, "%s", first->obs->reason);
    cr_assert_null(first->left_out);
    cr_assert_eq(second->obs->status, TRIAL_CANCELLED, "%s", second->obs->reason);
    cr_assert(second->left_out && second->left_out[0] && !second->left_out[1]);
    char id[64];
    snprintf(id, sizeof id, "%s", tune_journal_id(s->journal));
    session_free(s);
    if (fixed)
        write_known_hosts(1, 1);
    s = resume_begun(id, 3, 0);
    cr_assert_eq(host_now(s, 0).refused, !fixed, "h1 checked before the first new trial");
    cr_assert_eq(host_now(s, 1).attempts, 0, "h2 is no host of the single launcher");
    int rc = tuner_run_blocking(s->tuner, &err);
    cr_assert_eq(tuner_n_trials(s->tuner), 3);
    const Observation *third = tuner_trial(s->tuner, 2)->obs;
    if (fixed) {
        cr_assert_eq(rc, 0, "%s", err.msg);
        cr_assert_eq(third->status, TRIAL_OK, "%s", third->reason);
        cr_assert_eq(said_count("h1 is in the trials again: it was left out when the session "
                                "last ran (its host refused), and its host key and login are "
                                "accepted now"),
                     1);
    } else {
        cr_assert_eq(rc, -1);
        cr_assert_eq(third->status, TRIAL_CANCELLED, "%s", third->reason);
        cr_assert(strstr(third->reason, "not launched: the host key of h1 is refused"), "%s",
                  third->reason);
        cr_assert_eq(said_count("h1 is still left out of the trials (refused when the session "
                                "last ran, and again now): unknown host key"),
                     1);
    }
    session_free(s);
}

Test(session_refused, a_single_sessions_resume_leaves_its_launch_host_still_refused_out)
{
    assert_single_resume_checks_its_launch_host(0);
}

Test(session_refused, a_single_sessions_resume_uses_its_launch_host_again_once_accepted)
{
    assert_single_resume_checks_its_launch_host(1);
}

/* An operator's override on h1 and h2 (a worker and the batch on each, h1's PS). */
static Schedule *on_both(const Session *s)
{
    const Cluster *c = s->cluster;
    Schedule *o = schedule_new(c, s->job);
    cr_assert_not_null(o);
    o->worker[0] = o->worker[1] = o->ps[0] = 1;
    o->inputs[c->machines[0].first_device + 1] = s->job->batch / 2;
    o->inputs[c->machines[1].first_device + 1] = s->job->batch - s->job->batch / 2;
    Error err;
    cr_assert_eq(schedule_validate(o, &err), 0, "%s", err.msg);
    return o;
}

/* A 1-trial session whose trial, the override on_both, met h1's refused key, lost unreachable,
 * h2 connected before it (its part ran, or was never sent to a host that answered); its id
 * into id, its journal's path into path. */
static void run_override_lost_on_h1(char *id, size_t id_cap, char *path, size_t path_cap)
{
    write_known_hosts(0, 1);
    Session *s = session_new(1, dir);
    SessionSpec spec = spec_of(1);
    Error err;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    cr_assert_eq(session_journal_begin(s, &err), 0, "%s", err.msg);
    hostpool_connect(s->pool, 1, 0);
    settle(s);
    cr_assert_eq(host_now(s, 1).state, HOST_READY, "%s", host_now(s, 1).last_error);
    Schedule *both = on_both(s);
    cr_assert_eq(tuner_override(s->tuner, both, &err), 0, "%s", err.msg);
    schedule_free(both);
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    const Observation *o = tuner_trial(s->tuner, 0)->obs;
    cr_assert_eq(o->status, TRIAL_UNREACHABLE, "%s", o->reason);
    cr_assert(strstr(o->reason, "unknown host key"), "%s", o->reason);
    snprintf(id, id_cap, "%s", tune_journal_id(s->journal));
    snprintf(path, path_cap, "%s", tune_journal_path(s->journal));
    session_free(s);
}

/* The lost trial's finished line names the host it did not reach ("unreachable": ["h1"]), so
 * its resume checks h1 alone, not h2, which ran its part (its key and login accepted).
 * Regression: the line said the refusal in words only, and every host of the trial was
 * connected again, a connect_timeout_s each for those that do not answer. */
Test(session_refused, a_resume_checks_only_the_host_a_lost_trial_did_not_reach)
{
    char id[64], path[4096];
    run_override_lost_on_h1(id, sizeof id, path, sizeof path);
    Session *s = resume_begun(id, 2, 0);
    const Observation *lost = tuner_trial(s->tuner, 0)->obs;
    cr_assert_eq(lost->status, TRIAL_UNREACHABLE);
    cr_assert(lost->unreachable && lost->unreachable[0] && !lost->unreachable[1],
              "the journal names h1 alone");
    cr_assert(host_now(s, 0).refused, "h1 checked before the first new trial");
    cr_assert_eq(host_now(s, 1).attempts, 0, "h2 reached by the lost trial: not checked");
    Error err;
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    assert_ok_off_h1(s, 1, 2);
    cr_assert_eq(said_count("h1 is left out of the trials from now on: unknown host key"), 1);
    session_free(s);
}

/* The same trial, the session killed before its finished line (cut here): the resume marks it
 * interrupted, and checks every host it used, h1 among them, before its first new trial.
 * Regression: only a trial lost unreachable was looked at, so the refusal an interrupted trial
 * met was the resume's first trial's to meet again. */
Test(session_refused, a_resume_checks_the_hosts_of_a_trial_interrupted_since_the_last_suggestion)
{
    char id[64], path[4096];
    run_override_lost_on_h1(id, sizeof id, path, sizeof path);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "sed -i '/\"event\": *\"finished\"/,$d' '%s'", path);
    sh_ok(cmd);
    Session *s = resume_begun(id, 2, 0);
    const Observation *cut = tuner_trial(s->tuner, 0)->obs;
    cr_assert_eq(cut->status, TRIAL_INTERRUPTED, "%s", cut->reason);
    cr_assert(host_now(s, 0).refused, "h1 checked before the first new trial");
    cr_assert_gt(host_now(s, 1).attempts, 0, "h2, used by the interrupted trial, checked too");
    Error err;
    cr_assert_eq(tuner_run_blocking(s->tuner, &err), 0, "%s", err.msg);
    assert_ok_off_h1(s, 1, 2);
    cr_assert_eq(said_count("h1 is left out of the trials from now on: unknown host key"), 1);
    session_free(s);
}
