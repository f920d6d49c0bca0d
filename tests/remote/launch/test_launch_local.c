/* The local launcher against real subprocesses: the simulator as a trial command, and
 * shell scripts that fail, hang, print garbage or leave children behind. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sim/simcluster.h"
#include "core/base/clock.h"
#include "remote/launch/launcher.h"
#include "remote/launch/lifeline.h"
#include "tests/support/execprobe.h"
#include "tests/support/fixtures.h"
#include "tests/support/ownkill.h"
#include "tests/support/timeout.h"

static SimCluster *sim;
static Schedule *sched;
static char cmd[1024];

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    const Cluster *c = simcluster_cluster(sim);
    sched = schedule_new(c, simcluster_job(sim));
    sched->worker[0] = sched->ps[0] = 1;
    sched->inputs[c->machines[0].first_device + 1] = sched->job.batch;
    sched->job.iterations = 6;
    sched->job.warmup = 2;
}

static void teardown(void)
{
    schedule_free(sched);
    simcluster_free(sim);
}

TestSuite(launch_local, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static Observation *run(const char *command, double timeout_s)
{
    LaunchConfig cfg = {.command = command, .timeout_s = timeout_s};
    Error err;
    Observation *o = launcher_run_blocking(launcher_find("local"), &cfg, sched, &err);
    cr_assert_not_null(o, "%s", err.msg);
    return o;
}

Test(launch_local, sim_trial_subprocess_succeeds_with_part_measurements)
{
    const char *bin = getenv("TUNEDECK_BIN");
    cr_assert_not_null(bin, "run through make: TUNEDECK_BIN names the built binary");
    snprintf(cmd, sizeof cmd, "'%s' sim-trial B:googlenet --seed 3", bin);
    Observation *o = run(cmd, 30);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert(o->time_s > 0);
    cr_assert(o->comm_s > 0);
    cr_assert(o->device_time_s[1] > 0, "the GPU's time came back");
    cr_assert_eq(o->iterations_seen, 6);
    observation_free(o);
}

Test(launch_local, schedule_arrives_on_stdin)
{
    /* The script echoes the batch from its stdin back as the objective. */
    Observation *o = run("b=$(sed -n 's/.*\"batch\":\\([0-9]*\\).*/\\1/p'); "
                         "echo \"{\\\"event\\\":\\\"done\\\",\\\"time_s\\\":$b}\"",
                         10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, sched->job.batch, 1e-9);
    observation_free(o);
}

Test(launch_local, nonzero_exit_fails_with_status_and_stderr)
{
    Observation *o = run("cat >/dev/null; echo 'CUDA went away' >&2; exit 3", 10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "status 3"), "%s", o->reason);
    cr_assert(strstr(o->reason, "CUDA went away"), "%s", o->reason);
    observation_free(o);
}

Test(launch_local, error_event_fails_the_trial)
{
    Observation *o =
        run("cat >/dev/null; echo '{\"event\": \"error\", \"message\": \"out of memory\"}'", 10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "out of memory"), "%s", o->reason);
    observation_free(o);
}

Test(launch_local, an_error_event_is_the_reason_not_a_later_stderr_line)
{
    /* rank 1 says why and exits; rank 0 then loses its peer and prints that last */
    Observation *o = run("cat >/dev/null; "
                         "echo '{\"event\": \"error\", \"message\": \"rank 1: ValueError: x\"}'; "
                         "echo 'RuntimeError: Connection closed by peer' >&2; exit 1",
                         10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "status 1 (error event: rank 1: ValueError: x)"), "%s",
              o->reason);
    cr_assert_null(strstr(o->reason, "Connection closed"), "%s", o->reason);
    observation_free(o);

    /* without an error event the last stderr line is all there is, and it stays */
    o = run("cat >/dev/null; echo 'ModuleNotFoundError: tunedeck_trial' >&2; exit 1", 10);
    cr_assert(strstr(o->reason, "ModuleNotFoundError"), "%s", o->reason);
    observation_free(o);
}

