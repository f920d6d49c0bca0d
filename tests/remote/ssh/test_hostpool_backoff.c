/* The pool's back-off between connection attempts holds for work sent to a down host: an exec
 * waits for the host's next planned attempt instead of starting one (regression: each exec
 * started one at once, so a tuning loop whose trials failed fast on a down host kept its row
 * at resolving/connecting, never "down (retry in N s)"). The operator's explicit connect still
 * tries at once. A port nobody listens on makes a host down in milliseconds. */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
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
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

/* One host, "u", on a closed port; the back-off between base_s and max_s; identity: the
 * inventory's ssh.identity, NULL for none. */
static HostPool *pool_of_one_with(double base_s, double max_s, const char *identity)
{
    HostPoolOptions o = {
        .ssh_config = TEST_SSH_CONFIG, .backoff_base_s = base_s, .backoff_max_s = max_s};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = sshd_fixture_free_port(), .connect_timeout_s = 2};
    strcpy(c.name, "u");
    strcpy(c.host, "127.0.0.1");
    strcpy(c.known_hosts, "/dev/null");
    if (identity)
        snprintf(c.identity, sizeof c.identity, "%s", identity);
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    return p;
}

static HostPool *pool_of_one(double base_s, double max_s)
{
    return pool_of_one_with(base_s, max_s, NULL);
}

/* Steps the pool until the exec ended or the time is up. */
static void run_until_done(HostPool *p, const RemoteExec *x, int64_t until_ms)
{
    struct pollfd fds[2];
    while (!rexec_done(x) && clock_now_ms() < until_ms) {
        int64_t deadline = until_ms;
        size_t n = hostpool_pollfds(p, fds, 2, &deadline);
        int64_t wait = deadline - clock_now_ms();
        poll(fds, n, wait < 0 ? 0 : wait > 50 ? 50 : (int)wait);
        hostpool_step(p, fds, n, clock_now_ms());
    }
}

static RemoteExec *exec_true(HostPool *p)
{
    Error e;
    RemoteExec *x = hostpool_exec(p, 0, "true", NULL, 0, NULL, &e);
    cr_assert_not_null(x, "%s", e.msg);
    return x;
}

static HostInfo info(HostPool *p)
{
    HostInfo hi;
    hostpool_info(p, 0, &hi);
    return hi;
}

Test(hostpool_backoff, execs_on_a_down_host_wait_for_its_next_planned_attempt,
     .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = pool_of_one(60, 60); /* the next attempt 30 to 60 s away */
    RemoteExec *first = exec_true(p);  /* idle: connects at once */
    run_until_done(p, first, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(first), EXEC_SSH_FAILED, "%s", rexec_error(first));
    HostInfo hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN);
    cr_assert_eq(hi.retry_at_ms, 0, "not kept, nothing waits: no attempt is planned");
    rexec_free(first);

    int64_t asked_ms = clock_now_ms();
    RemoteExec *second = exec_true(p);
    hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN, "the exec started an attempt inside the back-off (%s)",
                 hostpool_state_name(hi.state));
    cr_assert_gt(hi.retry_at_ms, asked_ms, "the exec waits for a planned attempt");
    int64_t planned_ms = hi.retry_at_ms;
    RemoteExec *third = exec_true(p); /* the next trial, at once */
    hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN, "%s", hostpool_state_name(hi.state));
    cr_assert_eq(hi.retry_at_ms, planned_ms, "a second exec moves nothing");

    /* Served by the pool for a while, well inside the back-off: still down, the two execs
     * waiting, the reason the first attempt's. The planned attempt is at least 30 s after the
     * first one failed (equal jitter: never under half of min(max, base) = 60 s), so 300 ms of
     * stepping cannot reach it; the check below says so rather than trust the clock. */
    run_until_done(p, second, clock_now_ms() + 300);
    cr_assert_lt(clock_now_ms(), planned_ms, "the machine stalled past the planned attempt");
    cr_assert(!rexec_done(second) && !rexec_done(third), "%s", rexec_error(second));
    hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN, "%s", hostpool_state_name(hi.state));
    cr_assert_eq(hi.retry_at_ms, planned_ms);
    cr_assert(strstr(hi.last_error, "Connection refused"), "%s", hi.last_error);

    /* Nothing waits any more: no attempt is planned. */
    rexec_free(second);
    rexec_free(third);
    cr_assert_eq(info(p).retry_at_ms, 0);
    hostpool_free(p);
}

