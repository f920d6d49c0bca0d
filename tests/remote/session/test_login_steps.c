/* The steps of trials the login node's dropped connection cut are kept, cancelled once it
 * answers again, and said at the session's end when it never does (regression: nothing
 * cancelled them, and the next trial's step waited behind them on the allocation's GPUs:
 * tests/integration/slurm_login.sh checks the scancel on a real login node). A port nobody
 * listens on is a login node that does not answer. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/login_steps.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/timeout.h"

enum { MAX_LINES = 24 };
static char lines[MAX_LINES][1200];
static int n_lines;

static void keep_line(void *ud, const char *line)
{
    (void)ud;
    if (n_lines < MAX_LINES)
        snprintf(lines[n_lines], sizeof lines[0], "%s", line);
    n_lines++;
}

static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

/* The login node "login" on a closed port, connected and kept as slurm_ctl_new does, until
 * its first attempt failed. */
static HostPool *down_login_pool(void)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2, .backoff_max_s = 30};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = closed_port(), .connect_timeout_s = 2};
    strcpy(c.name, "login");
    strcpy(c.host, "127.0.0.1");
    strcpy(c.known_hosts, "/dev/null");
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(hi.state, HOST_DOWN, "%s", hostpool_state_name(hi.state));
    n_lines = 0;
    return p;
}

Test(login_steps, each_trials_steps_are_kept_in_order_and_those_past_the_room_counted)
{
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "");
    login_steps_add(&ls, 3, NULL);
    cr_assert_eq(ls.n, 0, "a trial that reported no step leaves nothing to cancel");
    for (int t = 1; t <= LOGIN_STEPS_MAX + 2; t++) {
        char steps[32];
        snprintf(steps, sizeof steps, "77.%d", t);
        login_steps_add(&ls, t, steps);
    }
    cr_assert_eq(ls.n, LOGIN_STEPS_MAX);
    cr_assert_eq(ls.dropped, 2);
    cr_assert_eq(ls.left[0].trial, 1);
    cr_assert_str_eq(ls.left[0].steps, "77.1");
    cr_assert_str_eq(ls.left[LOGIN_STEPS_MAX - 1].steps, "77.16");
    login_steps_clear(&ls);
    cr_assert_eq(ls.n, 0);
    cr_assert_eq(ls.dropped, 0);
}

Test(login_steps, a_login_node_down_leaves_the_hold_to_login_hold_and_keeps_the_steps,
     .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = down_login_pool();
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "77.1");
    cr_assert_eq(login_steps_check(&ls, p, "login", keep_line, NULL), 0);
    cr_assert_eq(login_steps_check(&ls, NULL, NULL, keep_line, NULL), 0, "commands run here");
    cr_assert_eq(login_steps_check(&ls, p, "other", keep_line, NULL), 0, "no such host");
    cr_assert_eq(ls.n, 1, "kept for when it answers");
    cr_assert_null(ls.scancel, "nothing sent to a host that is down");
    cr_assert_eq(n_lines, 0, "%s", lines[0]);
    login_steps_clear(&ls);
    hostpool_free(p);
}

Test(login_steps, steps_the_login_node_never_cancelled_are_said_at_the_end_with_the_allocation,
     .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = down_login_pool();
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "77.1");
    login_steps_add(&ls, 5, "77.4 77.5");
    for (int t = 0; t < LOGIN_STEPS_MAX; t++)
        login_steps_add(&ls, 6 + t, "77.9");
    /* one more attempt, at once whatever the back-off: refused, so each is said */
    login_steps_end(&ls, p, "login", "77", keep_line, NULL);
    cr_assert_eq(n_lines, LOGIN_STEPS_MAX + 1, "%d lines", n_lines);
    cr_assert_str_eq(lines[0],
                     "login node login: step 77.1 left running by trial 2 when its connection "
                     "dropped could not be cancelled (the login node does not answer); the "
                     "release of the session's allocation, Slurm job 77, ends it");
    cr_assert(strstr(lines[1], ": steps 77.4 77.5 left running by trial 5 "), "%s", lines[1]);
    cr_assert(strstr(lines[1], "Slurm job 77, ends them"), "%s", lines[1]);
    cr_assert(strstr(lines[LOGIN_STEPS_MAX], "the steps of 2 more trials"), "%s",
              lines[LOGIN_STEPS_MAX]);
    cr_assert_eq(ls.n, 0, "nothing is kept after the end");
    cr_assert_null(ls.scancel);
    n_lines = 0;
    login_steps_end(&ls, p, "login", "77", keep_line, NULL);
    cr_assert_eq(n_lines, 0, "said once");
    hostpool_free(p);
}

/* A real sshd of the test's own on 127.0.0.1, `extra` in its configuration: the login node
 * answering, its channels refused or its commands replaced. Skipped where sshd is absent. */
typedef struct {
    char dir[64];
    pid_t pid;
    int port;
} Sshd;