Test(launch_local, a_rank_that_died_without_a_word_is_named_beside_a_peers_error_event)
{
    /* Regression: rank 2 was killed (no error event of its own); rank 0 lost its peer and
     * said so first, and the reason read "exited with status 137 (error event: rank 0 ...
     * Connection reset by peer)", blaming the survivor. The fan-out's notice (rankfan.c)
     * names the rank that failed first. */
    Observation *o = run("cat >/dev/null; echo '{\"event\": \"error\", \"message\": "
                         "\"rank 0 on h1: RuntimeError: Connection reset by peer\"}'; "
                         "echo 'tunedeck: rank 2 (h2 cpu) exited with status 137; stopping the "
                         "other ranks of this host'; exit 137",
                         10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert_str_eq(o->reason,
                     "the command exited: rank 2 (h2 cpu) exited with status 137 (error event: "
                     "rank 0 on h1: RuntimeError: Connection reset by peer)");
    observation_free(o);

    /* a log line that merely looks like it is not the notice */
    o = run("cat >/dev/null; echo 'tunedeck: rank 2 is slow'; exit 3", 10);
    cr_assert(strstr(o->reason, "the command exited with status 3"), "%s", o->reason);
    observation_free(o);
}

Test(launch_local, garbage_output_fails_and_log_lines_are_kept_apart)
{
    Observation *o = run("cat >/dev/null; echo 'loading data...'; echo '{\"event\": 5}'; "
                         "printf 'no newline at the end'",
                         10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "no usable output"), "%s", o->reason);
    observation_free(o);

    /* log text between good lines does not spoil a trial */
    o = run("cat >/dev/null; echo 'step 1'; echo '{\"event\":\"iteration\",\"iter\":1,"
            "\"time_s\":2}'; echo 'step 2'; echo '{\"event\":\"done\",\"time_s\":2.5}'",
            10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 2.5, 1e-12);
    observation_free(o);
}

/* A line with a key twice is a bad protocol line like any other: refused, named in the
 * trial's note, never read from whichever copy cJSON finds first. */
Test(launch_local, a_line_with_a_key_twice_is_a_refused_line)
{
    Observation *o = run("cat >/dev/null; echo '{\"event\":\"iteration\",\"iter\":1,"
                         "\"time_s\":2}'; echo '{\"event\":\"done\",\"time_s\":2.5}'; "
                         "echo '{\"event\":\"progress\",\"step\":1,\"step\":7}'",
                         10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 2.5, 1e-12);
    cr_assert(strstr(o->reason, "first bad line: event line: key \"step\" appears twice"), "%s",
              o->reason);
    observation_free(o);
}

/* A NUL byte cut a line there, the rest dropped unseen: `{"event":"done","time_s":2.5}` then
 * NUL and a second event read as the done event alone. Refused, naming the byte. */
Test(launch_local, a_line_with_a_nul_byte_is_a_refused_line)
{
    Observation *o = run("cat >/dev/null; echo '{\"event\":\"iteration\",\"iter\":1,"
                         "\"time_s\":2}'; printf '{\"event\":\"progress\",\"step\":1}\\000"
                         "{\"event\":\"error\",\"message\":\"x\"}\\n'; "
                         "echo '{\"event\":\"done\",\"time_s\":2.5}'",
                         10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert(strstr(o->reason, "first bad line: event line: expected JSON text, found a NUL "
                                "byte at byte 30"),
              "%s", o->reason);
    observation_free(o);
}

Test(launch_local, an_ok_trial_with_a_refused_line_says_the_first_in_its_note)
{
    /* a diverged run's loss (Python's bare NaN) among good lines: the trial measured its
     * schedule, but must not end ok with nothing said */
    Observation *o = run("cat >/dev/null; echo '{\"event\":\"iteration\",\"iter\":1,"
                         "\"time_s\":2}'; echo '{\"event\":\"progress\",\"step\":1,"
                         "\"loss\":NaN}'; echo '{\"event\":\"progress\",\"step\":2,"
                         "\"loss\":Infinity}'; echo '{\"event\":\"done\",\"time_s\":2.5}'",
                         10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 2.5, 1e-12);
    cr_assert(strncmp(o->reason, "first bad line: ", 16) == 0, "%s", o->reason);
    cr_assert(strstr(o->reason, "loss"), "the field named: %s", o->reason);
    cr_assert_null(strstr(o->reason + 1, "first bad line"), "the first only: %s", o->reason);
    observation_free(o);

    /* a failed trial's reason comes first, the bad line after it */
    o = run("cat >/dev/null; echo '{\"event\":\"progress\",\"step\":1,\"loss\":NaN}'; "
            "echo 'CUDA went away' >&2; exit 3",
            10);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "status 3"), "%s", o->reason);
    observation_free(o);
}

