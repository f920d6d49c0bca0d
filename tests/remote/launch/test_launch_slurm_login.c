/* The slurm launcher through a login node (a real sshd of the test's own, its Slurm commands
 * stand-ins first on the PATH its ForceCommand sets): a stopped trial's scancel runs there on a
 * second channel of the session, and what becomes of its steps when that scancel gives no
 * answer of its own (the connection dropped under it) or answers that it failed; the stop
 * by a cancel and by the backstop past the step's time limit. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/readall.h"
#include "remote/launch/launch_slurm.h"
#include "remote/launch/launch_slurm_priv.h"
#include "tests/support/fixtures.h"
#include "tests/support/launchstep.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

static Cluster *c;
static Schedule *s;
static Sshd sshd;
static char dir[] = "/tmp/tunedeck-lslurm-login.XXXXXX";
static char steps_left[256];
static int lefts, said_ready;

static void setup(void)
{
    c = fixture_cluster_json(
        "{\"name\": \"s\", \"machine_types\": {\"one\": {\"bandwidth_gbps\": 10, \"devices\": "
        "[{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"n1\", \"host\": \"n1\", \"type\": \"one\"}]}");
    s = fixture_schedule(c, 10);
    s->worker[0] = 1;
    cr_assert_not_null(mkdtemp(dir));
}

/* The stand-in srun's sleep may outlive the connection the test's scancel cut (the stop of
 * its group raced the drop): stopped if that pid is still the sleep with this test's folder in
 * its environment (not one reused). */
static void stop_srun(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/srun.pid", dir);
    size_t len = 0;
    Error err;
    char *pid = readall_file(path, 64, &len, &err);
    long p = pid ? atol(pid) : 0;
    free(pid);
    if (p <= 1)
        return;
    snprintf(path, sizeof path, "/proc/%ld/environ", p);
    char *env = readall_file(path, 1 << 20, &len, &err);
    char mark[128];
    snprintf(mark, sizeof mark, "TUNEDECK_TEST_SRUN=%s", dir);
    for (size_t at = 0; env && at < len; at += strlen(env + at) + 1)
        if (strcmp(env + at, mark) == 0) {
            kill((pid_t)p, SIGKILL);
            break;
        }
    free(env);
}

static void teardown(void)
{
    stop_srun();
    sshd_fixture_stop(&sshd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "%s failed\n", cmd);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    schedule_free(s);
    cluster_free(c);
}

