#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/timeout.h"

/* A listening socket that never accepts: TCP connects, SSH never answers (a blackhole). */
static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fd, 64), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

static HostConf conf(const char *name, const char *host, int port, double timeout_s)
{
    HostConf c = {.port = port, .connect_timeout_s = timeout_s};
    strcpy(c.name, name);
    strcpy(c.host, host);
    strcpy(c.known_hosts, "/dev/null");
    return c;
}

Test(hostpool, silent_hosts_are_down_at_their_deadline_all_in_parallel)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    /* 20 > the pool's first capacity, hosts added after others started connecting:
     * regression for a realloc that moved Host structs libssh keeps pointers into. */
    enum { N = 20 };
    int fds[N];
    for (int i = 0; i < N; i++) {
        int port;
        fds[i] = listener(&port);
        char name[16];
        snprintf(name, sizeof name, "b%d", i);
        HostConf c = conf(name, "127.0.0.1", port, 0.3);
        cr_assert_eq(hostpool_add(p, &c, &e), i);
        hostpool_connect(p, (size_t)i, 0);
    }
    /* Every attempt is in flight at once: none settled before its deadline. */
    cr_assert(!hostpool_settled(p));
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    for (int i = 0; i < N; i++) {
        HostInfo hi;
        hostpool_info(p, (size_t)i, &hi);
        cr_assert_eq(hi.state, HOST_DOWN);
        cr_assert(strstr(hi.last_error, "no answer within 0.3 s (SSH handshake)"), "%s",
                  hi.last_error);
        close(fds[i]);
    }
    hostpool_free(p);
}

Test(hostpool, refused_connection_says_so_and_a_kept_host_plans_a_retry)
{
    int port;
    int fd = listener(&port);
    close(fd); /* nobody listens there now */
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 2, .backoff_max_s = 60};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("r", "127.0.0.1", port, 1);
    hostpool_add(p, &c, &e);
    int64_t t0 = clock_now_ms();
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(hi.state, HOST_DOWN);
    cr_assert(strstr(hi.last_error, "Connection refused"), "%s", hi.last_error);
    /* First retry: between half the base and the base (equal jitter). */
    cr_assert(hi.retry_at_ms >= t0 + 1000 && hi.retry_at_ms <= clock_now_ms() + 2000,
              "retry in %lld ms", (long long)(hi.retry_at_ms - t0));
    hostpool_free(p);
}

Test(hostpool, garbage_instead_of_an_ssh_banner_fails_the_handshake)
{
    int port;
    int lfd = listener(&port);
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("g", "127.0.0.1", port, 2);
    hostpool_add(p, &c, &e);
    hostpool_connect(p, 0, 0);
    struct pollfd fds[2];
    int sent = 0;
    int64_t until = clock_now_ms() + 5000;
    while (!hostpool_settled(p) && clock_now_ms() < until) {
        int64_t dl = until;
        size_t n = hostpool_pollfds(p, fds, 2, &dl);
        fds[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        poll(fds, n + 1, 50);
        if (!sent && fds[n].revents) {
            int s = accept(lfd, NULL, NULL);
            const char *junk = "HTTP/1.1 400 Bad Request\r\n\r\n";
            cr_assert(write(s, junk, strlen(junk)) > 0);
            close(s);
            sent = 1;
        }
        hostpool_step(p, fds, n, clock_now_ms());
    }
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(hi.state, HOST_DOWN);
    cr_assert(strstr(hi.last_error, "ssh handshake with 127.0.0.1"), "%s", hi.last_error);
    close(lfd);
    hostpool_free(p);
}

Test(hostpool, unresolvable_name_is_an_error_not_a_hang)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("n", "no-such-host.invalid", 22, 3);
    hostpool_add(p, &c, &e);
    hostpool_connect(p, 0, 0);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_eq(hi.state, HOST_DOWN);
    cr_assert(strstr(hi.last_error, "resolv"), "%s", hi.last_error);
    hostpool_free(p);
}

Test(hostpool, host_with_shell_metacharacters_is_refused_at_add)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("x", "a;b", 22, 1);
    cr_assert_eq(hostpool_add(p, &c, &e), -1);
    cr_assert(strstr(e.msg, "';'"), "%s", e.msg);
    hostpool_free(p);
}

Test(hostpool, exec_on_an_unreachable_host_fails_as_ssh_not_as_the_command)
{
    int port;
    int fd = listener(&port);
    close(fd);
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("u", "127.0.0.1", port, 1);
    hostpool_add(p, &c, &e);
    RemoteExec *x = hostpool_exec(p, 0, "true", NULL, 0, NULL, &e);
    cr_assert_not_null(x);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    cr_assert(rexec_done(x));
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED);
    cr_assert_eq(rexec_exit_status(x), -1);
    cr_assert(strstr(rexec_error(x), "ssh to u failed"), "%s", rexec_error(x));
    rexec_free(x);
    hostpool_free(p);
}