Test(launch_local, timeout_stops_the_whole_process_group)
{
    char marker[64];
    snprintf(marker, sizeof marker, "tunedeck-test-sleeper-%d", (int)getpid());
    /* a child that ignores SIGTERM must still be gone after the kill grace */
    snprintf(cmd, sizeof cmd,
             "cat >/dev/null; sh -c 'trap \"\" TERM; sleep 300; : %s' & sleep 300", marker);
    Observation *o = run(cmd, 0.5);
    cr_assert_eq(o->status, TRIAL_TIMEOUT, "%s", o->reason);
    cr_assert(strstr(o->reason, "timeout"), "%s", o->reason);
    observation_free(o);
    char check[128];
    /* the bracket keeps pgrep's own shell from matching itself */
    snprintf(check, sizeof check, "pgrep -f '[t]%s' >/dev/null", marker + 1);
    cr_assert_neq(system(check), 0, "the trial left '%s' running", marker);
}

Test(launch_local, cancel_is_recorded_as_cancelled)
{
    LaunchConfig cfg = {.command = "cat >/dev/null; sleep 60", .timeout_s = 30};
    const LauncherKind *k = launcher_find("local");
    Error err;
    void *r = k->start(&cfg, sched, &err);
    cr_assert_not_null(r, "%s", err.msg);
    k->cancel(r);
    cr_assert_eq(launcher_wait(k, r), 0, "poll: %s", strerror(errno));
    Observation *o = k->result(r);
    cr_assert_eq(o->status, TRIAL_CANCELLED);
    observation_free(o);
    k->free(r);
}

Test(launch_local, a_huge_line_is_read_whole)
{
    /* a done line padded past 64 KiB with a long log field still parses */
    Observation *o = run("cat >/dev/null; printf '{\"event\":\"done\",\"time_s\":1.5,\"pad\":\"'; "
                         "head -c 300000 /dev/zero | tr '\\0' x; printf '\"}\\n'",
                         10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 1.5, 1e-12);
    observation_free(o);
}

/* A trial's input carries a secret of its own (ps_secret, 64 hex digits), fresh for every
 * trial, and only there: not in the command's environment or arguments. */
static void secret_of_run(const char *dir, int k, char out[65])
{
    snprintf(cmd, sizeof cmd,
             "cat >'%s/in%d'; env >'%s/env%d'; cat /proc/$$/cmdline >'%s/args%d'; "
             "echo '{\"event\":\"done\",\"time_s\":1}'",
             dir, k, dir, k, dir, k);
    Observation *o = run(cmd, 10);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    observation_free(o);
    char path[600];
    snprintf(path, sizeof path, "%s/in%d", dir, k);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *p = strstr(text, "\"ps_secret\":\"");
    cr_assert_not_null(p, "no ps_secret in the input: %s", text);
    p += strlen("\"ps_secret\":\"");
    cr_assert_eq(strspn(p, "0123456789abcdef"), 64, "%.80s", p);
    cr_assert_eq(p[64], '"');
    memcpy(out, p, 64);
    out[64] = 0;
    const char *others[] = {"env", "args"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s%d", dir, others[i], k);
        f = fopen(path, "r");
        cr_assert_not_null(f);
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        for (size_t j = 0; j < n; j++)
            text[j] = text[j] ? text[j] : ' ';
        text[n] = 0;
        cr_assert_null(strstr(text, out), "the secret is in the trial's %s", others[i]);
    }
}

Test(launch_local, every_trial_gets_a_fresh_secret_on_stdin_only)
{
    char dir[] = "/tmp/tunedeck-secret-XXXXXX", a[65], b[65];
    cr_assert_not_null(mkdtemp(dir));
    secret_of_run(dir, 1, a);
    secret_of_run(dir, 2, b);
    cr_assert_str_neq(a, b, "two trials, one secret");
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}

