/* The session's salloc on a login node (a real sshd of the test's own, its Slurm commands
 * stand-ins first on the PATH its ForceCommand sets) stopped by the operator's signal: before
 * salloc said which job it queued, and just after it was granted one; or cut by the command's
 * timeout. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/readall.h"
#include "remote/slurm/slurm_alloc.h"
#include "remote/slurm/slurm_loginstop.h"
#include "tests/support/fixtures.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

static Sshd sshd;
static char dir[] = "/tmp/tunedeck-salloc-login.XXXXXX";
static Cluster *cl;
static SlurmCtl *ctl;
static pid_t signaller;
static volatile sig_atomic_t signalled;

static void on_usr1(int sig)
{
    (void)sig;
    signalled = 1;
}

static void setup(void)
{
    cl = fixture_cluster_json(
        "{\"name\": \"s\", \"machine_types\": {\"one\": {\"bandwidth_gbps\": 10, \"devices\": "
        "[{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"n1\", \"host\": \"n1\", \"type\": \"one\"}]}");
    cr_assert_not_null(mkdtemp(dir));
    signalled = 0;
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: it wakes the wait */
    sigaction(SIGUSR1, &sa, NULL);
}

/* The pid the stand-in salloc wrote, if that process is still the stand-in (its command line
 * names this test's folder), else 0. */
static pid_t standin_salloc(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/salloc.pid", dir);
    size_t len = 0;
    Error err;
    char *text = readall_file(path, 64, &len, &err);
    long p = text ? atol(text) : 0;
    free(text);
    if (p <= 1)
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", p);
    char *cmdline = readall_file(path, 1 << 16, &len, &err);
    int ours = 0;
    for (size_t at = 0; cmdline && at < len; at += strlen(cmdline + at) + 1)
        ours |= strstr(cmdline + at, dir) != NULL;
    free(cmdline);
    return ours ? (pid_t)p : 0;
}

static void teardown(void)
{
    pid_t left = standin_salloc();
    if (left > 0)
        kill(left, SIGKILL);
    if (signaller > 0) {
        kill(signaller, SIGKILL);
        waitpid(signaller, NULL, 0);
        signaller = 0;
    }
    signal(SIGUSR1, SIG_DFL);
    slurm_ctl_free(ctl);
    ctl = NULL;
    sshd_fixture_stop(&sshd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "%s failed\n", cmd);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    cluster_free(cl);
}