Test(hostpool_backoff, an_exec_leaves_a_kept_down_host_to_its_planned_retry,
     .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = pool_of_one(60, 60);
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    HostInfo hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN);
    int64_t planned_ms = hi.retry_at_ms;
    cr_assert_gt(planned_ms, clock_now_ms());
    RemoteExec *x = exec_true(p);
    hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN, "the exec started an attempt inside the back-off (%s)",
                 hostpool_state_name(hi.state));
    cr_assert_eq(hi.retry_at_ms, planned_ms);
    rexec_free(x);
    cr_assert_eq(info(p).retry_at_ms, planned_ms, "kept: retried whatever the execs");
    hostpool_free(p);
}

Test(hostpool_backoff, a_waiting_exec_fails_with_the_hosts_error_when_its_attempt_fails,
     .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = pool_of_one(0.05, 0.05);
    RemoteExec *first = exec_true(p);
    run_until_done(p, first, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(first), EXEC_SSH_FAILED);
    rexec_free(first);
    cr_assert_eq(info(p).attempts, 1);
    RemoteExec *x = exec_true(p);
    run_until_done(p, x, clock_now_ms() + 10000);
    cr_assert(rexec_done(x), "the planned attempt was made");
    cr_assert_eq(info(p).attempts, 2, "the exec ended by the planned attempt, not otherwise");
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED);
    cr_assert(strstr(rexec_error(x), "ssh to u failed") &&
                  strstr(rexec_error(x), "Connection refused"),
              "%s", rexec_error(x));
    rexec_free(x);
    hostpool_free(p);
}

/* The operator's reconnect (the console's, a tool's start) is an ask to try now. */
Test(hostpool_backoff, an_explicit_connect_tries_a_down_host_at_once, .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = pool_of_one(20, 1000); /* first retry 10 to 20 s away, the second 20 to 40 */
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    int64_t first_planned_ms = info(p).retry_at_ms;
    int64_t asked_ms = clock_now_ms();
    cr_assert_gt(first_planned_ms, asked_ms);
    hostpool_connect(p, 0, 1);
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    HostInfo hi = info(p);
    cr_assert_eq(hi.state, HOST_DOWN);
    cr_assert_geq(hi.retry_at_ms, asked_ms + 20000,
                  "a second attempt failed and doubled the delay");
    cr_assert_gt(hi.retry_at_ms, first_planned_ms);
    hostpool_free(p);
}

/* A stop is urgent (hostpool_exec_now: a trial's killer, a scancel, jobctl's signal, the orphan
 * stop): it tries a down host at once, whatever the back-off, and ends with that one attempt.
 * Regression: the killer and the scancel were plain execs, which wait 30 to 60 s here. */
Test(hostpool_backoff, an_urgent_exec_tries_a_down_host_at_once, .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = pool_of_one(60, 60);
    RemoteExec *first = exec_true(p);
    run_until_done(p, first, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(first), EXEC_SSH_FAILED, "%s", rexec_error(first));
    rexec_free(first);
    cr_assert_eq(info(p).attempts, 1);

    Error e;
    RemoteExec *x = hostpool_exec_now(p, 0, "true", NULL, 0, NULL, &e);
    cr_assert_not_null(x, "%s", e.msg);
    cr_assert_eq(info(p).attempts, 2, "no attempt started at once (%s)",
                 hostpool_state_name(info(p).state));
    run_until_done(p, x, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED, "%s", rexec_error(x));
    cr_assert(strstr(rexec_error(x), "Connection refused"), "%s", rexec_error(x));
    cr_assert_eq(info(p).attempts, 2, "one attempt, not a second at the back-off's");
    rexec_free(x);
    hostpool_free(p);
}

