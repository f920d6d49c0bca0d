/* A channel the server refused to open is let go here alone: no EOF, no CLOSE (regression:
 * release_channel sent both for it, to the remote channel number it never had, 0, and
 * OpenSSH's sshd took that for another channel's (MaxSessions 1: the running one's) or, where
 * no channel 0 stood, dropped the whole connection, killing every channel on it). */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

static Sshd sshd; /* stopped by the test's fini, whatever its assertions */

static void sshd_fini(void)
{
    sshd_fixture_stop(&sshd);
}

static char last_out[256];

static void keep_out(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    (void)ud, (void)x, (void)cut;
    if (stream == STREAM_STDOUT)
        snprintf(last_out, sizeof last_out, "%s", line);
}

/* Steps the pool until `done` holds for x or the deadline passes. */
static void run_until(HostPool *p, RemoteExec *x, int want_line, int64_t deadline_ms)
{
    while (clock_now_ms() < deadline_ms) {
        if (want_line ? last_out[0] != '\0' : rexec_done(x))
            return;
        struct pollfd fds[4];
        int64_t wake_ms = -1;
        size_t n = hostpool_pollfds(p, fds, 4, &wake_ms);
        if (poll(fds, n, 20) < 0)
            n = 0;
        hostpool_step(p, fds, n, clock_now_ms());
    }
}

Test(rexec, a_refused_channel_sends_nothing_and_the_running_one_on_its_connection_ends_well,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    sshd_fixture_start(&sshd, "MaxSessions 1");
    HostPool *p = sshd_fixture_pool(&sshd, "h");
    ExecOptions o = {.on_line = keep_out};
    last_out[0] = '\0';
    RemoteExec *first = hostpool_exec(p, 0, "echo started; sleep 1; echo ended", NULL, 0, &o, NULL);
    cr_assert_not_null(first);
    run_until(p, first, 1, clock_now_ms() + 10000);
    cr_assert_str_eq(last_out, "started", "the first channel never ran");

    RemoteExec *second = hostpool_exec(p, 0, "echo second", NULL, 0, NULL, NULL);
    cr_assert_not_null(second);
    run_until(p, second, 0, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(second), EXEC_SSH_FAILED, "MaxSessions 1 let a second in");
    cr_assert(strstr(rexec_error(second), "cannot open a session channel"), "%s",
              rexec_error(second));
    rexec_free(second);

    run_until(p, first, 0, clock_now_ms() + 10000);
    cr_assert_eq(rexec_outcome(first), EXEC_EXITED, "%s", rexec_error(first));
    cr_assert_eq(rexec_exit_status(first), 0);
    cr_assert_str_eq(last_out, "ended");
    rexec_free(first);

    /* The connection stands: a new channel runs on it. sshd frees the first one's session
     * only after the round of packets that closed it, so an open in that same round may
     * still be refused: a refusal is asked again, the connection up all the while. */
    int attempts = 0;
    for (;;) {
        HostInfo hi;
        hostpool_info(p, 0, &hi);
        cr_assert_eq(hi.state, HOST_READY, "%s: %s", hostpool_state_name(hi.state), hi.last_error);
        cr_assert_lt(attempts++, 50, "no channel opened again");
        last_out[0] = '\0';
        RemoteExec *again = hostpool_exec(p, 0, "echo still", NULL, 0, &o, NULL);
        run_until(p, again, 0, clock_now_ms() + 10000);
        ExecOutcome out = rexec_outcome(again);
        if (out != EXEC_EXITED)
            cr_assert(strstr(rexec_error(again), "cannot open a session channel"), "%s",
                      rexec_error(again));
        rexec_free(again);
        if (out == EXEC_EXITED)
            break;
    }
    cr_assert_str_eq(last_out, "still");
    hostpool_free(p);
}