TestSuite(slurm_alloc_login, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static void stand_in(const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nD='%s'\n%s", dir, body);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static char *recorded(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Error err;
    char *text = readall_file(path, 1 << 16, NULL, &err);
    return text ? text : strdup("");
}

/* The SlurmCtl of a login node that is the test's sshd; `before` runs there ahead of every
 * command (a login shell's own words). */
static void login_ctl(const char *before, double timeout_s)
{
    char extra[512];
    snprintf(extra, sizeof extra,
             "ForceCommand %sPATH=%s:$PATH exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"", before, dir);
    sshd_fixture_start(&sshd, extra);
    SshSettings ssh;
    memset(&ssh, 0, sizeof ssh);
    ssh.port = sshd.port;
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    snprintf(ssh.user, sizeof ssh.user, "%s", pw->pw_name);
    snprintf(ssh.identity, sizeof ssh.identity, "%s/id", sshd.dir);
    snprintf(ssh.known_hosts, sizeof ssh.known_hosts, "%s/known_hosts", sshd.dir);
    SlurmCtlOptions o = {
        .login = "127.0.0.1", .ssh = &ssh, .ssh_config = TEST_SSH_CONFIG, .timeout_s = timeout_s};
    Error err;
    ctl = slurm_ctl_new(&o, &err);
    cr_assert_not_null(ctl, "%s", err.msg);
}

/* The operator's Ctrl-C, as a signal that wakes the wait, once the stand-in salloc has
 * written DIR/waiting (it runs there and says nothing more). */
static void signal_once_waiting(void)
{
    pid_t parent = getpid();
    signaller = fork();
    cr_assert_geq(signaller, 0);
    if (signaller == 0) {
        char path[256];
        snprintf(path, sizeof path, "%s/waiting", dir);
        while (access(path, F_OK) != 0)
            usleep(20000);
        kill(parent, SIGUSR1);
        _exit(0);
    }
}

static int stop_asked(void *ud)
{
    (void)ud;
    return signalled;
}

/* The scancel there: it records the job and, as slurmctld's revoke does to a salloc that
 * waits, ends the stand-in salloc (TERM: not the INT a stop sends). */
static const char SCANCEL[] = "echo \"$*\" >> \"$D/scancel-calls\"\n"
                              "p=$(cat \"$D/salloc.pid\" 2>/dev/null)\n"
                              "[ -n \"$p\" ] && grep -q \"$D\" /proc/$p/cmdline 2>/dev/null && "
                              "kill -TERM $p\nexit 0\n";

/* Regression: on the login node the stop waited for salloc's "Pending job allocation N" (the
 * scancel needs its number), or for the command's timeout when salloc said nothing (slurmctld
 * slow or down): here 60 s, then "no answer". Now the shell there says salloc's pid before
 * it becomes salloc, and the stop is `kill -INT` of it there: salloc ends at once, no job to
 * cancel, and the error says it was stopped. */
Test(slurm_alloc_login, a_stop_before_salloc_said_its_job_interrupts_it_there)
{
    stand_in("salloc", "echo $$ > \"$D/salloc.pid\"\n"
                       "trap 'kill $! 2>/dev/null; echo INT >> \"$D/interrupted\"; exit 1' INT\n"
                       "trap 'kill $! 2>/dev/null; echo TERM >> \"$D/interrupted\"; exit 1' TERM\n"
                       "sleep 60 > /dev/null 2>&1 &\n: > \"$D/waiting\"\nwait\nexit 1\n");
    stand_in("scancel", SCANCEL);
    login_ctl("", 60);
    signal_once_waiting();
    SlurmAlloc a;
    Error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_open(ctl, cl, NULL, NULL, 55, stop_asked, NULL, &a, &err), -1);
    cr_assert_eq(err.kind, ERROR_REMOTE, "%s", err.msg);
    cr_assert_str_eq(err.msg, "the session's allocation: stopped while salloc waited for it");
    char *interrupted = recorded("interrupted"), *scancels = recorded("scancel-calls");
    cr_assert_str_eq(interrupted, "INT\n", "salloc there was not interrupted");
    cr_assert_str_eq(scancels, "", "no job was said, none is cancelled");
    cr_assert_eq(standin_salloc(), 0, "the stand-in salloc still runs there");
    cr_assert_str_eq(a.job_id, "");
    free(interrupted);
    free(scancels);
}

/* A stop just after salloc was granted its allocation (it ends then, exit 0) cancels that
 * allocation there before the open fails: it was handed on as the session's before, which
 * then began a journal and released it only at the close. */
Test(slurm_alloc_login, a_stop_just_after_the_grant_cancels_the_allocation)
{
    stand_in("salloc", "echo $$ > \"$D/salloc.pid\"\n"
                       "echo 'salloc: Granted job allocation 77' >&2\n"
                       "trap 'kill $! 2>/dev/null; echo INT >> \"$D/interrupted\"; exit 0' INT\n"
                       "trap 'kill $! 2>/dev/null; echo TERM >> \"$D/interrupted\"; exit 0' TERM\n"
                       "sleep 60 > /dev/null 2>&1 &\n: > \"$D/waiting\"\nwait\nexit 0\n");
    stand_in("scancel", SCANCEL);
    login_ctl("", 60);
    signal_once_waiting();
    SlurmAlloc a;
    Error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_open(ctl, cl, NULL, NULL, 55, stop_asked, NULL, &a, &err), -1,
                 "the granted allocation was handed on: %s", a.job_id);
    cr_assert_eq(err.kind, ERROR_REMOTE, "%s", err.msg);
    cr_assert_str_eq(err.msg, "the session's allocation: stopped while salloc waited for it "
                              "(job 77, granted as it stopped, is cancelled)");
    char *scancels = recorded("scancel-calls");
    /* once or twice: there as salloc ends (a race with its exit), then by the open */
    cr_assert(!strcmp(scancels, "77\n") || !strcmp(scancels, "77\n77\n"), "%s", scancels);
    cr_assert_eq(standin_salloc(), 0, "the stand-in salloc still runs there");
    cr_assert_str_eq(a.job_id, "");
    free(scancels);
}

/* A line of the pid's word that is no pid (here the login shell's, ahead of the real one) is
 * not taken for salloc's: the run fails saying what was expected, and the job salloc was
 * granted is cancelled, not handed on. */
Test(slurm_alloc_login, a_malformed_pid_line_fails_the_run_and_cancels_its_job)
{
    stand_in("salloc", "echo $$ > \"$D/salloc.pid\"\n"
                       "echo 'salloc: Granted job allocation 77' >&2\nexit 0\n");
    stand_in("scancel", SCANCEL);
    login_ctl("echo tunedeck-pid soon >&2; ", 60);
    SlurmAlloc a;
    Error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_open(ctl, cl, NULL, NULL, 55, stop_asked, NULL, &a, &err), -1);
    cr_assert_str_eq(err.msg, "the session's allocation: salloc on 127.0.0.1: its standard "
                              "error said 'tunedeck-pid soon': expected 'tunedeck-pid PID' (the "
                              "pid of the shell that runs it, said on standard error first) (job "
                              "77, which salloc was granted, is cancelled)");
    char *scancels = recorded("scancel-calls");
    cr_assert_str_eq(scancels, "77\n");
    free(scancels);
}

