/* A test's own sshd and a pool connected to it (sshd_fixture.h). */
#include "tests/support/sshd_fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "tests/support/ssh_hermetic.h"

int sshd_fixture_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static void sh_ok(const char *cmd)
{
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

void sshd_fixture_start(Sshd *d, const char *extra)
{
    if (access("/usr/sbin/sshd", X_OK) != 0 || system("command -v ssh-keygen > /dev/null") != 0)
        cr_skip_test("no sshd here");
    /* sshd's privilege-separation folder: a fresh machine's /run (a tmpfs) lacks it until
     * sshd's own service starts once, and `make unit` alone must not depend on a suite that
     * made it (tests/sshd-harness.sh does the same) */
    if (mkdir("/run/sshd", 0755) != 0 && errno != EEXIST)
        cr_assert_fail("sshd needs /run/sshd, and it cannot be made: %s", strerror(errno));
    snprintf(d->dir, sizeof d->dir, "/tmp/tunedeck-sshd-fixture.XXXXXX");
    cr_assert_not_null(mkdtemp(d->dir));
    d->port = sshd_fixture_free_port();
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
    sshd_fixture_resume(d);
}

void sshd_fixture_pause(Sshd *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, NULL, 0);
    }
    d->pid = 0;
}

void sshd_fixture_resume(Sshd *d)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "%s/cfg", d->dir);
    d->pid = fork();
    cr_assert_geq(d->pid, 0);
    if (d->pid == 0) { /* its words (the readiness probe's, the refusals) to its log */
        char log[96];
        snprintf(log, sizeof log, "%s/sshd.log", d->dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
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

void sshd_fixture_stop(Sshd *d)
{
    sshd_fixture_pause(d);
    if (d->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "%s failed\n", cmd);
    }
    memset(d, 0, sizeof *d);
}

HostPool *sshd_fixture_pool(const Sshd *d, const char *name)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2, .backoff_max_s = 30};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = d->port, .connect_timeout_s = 5};
    snprintf(c.name, sizeof c.name, "%s", name);
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
    return p;
}
