/* A trial on Slurm through a login node waits while the login node is down (regression: each
 * trial started meanwhile failed "unreachable" at the pool's next attempt, so a tuning session
 * spent its whole budget within seconds of the login node's outage and ended before it was
 * back: tests/integration/slurm_login.sh). The hold steps the login node's pool itself, so
 * its planned reconnects go on, and says each failed attempt once. A port nobody listens on
 * makes the login node down in milliseconds. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/login_hold.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

enum { MAX_LINES = 16 };
static char lines[MAX_LINES][1200];
static int n_lines;

static void keep_line(void *ud, const char *line)
{
    (void)ud;
    if (n_lines < MAX_LINES)
        snprintf(lines[n_lines], sizeof lines[0], "%s", line);
    n_lines++;
}

/* The login node "login" on a closed port; its first reconnect 0.1 to 0.2 s after a failure,
 * each next one twice as far (with jitter). */
static HostPool *login_pool(const char *identity, int *port)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2, .backoff_max_s = 30};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = sshd_fixture_free_port(), .connect_timeout_s = 2};
    *port = c.port;
    strcpy(c.name, "login");
    strcpy(c.host, "127.0.0.1");
    strcpy(c.known_hosts, "/dev/null");
    if (identity)
        snprintf(c.identity, sizeof c.identity, "%s", identity);
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    n_lines = 0;
    return p;
}

static HostInfo info(HostPool *p)
{
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    return hi;
}

/* Connected and kept, as slurm_ctl_new does, until its first attempt failed. */
static void connect_until_down(HostPool *p)
{
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    cr_assert_eq(info(p).state, HOST_DOWN, "%s", hostpool_state_name(info(p).state));
}

static double retry_s(const char *line)
{
    const char *r = strstr(line, "down (retry in ");
    cr_assert_not_null(r, "%s", line);
    return atof(r + strlen("down (retry in "));
}

Test(login_hold, a_down_login_node_holds_the_trial_and_each_failed_attempt_is_said_once,
     .timeout = TEST_TIMEOUT_S)
{
    int port;
    HostPool *p = login_pool(NULL, &port);
    connect_until_down(p);
    LoginHold lh = {0};
    cr_assert_eq(login_hold_check(&lh, p, "login", keep_line, NULL), 1);
    cr_assert_eq(n_lines, 1);
    char want[200];
    snprintf(want, sizeof want,
             "ssh to login failed: connect to 127.0.0.1 port %d: Connection refused; new trials "
             "wait for it",
             port);
    cr_assert(strncmp(lines[0], "login node login: down (retry in ", 33) == 0, "%s", lines[0]);
    cr_assert(strstr(lines[0], want), "%s", lines[0]);
    cr_assert_eq(login_hold_check(&lh, p, "login", keep_line, NULL), 1);
    cr_assert_eq(n_lines, 1, "the same attempt said twice: %s", lines[1]);

    /* Nothing else steps the pool: the checks alone make its reconnects happen, each at the
     * back-off's time, each said once, the delays growing. */
    int64_t until = clock_now_ms() + 20000;
    while (n_lines < 4 && clock_now_ms() < until) {
        cr_assert_eq(login_hold_check(&lh, p, "login", keep_line, NULL), 1);
        usleep(20000);
    }
    cr_assert_eq(n_lines, 4, "%d attempts said", n_lines);
    cr_assert_eq(info(p).attempts, 4, "one attempt per line: %d", info(p).attempts);
    for (int i = 1; i < 4; i++)
        cr_assert_geq(retry_s(lines[i]), retry_s(lines[i - 1]), "%s\nthen %s", lines[i - 1],
                      lines[i]);
    cr_assert_geq(retry_s(lines[3]), 3 * retry_s(lines[0]), "%s\n%s", lines[0], lines[3]);
    hostpool_free(p);
}

Test(login_hold, a_login_node_refused_for_good_holds_nothing, .timeout = TEST_TIMEOUT_S)
{
    /* an identity others may read: refused before any connection, and never retried (the
     * trial's own launch then fails with the host's words) */
    char key[] = "/tmp/tunedeck-login-hold-XXXXXX";
    int fd = mkstemp(key);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "not a key\n", 10), 10);
    close(fd);
    cr_assert_eq(chmod(key, 0644), 0);
    int port;
    HostPool *p = login_pool(key, &port);
    connect_until_down(p);
    cr_assert(strstr(info(p).last_error, "chmod 600"), "%s", info(p).last_error);
    LoginHold lh = {0};
    cr_assert_eq(login_hold_check(&lh, p, "login", keep_line, NULL), 0);
    cr_assert_eq(n_lines, 0, "%s", lines[0]);
    hostpool_free(p);
    unlink(key);
}

Test(login_hold, no_login_node_or_one_never_tried_holds_nothing, .timeout = TEST_TIMEOUT_S)
{
    int port;
    HostPool *p = login_pool(NULL, &port);
    LoginHold lh = {0};
    cr_assert_eq(login_hold_check(&lh, NULL, NULL, keep_line, NULL), 0, "commands run here");
    cr_assert_eq(login_hold_check(&lh, p, "login", keep_line, NULL), 0, "idle");
    cr_assert_eq(login_hold_check(&lh, p, "other", keep_line, NULL), 0, "no such host");
    cr_assert_eq(info(p).state, HOST_IDLE, "a check connects nothing");
    cr_assert_eq(n_lines, 0);
    hostpool_free(p);
}
