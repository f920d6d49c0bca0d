/* At a session's end the release of its Slurm allocation waits a bounded time for a login node
 * that is down (regression: it failed at once, the allocation left holding every node of the
 * inventory until a resume released it, though the login node answered seconds later:
 * tests/integration/slurm_login.sh has the node coming back). A port nobody listens on makes
 * the login node down in milliseconds; the wait steps its pool, says so once, and gives up at
 * its bound or at the operator's interrupt, naming the job and the command that releases it. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/login_hold.h"
#include "remote/session/release_wait.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

enum { MAX_LINES = 8 };
static char lines[MAX_LINES][1400];
static int n_lines, asked;

static void keep_line(void *ud, const char *line)
{
    (void)ud;
    if (n_lines < MAX_LINES)
        snprintf(lines[n_lines], sizeof lines[0], "%s", line);
    n_lines++;
}

/* The controller through the login node 127.0.0.1 on a closed port, once its first attempt
 * (slurm_ctl_new's) failed: down, a reconnect planned. */
static SlurmCtl *down_login(int *port)
{
    static SshSettings ssh;
    memset(&ssh, 0, sizeof ssh);
    ssh.port = *port = sshd_fixture_free_port();
    ssh.connect_timeout_s = 2;
    snprintf(ssh.known_hosts, sizeof ssh.known_hosts, "/dev/null");
    SlurmCtlOptions o = {
        .login = "127.0.0.1", .ssh = &ssh, .ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error err;
    SlurmCtl *c = slurm_ctl_new(&o, &err);
    cr_assert_not_null(c, "%s", err.msg);
    const char *host;
    HostPool *pool = slurm_ctl_login_pool(c, &host);
    HostInfo hi;
    int64_t until = clock_now_ms() + 10000;
    for (hostpool_info(pool, 0, &hi); hi.state != HOST_DOWN && clock_now_ms() < until;
         hostpool_info(pool, 0, &hi))
        login_hold_step(pool, 50);
    cr_assert(login_hold_waits(pool, host, &hi), "%s", hostpool_state_name(hi.state));
    n_lines = asked = 0;
    return c;
}

static int interrupt_at_once(void *ud)
{
    (void)ud;
    return ++asked > 0;
}

static int never(void *ud)
{
    (void)ud;
    asked++;
    return 0;
}

Test(release_wait, a_login_node_down_past_the_bound_leaves_the_allocation_said_once,
     .timeout = TEST_TIMEOUT_S)
{
    int port;
    SlurmCtl *c = down_login(&port);
    SlurmAlloc a = {.job_id = "57", .name = "tunedeck-tune-1234", .owned = 1};
    ReleaseWait w = {.wait_s = 1, .interrupted = never, .report = keep_line};
    Error err;
    cr_assert_eq(release_wait_close(c, &a, &w, &err), -1);
    cr_assert_eq(a.job_id[0], 0, "forgotten either way");
    cr_assert_eq(n_lines, 1, "%s", lines[1]);
    char refused[120];
    snprintf(refused, sizeof refused, "connect to 127.0.0.1 port %d: Connection refused", port);
    cr_assert(strncmp(lines[0],
                      "login node 127.0.0.1: down; waiting up to 1 s to release allocation 57 "
                      "(ssh to 127.0.0.1 failed: ",
                      96) == 0,
              "%s", lines[0]);
    cr_assert(strstr(lines[0], refused), "%s", lines[0]);
    cr_assert(strstr(lines[0], "; Ctrl-C gives up the wait"), "%s", lines[0]);
    cr_assert_gt(asked, 0, "the interrupt was never asked");
    cr_assert_eq(err.kind, ERROR_REMOTE);
    cr_assert(strstr(err.msg, "the session's allocation, Slurm job 57 (tunedeck-tune-1234), was "
                              "not released: 127.0.0.1 did not answer within 1 s (ssh to "
                              "127.0.0.1 failed: "),
              "%s", err.msg);
    cr_assert(strstr(err.msg, refused), "%s", err.msg);
    cr_assert(strstr(err.msg, "release it with `scancel 57` on 127.0.0.1"), "%s", err.msg);
    slurm_ctl_free(c);
}

/* Ctrl-C during the wait: it ends then, however long the bound, and the allocation is said
 * as left (the journal keeps it for the resume). */
Test(release_wait, an_interrupt_ends_the_wait_and_leaves_the_allocation, .timeout = TEST_TIMEOUT_S)
{
    int port;
    SlurmCtl *c = down_login(&port);
    SlurmAlloc a = {.job_id = "58", .name = "tunedeck-tune-1234", .owned = 1};
    ReleaseWait w = {.wait_s = 3600, .interrupted = interrupt_at_once, .report = keep_line};
    Error err;
    cr_assert_eq(release_wait_close(c, &a, &w, &err), -1);
    cr_assert_eq(n_lines, 1);
    cr_assert(strstr(lines[0], "waiting up to 3600 s to release allocation 58"), "%s", lines[0]);
    cr_assert(strstr(err.msg, "was not released: the wait for 127.0.0.1 was interrupted (ssh to "
                              "127.0.0.1 failed: "),
              "%s", err.msg);
    cr_assert(strstr(err.msg, "`scancel 58` on 127.0.0.1"), "%s", err.msg);
    slurm_ctl_free(c);
}

/* Without a bound (or an allocation not ours) nothing waits: one scancel, as before. */
Test(release_wait, no_bound_no_wait, .timeout = TEST_TIMEOUT_S)
{
    int port;
    SlurmCtl *c = down_login(&port);
    SlurmAlloc a = {.job_id = "59", .name = "tunedeck-tune-1234", .owned = 1};
    ReleaseWait w = {.wait_s = 0, .interrupted = never, .report = keep_line};
    Error err;
    cr_assert_eq(release_wait_close(c, &a, &w, &err), -1);
    cr_assert_eq(n_lines, 0, "%s", lines[0]);
    cr_assert(strstr(err.msg, "was not released: scancel on 127.0.0.1: ssh failed: "), "%s",
              err.msg);
    SlurmAlloc theirs = {.job_id = "60"}; /* SLURM_JOB_ID's: used, never released */
    w.wait_s = 60;
    cr_assert_eq(release_wait_close(c, &theirs, &w, &err), 0);
    cr_assert_eq(n_lines, 0, "%s", lines[0]);
    slurm_ctl_free(c);
}

static char sdir[] = "/tmp/tunedeck-release-wait.XXXXXX";

/* Commands run here: no login node to wait for, the scancel runs once and releases it. */
Test(release_wait, commands_run_here_release_at_once, .timeout = TEST_TIMEOUT_S)
{
    const char *const table[][2] = {{"scancel", "echo \"$*\" >> \"$D/calls\"\n"}};
    standins_install(sdir, table, 1);
    SlurmCtlOptions o = {.timeout_s = 10};
    Error err;
    SlurmCtl *c = slurm_ctl_new(&o, &err);
    cr_assert_not_null(c, "%s", err.msg);
    SlurmAlloc a = {.job_id = "61", .name = "tunedeck-tune-1234", .owned = 1};
    ReleaseWait w = {.wait_s = 30, .interrupted = never, .report = keep_line};
    n_lines = asked = 0;
    cr_assert_eq(release_wait_close(c, &a, &w, &err), 0, "%s", err.msg);
    char *calls = standins_recorded(sdir, "calls");
    cr_assert_str_eq(calls, "61\n");
    cr_assert_eq(n_lines, 0, "%s", lines[0]);
    cr_assert_eq(a.job_id[0], 0);
    free(calls);
    slurm_ctl_free(c);
    standins_remove(sdir);
}

static Sshd sshd; /* stopped by the test's fini, whatever its assertions */

static void sshd_fini(void)
{
    sshd_fixture_stop(&sshd);
    if (!strstr(sdir, "XXXXXX"))
        standins_remove(sdir);
}

/* Regression: once the pool's back-off had grown to its cap (30 s), its next reconnect came
 * after the wait's bound, and a login node that came back meanwhile was never asked: the
 * allocation was left (a 30 s wait saw one or two attempts, none near its end). Here the
 * login node (a real sshd, its scancel a stand-in) refused eight attempts, the next planned
 * 15 to 30 s later, and is back before a 3 s wait: one more attempt, just before the bound,
 * finds it. */
Test(release_wait, a_login_node_back_before_the_bound_is_tried_once_more_before_it,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    const char *const table[][2] = {{"scancel", "echo \"$*\" >> \"$D/calls\"\n"}};
    standins_install(sdir, table, 1);
    char extra[512];
    snprintf(extra, sizeof extra,
             "ForceCommand PATH=%s:$PATH exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"", sdir);
    sshd_fixture_start(&sshd, extra);
    sshd_fixture_pause(&sshd);
    static SshSettings ssh;
    memset(&ssh, 0, sizeof ssh);
    ssh.port = sshd.port;
    ssh.connect_timeout_s = 5;
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    snprintf(ssh.user, sizeof ssh.user, "%s", pw->pw_name);
    snprintf(ssh.identity, sizeof ssh.identity, "%s/id", sshd.dir);
    snprintf(ssh.known_hosts, sizeof ssh.known_hosts, "%s/known_hosts", sshd.dir);
    SlurmCtlOptions o = {
        .login = "127.0.0.1", .ssh = &ssh, .ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error err;
    SlurmCtl *c = slurm_ctl_new(&o, &err);
    cr_assert_not_null(c, "%s", err.msg);
    const char *host;
    HostPool *pool = slurm_ctl_login_pool(c, &host);
    HostInfo hi;
    for (int k = 0; k < 8; k++) { /* each refused at once; the operator's ask keeps the count */
        if (k)
            hostpool_connect(pool, 0, 1);
        hostpool_run_until_settled(pool, clock_now_ms() + 5000);
        hostpool_info(pool, 0, &hi);
        cr_assert_eq(hi.state, HOST_DOWN, "%s", hostpool_state_name(hi.state));
    }
    cr_assert_gt(hi.retry_at_ms - clock_now_ms(), 10000, "the back-off did not grow: %lld ms",
                 (long long)(hi.retry_at_ms - clock_now_ms()));
    sshd_fixture_resume(&sshd);
    n_lines = asked = 0;
    SlurmAlloc a = {.job_id = "62", .name = "tunedeck-tune-1234", .owned = 1};
    ReleaseWait w = {.wait_s = 3, .interrupted = never, .report = keep_line};
    cr_assert_eq(release_wait_close(c, &a, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(n_lines, 2, "%s", lines[0]);
    cr_assert(strstr(lines[0], "login node 127.0.0.1: down; waiting up to 3 s to release "
                               "allocation 62 ") == lines[0],
              "%s", lines[0]);
    cr_assert_str_eq(lines[1], "login node 127.0.0.1 answers again: allocation 62 released");
    char *calls = standins_recorded(sdir, "calls");
    cr_assert_str_eq(calls, "62\n");
    free(calls);
    slurm_ctl_free(c);
}