/* Regression: the trial's process and its keeper closed descriptors below 1024 only. With
 * `ulimit -n` above it (20,000 on the build machine, a million in many containers) a console
 * with many hosts and trials holds higher ones: a copy of another trial's lifeline write end
 * kept by this trial's keeper (which never execs, so close-on-exec does not help) means that
 * trial's keeper never reads end of file when tunedeck dies, and a descriptor opened without
 * close-on-exec (a library's) went into the trial. */
Test(launch_local, no_descriptor_above_1024_reaches_the_keeper_or_the_trial)
{
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < 1600) {
        if (rl.rlim_max < 1600)
            cr_skip_test("RLIMIT_NOFILE's hard limit %ld leaves no room for fd 1500",
                         (long)rl.rlim_max);
        rl.rlim_cur = 1600;
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(dup3(p[1], 1500, O_CLOEXEC), 1500); /* as another trial's lifeline */
    cr_assert_eq(dup2(p[1], 1501), 1501);            /* as a library's, no close-on-exec */
    close(p[0]);
    close(p[1]);
    /* the keeper is the command's parent; its descriptors and the command's own, on stderr */
    Observation *o = run("cat >/dev/null; echo keeper $(ls /proc/$PPID/fd) trial "
                         "$(ls /proc/$$/fd) >&2; exit 3",
                         10);
    close(1500);
    close(1501);
    cr_assert_eq(o->status, TRIAL_FAILED, "%s", o->reason);
    cr_assert(strstr(o->reason, "keeper "), "the descriptors were listed: %s", o->reason);
    cr_assert_null(strstr(o->reason, " 1500"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, " 1501"), "%s", o->reason);
    observation_free(o);
}

/* Regression: tunedeck ignores SIGXFSZ (a journal past the file size limit is a failed write
 * to report, tune_journal_new) and an ignored signal stays ignored across exec: a trial
 * writing a checkpoint past `ulimit -f` got EFBIG from a write it does not check instead of
 * dying of the signal, as it would started from a shell. */
Test(launch_local, the_trial_starts_with_the_signals_tunedeck_ignores_at_default)
{
    void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    Observation *o = run("cat >/dev/null; echo ign $(sed -n 's/^SigIgn:[[:space:]]*//p' "
                         "/proc/$$/status) >&2; exit 3",
                         10);
    signal(SIGXFSZ, old_xfsz);
    signal(SIGPIPE, old_pipe);
    cr_assert_eq(o->status, TRIAL_FAILED, "%s", o->reason);
    const char *ign = strstr(o->reason, "ign ");
    cr_assert_not_null(ign, "%s", o->reason);
    unsigned long long mask = strtoull(ign + 4, NULL, 16);
    cr_assert_eq(mask & (1ULL << (SIGXFSZ - 1)), 0, "SIGXFSZ ignored: %s", o->reason);
    cr_assert_eq(mask & (1ULL << (SIGPIPE - 1)), 0, "SIGPIPE ignored: %s", o->reason);
    observation_free(o);
}

/* The command is the keeper's child (lifeline.h): the keeper ends the way the command did, so
 * the launcher still reads the command's signal, not the keeper's own status. */
Test(launch_local, a_trial_killed_by_a_signal_is_reported_with_that_signal)
{
    Observation *o = run("cat >/dev/null; kill -USR1 $$", 10);
    cr_assert_eq(o->status, TRIAL_FAILED, "%s", o->reason);
    char want[64];
    snprintf(want, sizeof want, "killed by signal %d", SIGUSR1);
    cr_assert(strstr(o->reason, want), "%s", o->reason);
    observation_free(o);
}

static void on_signal(int sig)
{
    (void)sig; /* as tunedeck's own (cmd_tune.c): a flag, the process goes on */
}

/* Regression: the keeper and the command were forked with tunedeck's handlers and mask, and
 * kept them until exec: a stop's TERM in that window ran tunedeck's handler in the child,
 * which went on to exec the trial, and only the KILL after the grace ended it. Checked in the
 * child at its exec (execprobe.h), not by racing a signal into the window. */