static void sh_ok(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void sshd_start(Sshd *d, const char *extra)
{
    if (access("/usr/sbin/sshd", X_OK) != 0 || system("command -v ssh-keygen > /dev/null") != 0)
        cr_skip_test("no sshd here");
    snprintf(d->dir, sizeof d->dir, "/tmp/tunedeck-login-steps.XXXXXX");
    cr_assert_not_null(mkdtemp(d->dir));
    d->port = closed_port();
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && ssh-keygen -q -t ed25519 -N '' -f host && ssh-keygen -q -t ed25519 -N '' "
             "-f id && cp id.pub authorized_keys && chmod 600 authorized_keys && "
             "printf '[127.0.0.1]:%d %%s\\n' \"$(cut -d' ' -f1,2 host.pub)\" > known_hosts && "
             "chmod 644 known_hosts && printf 'ListenAddress 127.0.0.1:%d\\nHostKey %s/host\\n"
             "AuthorizedKeysFile %s/authorized_keys\\nPidFile %s/pid\\nStrictModes no\\n"
             "UsePAM no\\nPermitRootLogin yes\\nLogLevel ERROR\\n%s\\n' > cfg",
             d->dir, d->port, d->port, d->dir, d->dir, d->dir, extra);
    sh_ok(cmd);
    snprintf(cmd, sizeof cmd, "%s/cfg", d->dir);
    d->pid = fork();
    cr_assert_geq(d->pid, 0);
    if (d->pid == 0) { /* its words (the readiness probe's, the refusals) to its log */
        char log[96];
        snprintf(log, sizeof log, "%s/sshd.log", d->dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 2);
        execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", cmd, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) { /* until it listens */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)d->port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int up = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (up)
            return;
        cr_assert_eq(waitpid(d->pid, NULL, WNOHANG), 0, "sshd did not start");
        usleep(50000);
    }
    cr_assert_fail("sshd does not listen on %d", d->port);
}

static Sshd sshd; /* stopped by the test's fini, whatever its assertions */

static void sshd_fini(void)
{
    if (sshd.pid > 0) {
        kill(sshd.pid, SIGTERM);
        waitpid(sshd.pid, NULL, 0);
    }
    if (sshd.dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", sshd.dir);
        if (system(cmd) != 0)
            fprintf(stderr, "%s failed\n", cmd);
    }
    memset(&sshd, 0, sizeof sshd);
}

/* The login node "login" on d, connected. */
static HostPool *ready_login_pool(const Sshd *d)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2, .backoff_max_s = 30};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = d->port, .connect_timeout_s = 5};
    strcpy(c.name, "login");
    strcpy(c.host, "127.0.0.1");
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    snprintf(c.user, sizeof c.user, "%s", pw->pw_name);
    snprintf(c.identity, sizeof c.identity, "%s/id", d->dir);
    snprintf(c.known_hosts, sizeof c.known_hosts, "%s/known_hosts", d->dir);
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(hi.state, HOST_READY, "%s: %s", hostpool_state_name(hi.state), hi.last_error);
    n_lines = 0;
    return p;
}

/* Checks before a trial until one lets it go with nothing left, at most `max`; while the
 * login node is down (login_hold's turn) its pool is stepped to its next attempt, as
 * login_hold's wait does. */
static int checks_until_go(LoginSteps *ls, HostPool *p, int max)
{
    for (int k = 0; k < max; k++) {
        if (login_steps_check(ls, p, "login", keep_line, NULL) == 0) {
            if (!ls->n)
                return k + 1;
            struct pollfd fds[4];
            int64_t deadline_ms = -1;
            size_t n = hostpool_pollfds(p, fds, 4, &deadline_ms);
            if (poll(fds, n, 20) < 0)
                n = 0;
            hostpool_step(p, fds, n, clock_now_ms());
        } else
            usleep(20000);
    }
    return 0;
}

/* Regression: a scancel whose channel the login node refused (sshd's MaxSessions 0: logins,
 * no sessions) was taken for a drop, on a connection that stood or that libssh's answer to
 * the refusal ended: the steps were kept, nothing said, and the scancel sent again at the
 * next check, or at each answer after, for ever: the next trial never started. */
Test(login_steps, a_scancel_channel_refused_by_a_login_node_that_answers_is_said_and_not_retried,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    sshd_start(&sshd, "MaxSessions 0");
    HostPool *p = ready_login_pool(&sshd);
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "77.1");
    cr_assert_gt(checks_until_go(&ls, p, 2000), 0, "the next trial never went");
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(ls.n, 0, "%zu left, %d lines (%s), the login node %s: %s", ls.n, n_lines,
                 n_lines ? lines[0] : "", hostpool_state_name(hi.state), hi.last_error);
    cr_assert_eq(n_lines, 1, "%d lines", n_lines);
    cr_assert(strstr(lines[0], "login node login: scancel of step 77.1 left running by trial 2 "
                               "failed (") == lines[0],
              "%s", lines[0]);
    cr_assert(strstr(lines[0], "; the release of the session's allocation ends it"), "%s",
              lines[0]);
    login_steps_clear(&ls);
    hostpool_free(p);
}

/* Regression: a scancel killed by a signal was said "failed (killed by killed by SIGTERM)". */
Test(login_steps, a_scancel_killed_by_a_signal_is_said_once_so, .timeout = TEST_TIMEOUT_S,
     .fini = sshd_fini)
{
    sshd_start(&sshd, "ForceCommand kill -TERM $$");
    HostPool *p = ready_login_pool(&sshd);
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "77.1");
    cr_assert_gt(checks_until_go(&ls, p, 500), 0);
    cr_assert_eq(n_lines, 1, "%d lines", n_lines);
    cr_assert(strstr(lines[0], "login node login: scancel of step 77.1 left running by trial 2 "
                               "failed (killed by SIGTERM); the release of the session's "
                               "allocation ends it") == lines[0],
              "%s", lines[0]);
    login_steps_clear(&ls);
    hostpool_free(p);
}