/* The console's accept prompt names where the key will be trusted: an ssh config's
 * HostName and Port, not the inventory's host (regression: it showed only the inventory's
 * host, which an alias may point elsewhere). */
Test(hostpool, info_names_the_address_and_port_the_config_points_to)
{
    int port;
    int fd = listener(&port);
    close(fd); /* refused at once: only the configuration matters here */
    char cfg[] = "/tmp/td-hp-cfg.XXXXXX";
    int cfd = mkstemp(cfg);
    cr_assert(cfd >= 0);
    dprintf(cfd, "Host alias-h\n  HostName 127.0.0.1\n  Port %d\n", port);
    close(cfd);
    HostPoolOptions o = {.ssh_config = cfg};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    HostConf c = conf("a", "alias-h", 0, 1);
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    cr_assert_str_eq(hi.target, "alias-h");
    cr_assert_eq(hi.port, 22, "before connecting: the inventory's host and ssh's default port");
    hostpool_connect(p, 0, 0);
    hostpool_run_until_settled(p, clock_now_ms() + 5000);
    hostpool_info(p, 0, &hi);
    cr_assert_str_eq(hi.host, "alias-h");
    cr_assert_str_eq(hi.target, "127.0.0.1");
    cr_assert_eq(hi.port, port);
    hostpool_free(p);
    unlink(cfg);
}

/* libssh skips a config file it cannot open without a word: a mistyped
 * TUNEDECK_SSH_CONFIG would leave every alias unresolved ("cannot resolve") far from the
 * cause. The pool refuses it, naming the file. */
Test(hostpool, an_ssh_config_that_cannot_be_read_is_refused_by_name)
{
    const char *bad[] = {"/nonexistent/tunedeck-ssh-config", "/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        HostPoolOptions o = {.ssh_config = bad[i]};
        Error e = {0};
        HostPool *p = hostpool_new(&o, &e);
        cr_assert_null(p, "%s was accepted", bad[i]);
        cr_assert(strstr(e.msg, bad[i]) && strstr(e.msg, "TUNEDECK_SSH_CONFIG"), "%s", e.msg);
        cr_assert_eq(e.kind, ERROR_INPUT);
    }
    HostPoolOptions o = {.ssh_config = "/dev/null"};
    Error e = {0};
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "an empty configuration is a valid one: %s", e.msg);
    hostpool_free(p);
}

/* libssh expands TUNEDECK_SSH_CONFIG (~, %d, ...) before it reads it: the pool checks the
 * expanded file, and refuses a name that would be another file per host. */
Test(hostpool, an_ssh_config_name_is_checked_where_libssh_reads_it)
{
    HostPoolOptions o = {.ssh_config = "%d/tunedeck-no-such-config"};
    Error e = {0};
    cr_assert_null(hostpool_new(&o, &e));
    cr_assert(strstr(e.msg, "/.ssh/tunedeck-no-such-config (TUNEDECK_SSH_CONFIG "
                            "%d/tunedeck-no-such-config, expanded as libssh expands it): "
                            "cannot read it"),
              "%s", e.msg);
    o.ssh_config = "/etc/ssh/%h.conf";
    cr_assert_null(hostpool_new(&o, &e));
    cr_assert(strstr(e.msg, "TUNEDECK_SSH_CONFIG /etc/ssh/%h.conf: %h is refused"), "%s", e.msg);
    cr_assert_eq(e.kind, ERROR_INPUT);
}

/* Regression: a FIFO named as the configuration blocked the open forever (no writer ever
 * comes); it is refused by name, without waiting. The timeout only ends a hang. */
Test(hostpool, an_ssh_config_that_is_a_fifo_is_refused_without_blocking, .timeout = TEST_TIMEOUT_S)
{
    char dir[] = "/tmp/tunedeck-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/config", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    HostPoolOptions o = {.ssh_config = path};
    Error e = {0};
    HostPool *p = hostpool_new(&o, &e);
    unlink(path);
    rmdir(dir);
    cr_assert_null(p, "a FIFO was accepted");
    cr_assert(strstr(e.msg, path) && strstr(e.msg, "FIFO") && strstr(e.msg, "TUNEDECK_SSH_CONFIG"),
              "%s", e.msg);
    cr_assert_eq(e.kind, ERROR_INPUT);
}