Test(launch_local, the_trial_has_no_handler_or_blocked_signal_of_tunedecks_at_its_exec)
{
    char path[] = "/tmp/tunedeck-execprobe-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    struct sigaction sa = {.sa_handler = on_signal}, old_term, old_int;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGINT, &sa, &old_int);
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    sigset_t usr2, before;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, &before);
    setenv(EXECPROBE_ENV, path, 1);
    Observation *o = run("cat >/dev/null; echo '{\"event\":\"done\",\"time_s\":1}'", 10);
    unsetenv(EXECPROBE_ENV);
    sigprocmask(SIG_SETMASK, &before, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGINT, &old_int, NULL);
    signal(SIGPIPE, old_pipe);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    observation_free(o);
    unsigned long long blocked, ignored, caught;
    int read = execprobe_read(path, &blocked, &ignored, &caught);
    unlink(path);
    cr_assert_eq(read, 0, "the launcher's exec did not pass through the probe");
    cr_assert_eq(caught & (1ULL << (SIGTERM - 1)), 0, "SIGTERM runs tunedeck's handler");
    cr_assert_eq(caught & (1ULL << (SIGINT - 1)), 0, "SIGINT runs tunedeck's handler");
    cr_assert_eq(blocked, 0, "signals blocked at the trial's exec: %llx", blocked);
    cr_assert_eq(ignored & (1ULL << (SIGPIPE - 1)), 0, "SIGPIPE ignored");
}

/* A daemon of the trial's: a session of its own (so outside the trial's process group), TERM
 * ignored (so only the KILL ends it); its pid in DIR/daemon. */
#define DAEMON(dir)                                                                                \
    "setsid sh -c 'trap \"\" TERM; echo $$ >" dir "/d.tmp; mv " dir "/d.tmp " dir "/daemon; "      \
    "exec sleep 1000' </dev/null >/dev/null 2>&1 & "                                               \
    "until [ -s " dir "/daemon ]; do sleep 0.05; done; "

static pid_t daemon_pid(const char *dir, int wait_s)
{
    char path[600];
    snprintf(path, sizeof path, "%s/daemon", dir);
    for (int i = 0; i <= wait_s * 20; i++) {
        FILE *f = fopen(path, "r");
        long pid = 0;
        if (f) {
            if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0)
            return (pid_t)pid;
        usleep(50000);
    }
    return 0;
}

/* The daemon is gone (its keeper reaped it: not even a zombie); killed here when not, so the
 * test leaves nothing behind: only while it is still the daemon's sleep (ownkill_named), since a
 * pid read from its file may be another suite's process by then. */
static int daemon_gone(pid_t pid, int wait_s)
{
    for (int i = 0; i <= wait_s * 20; i++) {
        if (kill(pid, 0) < 0)
            return 1;
        usleep(50000);
    }
    ownkill_named(pid, "sleep 1000", SIGKILL);
    return 0;
}

static void pump_until(const LauncherKind *k, void *r, const char *dir, pid_t *daemon)
{
    for (int i = 0; i < 400 && !k->finished(r) && !(*daemon = daemon_pid(dir, 0)); i++) {
        struct pollfd fds[8];
        int64_t deadline = -1;
        size_t n = k->pollfds(r, fds, 8, &deadline);
        int rc = poll(fds, n, 50);
        k->step(r, fds, rc > 0 ? n : 0, clock_now_ms());
    }
}

static char logged[4096];

static void log_line(void *ud, const char *machine, StreamKind stream, const char *line)
{
    (void)ud;
    (void)machine;
    (void)stream;
    size_t len = strlen(logged);
    snprintf(logged + len, sizeof logged - len, "%s\n", line);
}

/* Regression: a daemon the trial started in a session of its own left the group a stop
 * reaches; it ran on after the trial was cancelled. The keeper is its subreaper now. */
Test(launch_local, a_cancel_stops_a_daemon_the_trial_started_with_setsid)
{
    char dir[] = "/tmp/tunedeck-daemon-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cat >/dev/null; " DAEMON("%s") "sleep 300", dir, dir, dir, dir);
    LaunchConfig cfg = {.command = cmd, .timeout_s = 60};
    const LauncherKind *k = launcher_find("local");
    Error err;
    void *r = k->start(&cfg, sched, &err);
    cr_assert_not_null(r, "%s", err.msg);
    pid_t d = 0;
    pump_until(k, r, dir, &d);
    cr_assert_gt(d, 0, "the daemon never started");
    k->cancel(r);
    cr_assert_eq(launcher_wait(k, r), 0, "poll: %s", strerror(errno));
    Observation *o = k->result(r);
    k->free(r);
    cr_assert_eq(o->status, TRIAL_CANCELLED, "%s", o->reason);
    observation_free(o);
    int gone = daemon_gone(d, 0);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert(gone, "the trial's setsid daemon %d runs on after its cancel", (int)d);
}