/* A pool of one host whose identity (written to key, a mkstemp template) others may read,
 * after its first exec: tried at once while idle, refused before any connection. */
static HostPool *pool_refused_once(char *key)
{
    int fd = mkstemp(key);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "not a key\n", 10), 10);
    close(fd);
    cr_assert_eq(chmod(key, 0644), 0);
    HostPool *p = pool_of_one_with(60, 60, key);
    RemoteExec *first = exec_true(p);
    cr_assert(rexec_done(first), "%s", hostpool_state_name(info(p).state));
    rexec_free(first);
    return p;
}

/* An attempt refused before any connection (here: an identity others may read) leaves the host
 * down at once: the urgent exec fails then, with the host's error, instead of waiting for the
 * back-off's next attempt up to its caller's time limit. Regression: the orphan stop connected
 * first, then queued its exec, which waited for a second attempt. */
Test(hostpool_backoff, an_urgent_exec_fails_at_once_when_its_attempt_is_refused_at_once,
     .timeout = TEST_TIMEOUT_S)
{
    char key[] = "/tmp/tunedeck-backoff-key.XXXXXX";
    HostPool *p = pool_refused_once(key);

    Error e;
    RemoteExec *x = hostpool_exec_now(p, 0, "true", NULL, 0, NULL, &e);
    cr_assert_not_null(x, "%s", e.msg);
    HostInfo hi = info(p);
    cr_assert_eq(hi.attempts, 2, "tried at once");
    cr_assert(rexec_done(x), "the stop waits for the back-off's next attempt (%s)",
              hostpool_state_name(hi.state));
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED);
    cr_assert(strstr(rexec_error(x), "ssh to u failed") && strstr(rexec_error(x), "chmod 600"),
              "%s", rexec_error(x));
    cr_assert_eq(info(p).retry_at_ms, 0, "nothing waits: no attempt is planned");
    rexec_free(x);
    hostpool_free(p);
    unlink(key);
}

/* A host refused for its configuration, key or login is never retried by the pool, so a
 * trial's plain exec on it tries it at once (one attempt) and fails with the host's words,
 * where an unreachable host's exec waits for the back-off (tests above). Regression: the trial
 * waited out the back-off (up to 30 s) only to fail with the same refusal. */
Test(hostpool_backoff, a_plain_exec_on_a_refused_host_tries_it_at_once_and_fails_with_its_error,
     .timeout = TEST_TIMEOUT_S)
{
    char key[] = "/tmp/tunedeck-backoff-key.XXXXXX";
    HostPool *p = pool_refused_once(key);
    cr_assert_eq(info(p).attempts, 1);

    RemoteExec *x = exec_true(p);
    HostInfo hi = info(p);
    cr_assert_eq(hi.attempts, 2, "the exec waits for the back-off instead of trying (%s)",
                 hostpool_state_name(hi.state));
    cr_assert(rexec_done(x), "the exec waits (%s)", hostpool_state_name(hi.state));
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED);
    cr_assert(strstr(rexec_error(x), "ssh to u failed") && strstr(rexec_error(x), "chmod 600"),
              "%s", rexec_error(x));
    rexec_free(x);

    /* Fixed meanwhile: the next exec's attempt reads the file again and gets past it. */
    cr_assert_eq(chmod(key, 0600), 0);
    x = exec_true(p);
    run_until_done(p, x, clock_now_ms() + 10000);
    cr_assert_eq(info(p).attempts, 3);
    cr_assert_eq(rexec_outcome(x), EXEC_SSH_FAILED);
    cr_assert(!strstr(rexec_error(x), "chmod 600"), "%s", rexec_error(x));
    rexec_free(x);
    hostpool_free(p);
    unlink(key);
}