TestSuite(launch_slurm_login, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static void stand_in(const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s", body);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static void keep_steps(void *ud, int trial, const char *steps)
{
    (void)ud;
    cr_assert_eq(trial, s->trial);
    snprintf(steps_left, sizeof steps_left, "%s", steps);
    lefts++;
}

static void note_ready(void *ud, const char *machine, StreamKind stream, const char *line)
{
    (void)ud, (void)machine, (void)stream;
    if (strcmp(line, "ready") == 0)
        said_ready = 1;
}

/* The login node (this test's sshd) with the stand-in srun, which reports step 12.0 and runs
 * on, and the stand-in `scancel_body`; the launch's config, on a pool the caller frees. */
static LaunchConfig login_trial(const char *scancel_body)
{
    char extra[512];
    snprintf(extra, sizeof extra,
             "ForceCommand PATH=%s:$PATH exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"", dir);
    sshd_fixture_start(&sshd, extra);
    char body[512];
    snprintf(body, sizeof body,
             "cat > /dev/null\necho $$ > '%s/srun.pid'\necho 'tunedeck-step 12.0' >&2\n"
             "echo ready >&2\nTUNEDECK_TEST_SRUN='%s' exec sleep 30\n",
             dir, dir);
    stand_in("srun", body);
    stand_in("scancel", scancel_body);
    return (LaunchConfig){.command = "true",
                          .slurm_job = "12",
                          .timeout_s = 60,
                          .remote = sshd_fixture_pool(&sshd, "login"),
                          .remote_host = "login",
                          .on_log = note_ready,
                          .on_steps_left = keep_steps};
}

/* A trial on the login node whose srun reports step 12.0 and runs on, cancelled once it
 * said so; its scancel is the stand-in `scancel_body`. Returns its observation. */
static Observation *cancelled_trial(const char *scancel_body)
{
    LaunchConfig cfg = login_trial(scancel_body);
    Observation *o = launchstep_cancel_once("slurm", &cfg, s, &said_ready,
                                            "the stand-in srun ended before it said all");
    cr_assert_not_null(o);
    hostpool_free(cfg.remote);
    return o;
}

/* The stand-in scancel that drops its own connection before it can answer: it kills the
 * sshd processes above it but the listener (the one whose parent is not an sshd), as a
 * login node's sshd that went away mid-scancel. */
static const char DROPPING_SCANCEL[] =
    "p=$PPID\n"
    "while [ \"$p\" -gt 1 ]; do\n"
    "    up=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status)\n"
    "    case $(cat /proc/$p/comm)/$(cat /proc/$up/comm) in sshd*/sshd*) kill -KILL $p ;; esac\n"
    "    p=$up\n"
    "done\n";

/* Regression: a cancelled trial's scancel that the login node's drop cut left step 12.0
 * running, holding the allocation's GPUs, with nothing said: only an unreachable trial
 * passed its steps on. */
Test(launch_slurm_login, a_cancel_whose_scancel_the_drop_cut_passes_its_steps_on)
{
    Observation *o = cancelled_trial(DROPPING_SCANCEL);
    cr_assert_eq(o->status, TRIAL_CANCELLED, "%s", o->reason);
    cr_assert_eq(lefts, 1, "the steps were not passed on: %s", o->reason);
    cr_assert_str_eq(steps_left, "12.0");
    cr_assert_str_eq(o->reason, "cancelled; its step 12.0 may still run: cancelled once the "
                                "login node answers again");
    observation_free(o);
}

/* A scancel that ran on a connection that stands and failed (the step had ended by itself) has
 * said its last word: nothing is passed on, and the reason stays the cancel's. */
Test(launch_slurm_login, a_cancel_whose_scancel_answered_a_failure_passes_nothing_on)
{
    Observation *o = cancelled_trial("echo 'scancel: error: Kill job error on job step id 12.0: "
                                     "Invalid job id specified' >&2\nexit 1\n");
    cr_assert_eq(o->status, TRIAL_CANCELLED, "%s", o->reason);
    cr_assert_eq(lefts, 0, "passed on: %s", steps_left);
    cr_assert_str_eq(o->reason, "cancelled");
    observation_free(o);
}

/* The slurm launcher's run of s with cfg, stepped until its srun said it is ready. */
static void *started_until_ready(const LauncherKind *k, const LaunchConfig *cfg)
{
    Error err;
    void *r = k->start(cfg, s, &err);
    cr_assert_not_null(r, "%s", err.msg);
    while (!said_ready && !k->finished(r)) {
        struct pollfd fds[8];
        int64_t deadline = -1;
        size_t n = k->pollfds(r, fds, 8, &deadline);
        int rc = poll(fds, n, 100);
        k->step(r, fds, rc > 0 ? n : 0, clock_now_ms());
    }
    cr_assert(said_ready, "the stand-in srun ended before it said all");
    return r;
}

/* The backstop: srun on the login node neither ended nor had its step ended by Slurm's own
 * limit, so at the backstop tunedeck cancels step 12.0 itself (no cancel of the caller's) and
 * stops srun, and the login node drops under that scancel. The trial timed out, and its
 * scancel gave no answer: the step is passed on, to be cancelled when the login node answers
 * again, and the reason says so. Neither the drop nor the backstop had a test: the backstop is
 * minutes away (launch_slurm_backstop_move brings it to now).
 * Regression too: the reason named the inner run's timeout, the step's limit and 120 s
 * ("ran past the 180 s trial timeout" for a trial given 60 s). */
Test(launch_slurm_login, a_backstop_whose_scancel_the_drop_cut_passes_its_steps_on)
{
    LaunchConfig cfg = login_trial(DROPPING_SCANCEL);
    const LauncherKind *k = launcher_find("slurm");
    void *r = started_until_ready(k, &cfg);
    launch_slurm_backstop_move(r, clock_now_ms());
    cr_assert_eq(launcher_wait(k, r), 0, "poll: %s", strerror(errno));
    Observation *o = k->result(r);
    cr_assert_not_null(o);
    k->free(r);
    hostpool_free(cfg.remote);
    cr_assert_eq(o->status, TRIAL_TIMEOUT, "%s: %s", trial_status_name(o->status), o->reason);
    cr_assert_eq(lefts, 1, "the steps were not passed on: %s", o->reason);
    cr_assert_str_eq(steps_left, "12.0");
    cr_assert_str_eq(o->reason, "ran past the 60 s trial timeout: Slurm had not ended its step "
                                "120 s after its 1 min limit; its step 12.0 may still run: "
                                "cancelled once the login node answers again");
    observation_free(o);
}

/* Regression: once the backstop's scancel had answered, the run still gave the backstop, past,
 * as its deadline until srun ended (up to the stop's 5 s, or Slurm's KillWait), so the poll
 * loop spun. Here srun lingers a second after the scancel ran (it answers exit 0 at once),
 * its SIGTERM ignored: no deadline the run gives after the backstop fired may be the backstop
 * again. */
Test(launch_slurm_login, a_backstop_that_fired_is_no_deadline_any_more)
{
    char scancel[256];
    snprintf(scancel, sizeof scancel, "touch '%s/scancel.ran'\n", dir);
    LaunchConfig cfg = login_trial(scancel);
    /* the stand-in srun, deaf to the stop's SIGTERM (as srun waiting for its step's tasks),
     * ending a second after the scancel ran */
    char srun[512];
    snprintf(srun, sizeof srun,
             "trap '' TERM HUP\ncat > /dev/null\necho 'tunedeck-step 12.0' >&2\n"
             "echo ready >&2\nwhile [ ! -e '%s/scancel.ran' ]; do sleep 0.1; done\n"
             "exec sleep 1\n",
             dir);
    stand_in("srun", srun);
    const LauncherKind *k = launcher_find("slurm");
    void *r = started_until_ready(k, &cfg);
    int64_t backstop = clock_now_ms() - 60000; /* passed a minute ago: due at once */
    launch_slurm_backstop_move(r, backstop);
    k->step(r, NULL, 0, clock_now_ms()); /* it fires: the scancel goes */
    while (!k->finished(r)) {
        struct pollfd fds[8];
        int64_t deadline = -1;
        size_t n = k->pollfds(r, fds, 8, &deadline);
        char ran[256];
        snprintf(ran, sizeof ran, "%s/scancel.ran", dir);
        cr_assert(deadline < 0 || deadline > backstop,
                  "the run's deadline is its backstop, past: the poll loop would spin (the "
                  "scancel %s)",
                  access(ran, F_OK) == 0 ? "ran" : "has not run yet");
        int rc = poll(fds, n, 100);
        k->step(r, fds, rc > 0 ? n : 0, clock_now_ms());
    }
    Observation *o = k->result(r);
    cr_assert_not_null(o);
    k->free(r);
    hostpool_free(cfg.remote);
    /* the scancel answered exit 0: the step was told to end, nothing is passed on */
    cr_assert_eq(lefts, 0, "passed on: %s (%s)", steps_left, o->reason);
    observation_free(o);
}