/* A trial that ends by itself and leaves a daemon: the trial is over and keeps its result;
 * the daemon is stopped, and the trial's log says so. */
Test(launch_local, a_daemon_left_by_a_trial_that_ended_is_stopped_and_said)
{
    char dir[] = "/tmp/tunedeck-daemon-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cat >/dev/null; " DAEMON("%s") "echo '{\"event\":\"done\",\"time_s\":1.5}'", dir, dir,
             dir, dir);
    logged[0] = 0;
    LaunchConfig cfg = {.command = cmd, .timeout_s = 30, .on_log = log_line};
    Error err;
    Observation *o = launcher_run_blocking(launcher_find("local"), &cfg, sched, &err);
    cr_assert_not_null(o, "%s", err.msg);
    pid_t d = daemon_pid(dir, 0);
    int gone = d > 0 && daemon_gone(d, 0);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 1.5, 1e-12);
    observation_free(o);
    cr_assert_gt(d, 0, "the daemon never started");
    cr_assert(gone, "the trial's setsid daemon %d runs on after the trial ended", (int)d);
    cr_assert(strstr(logged, LIFELINE_NOTE), "no note in the log: %s", logged);
    cr_assert(strstr(logged, "sleep (outside the trial's process group)"), "%s", logged);
}

/* Regression: with tunedeck SIGKILLed, the keeper stopped its group (the lifeline), but a
 * daemon in a session of its own ran on. Here tunedeck is a forked child of the test. */
Test(launch_local, a_daemon_of_the_trial_stops_when_tunedeck_is_killed)
{
    char dir[] = "/tmp/tunedeck-daemon-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    /* this tunedeck never writes the input: the trial does not read it */
    snprintf(cmd, sizeof cmd, DAEMON("%s") "sleep 300", dir, dir, dir, dir);
    pid_t tunedeck = fork();
    cr_assert_geq(tunedeck, 0);
    if (tunedeck == 0) {
        LaunchConfig cfg = {.command = cmd, .timeout_s = 60};
        Error err;
        if (!launcher_find("local")->start(&cfg, sched, &err))
            _exit(1);
        for (;;)
            pause();
    }
    pid_t d = daemon_pid(dir, 20);
    kill(tunedeck, SIGKILL);
    waitpid(tunedeck, NULL, 0);
    int gone = d > 0 && daemon_gone(d, 20); /* TERM ignored: the KILL after the grace */
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert_gt(d, 0, "the daemon never started");
    cr_assert(gone, "the trial's setsid daemon %d runs on after its tunedeck was killed", (int)d);
}

/* The keeper dumps no core of its own (its core limit is 0 from its start); the trial keeps
 * the limit it was started with. Regression: the keeper's limit was set only when it handed
 * on a signal, so a keeper killed or crashing before that could dump one. */
Test(launch_local, the_keeper_has_no_core_limit_and_the_trial_keeps_its_own)
{
    struct rlimit old, rl;
    cr_assert_eq(getrlimit(RLIMIT_CORE, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 8192)
        cr_skip_test("RLIMIT_CORE's hard limit %ld leaves no room for 8192", (long)old.rlim_max);
    rl = old;
    rl.rlim_cur = 8192;
    cr_assert_eq(setrlimit(RLIMIT_CORE, &rl), 0);
    Observation *o = run("cat >/dev/null; echo keeper $(sed -n 's/^Max core file size *//p' "
                         "/proc/$PPID/limits) trial $(sed -n 's/^Max core file size *//p' "
                         "/proc/$$/limits) >&2; exit 3",
                         10);
    setrlimit(RLIMIT_CORE, &old);
    cr_assert_eq(o->status, TRIAL_FAILED, "%s", o->reason);
    cr_assert(strstr(o->reason, "keeper 0 "), "the keeper's limit: %s", o->reason);
    cr_assert(strstr(o->reason, "trial 8192 "), "the trial's limit: %s", o->reason);
    observation_free(o);
}
