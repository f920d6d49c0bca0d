/* The SSH launchers' stop of a trial whose parts never reached their hosts. (A part that did
 * start is killed and waited for: tests/integration/remote.sh and multihost.sh, on sshd.) */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/launch/launcher.h"
#include "remote/ssh/hostpool.h"
#include "tests/support/fixtures.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/timeout.h"

/* A listening socket that never accepts: TCP connects, SSH never answers, so the host stays
 * in its handshake and a command for it stays queued. */
static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Regression: a cancelled trial whose parts were still waiting for their hosts to connect
 * waited KILL_WAIT_MS (5 s) for process groups that could never exist, so quitting a console
 * whose hosts never connected took 5 s. The stop is over in the step after the cancel,
 * whatever the clock says: no deadline is involved. */
Test(launch_ssh, a_cancel_ends_at_once_when_no_part_reached_its_host, .timeout = TEST_TIMEOUT_S)
{
    Cluster *c = fixture_cluster_json(
        "{\"name\": \"q\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"cpu\", \"kind\": \"cpu\"}]}},"
        "\"machines\": [{\"name\": \"m[0-1]\", \"host\": \"127.0.0.1\", \"type\": \"t\"}]}");
    Schedule *s = fixture_schedule(c, 10);
    s->worker[0] = s->ps[0] = s->worker[1] = 1;
    s->inputs[0] = 5;
    s->inputs[1] = 5;
    int port;
    int fd = listener(&port);
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *pool = hostpool_new(&po, &e);
    cr_assert_not_null(pool, "%s", e.msg);
    for (int i = 0; i < 2; i++) {
        HostConf hc = {.port = port, .connect_timeout_s = 600};
        snprintf(hc.name, sizeof hc.name, "m%d", i);
        strcpy(hc.host, "127.0.0.1");
        strcpy(hc.known_hosts, "/dev/null");
        cr_assert_eq(hostpool_add(pool, &hc, &e), i, "%s", e.msg);
    }
    const LauncherKind *k = launcher_find("per-host");
    LaunchConfig cfg = {.command = "sleep 600", .remote = pool, .timeout_s = 600};
    void *run = k->start(&cfg, s, &e);
    cr_assert_not_null(run, "%s", e.msg);
    struct pollfd fds[16];
    int64_t deadline = -1;
    size_t n = k->pollfds(run, fds, 16, &deadline);
    for (size_t i = 0; i < n; i++)
        fds[i].revents = 0;
    k->step(run, fds, n, clock_now_ms()); /* the hosts are connecting; nothing sent */
    cr_assert(!k->finished(run));
    k->cancel(run);
    deadline = -1;
    n = k->pollfds(run, fds, 16, &deadline);
    for (size_t i = 0; i < n; i++)
        fds[i].revents = 0;
    k->step(run, fds, n, clock_now_ms());
    cr_assert(k->finished(run), "the stop waited for parts that never reached their hosts");
    Observation *o = k->result(run);
    cr_assert_eq(o->status, TRIAL_CANCELLED);
    observation_free(o);
    k->free(run);
    hostpool_free(pool);
    close(fd);
    schedule_free(s);
    cluster_free(c);
}