/* A first command through the login node's session, so that a short command timeout is the
 * next command's own, not spent on the SSH handshake (cut itself, it leaves the handshake to
 * go on: either way the session is up or nearly so). */
static void connect_first(void)
{
    const char *run[] = {"true", NULL};
    Error ignored;
    slurm_ctl_run(ctl, run, NULL, &ignored);
}

/* Regression: a salloc cut by tunedeck's command timeout on the login node was only left
 * (its channel closed, which does not reach it): it ran on there until its own --immediate
 * ended. Now it is interrupted there by its pid, as a stop does, and waited for; its queued
 * job is cancelled, and the error says salloc was interrupted. The scancel stand-in here only
 * records, so the interrupt alone ends salloc. */
Test(slurm_alloc_login, a_salloc_cut_by_the_timeout_is_interrupted_there)
{
    stand_in("salloc", "echo $$ > \"$D/salloc.pid\"\n"
                       "trap 'kill $! 2>/dev/null; echo INT >> \"$D/interrupted\"; exit 1' INT\n"
                       "echo 'salloc: Pending job allocation 77' >&2\n"
                       "echo 'salloc: job 77 queued and waiting for resources' >&2\n"
                       "sleep 60 > /dev/null 2>&1 &\nwait\nexit 1\n");
    stand_in("scancel", "echo \"$*\" >> \"$D/scancel-calls\"\n");
    login_ctl("", 2);
    connect_first();
    SlurmAlloc a;
    Error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_open(ctl, cl, NULL, NULL, 1, stop_asked, NULL, &a, &err), -1);
    cr_assert_eq(standin_salloc(), 0, "the stand-in salloc still runs there");
    char *interrupted = recorded("interrupted"), *scancels = recorded("scancel-calls");
    cr_assert_str_eq(interrupted, "INT\n", "salloc there was not interrupted");
    cr_assert_str_eq(scancels, "77\n", "the job it queued is cancelled");
    free(interrupted);
    free(scancels);
    cr_assert_eq(err.kind, ERROR_REMOTE, "%s", err.msg);
    cr_assert_str_eq(err.msg, "the session's allocation: Slurm did not start it in time (salloc, "
                              "cut by the command's timeout, was interrupted there): job 77 "
                              "waited for the inventory's nodes, busy with other jobs (squeue -w "
                              "NODES shows them), and was cancelled; try again once they are "
                              "free, or wait longer with the inventory's \"slurm\": "
                              "{\"command_timeout_s\": S} (salloc waits a little less)");
}

/* The error of a salloc cut there with no job said yet names the kill that reached it. */
Test(slurm_alloc_login, a_cut_salloc_that_said_no_job_is_said_interrupted)
{
    stand_in("salloc", "echo $$ > \"$D/salloc.pid\"\n"
                       "trap 'kill $! 2>/dev/null; exit 1' INT\n"
                       "sleep 60 > /dev/null 2>&1 &\nwait\nexit 1\n");
    stand_in("scancel", "echo \"$*\" >> \"$D/scancel-calls\"\n");
    login_ctl("", 2);
    connect_first();
    SlurmAlloc a;
    Error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(slurm_alloc_open(ctl, cl, NULL, NULL, 1, stop_asked, NULL, &a, &err), -1);
    cr_assert_eq(standin_salloc(), 0, "the stand-in salloc still runs there");
    char *pid = recorded("salloc.pid"), want[200];
    snprintf(want, sizeof want,
             "the session's allocation: salloc on 127.0.0.1: no answer within 2 s, interrupted "
             "there (kill -INT %ld)",
             atol(pid));
    free(pid);
    cr_assert_str_eq(err.msg, want);
}

Test(slurm_alloc_login, the_pid_line_is_read_strictly)
{
    long pid = 0;
    cr_assert_eq(slurm_ctl_pid_line("tunedeck-pid 4242", &pid), 1);
    cr_assert_eq(pid, 4242);
    cr_assert_eq(slurm_ctl_pid_line("stty: 'standard input': Inappropriate ioctl", &pid), 0);
    cr_assert_eq(slurm_ctl_pid_line("salloc: Pending job allocation 77", &pid), 0);
    const char *bad[] = {
        "tunedeck-pid",     "tunedeck-pid ",           "tunedeck-pid x1",  "tunedeck-pid 12 ",
        "tunedeck-pid 12x", "tunedeck-pid  12",        "tunedeck-pid -3",  "tunedeck-pid 1",
        "tunedeck-pid 0",   "tunedeck-pid 2147483648", "tunedeck-pidd 12", "tunedeck-pid 12\r"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(slurm_ctl_pid_line(bad[i], &pid), -1, "'%s'", bad[i]);
    cr_assert_eq(pid, 4242, "a refused line leaves the pid alone");
}
