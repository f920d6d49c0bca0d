/* An exec closed or freed while its channel's open is still unanswered leaves no session open
 * on the server (regression: rexec.c freed the channel at once, libssh then ignored the
 * server's confirmation as an unknown channel's, and the empty session stayed open there until
 * the connection ended: with sshd's MaxSessions, enough of them refused every later open on
 * that host, "administratively prohibited"). */
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

static void run_until_done(HostPool *p, RemoteExec *x, int64_t deadline_ms)
{
    while (clock_now_ms() < deadline_ms && !rexec_done(x)) {
        struct pollfd fds[4];
        int64_t wake_ms = -1;
        size_t n = hostpool_pollfds(p, fds, 4, &wake_ms);
        if (poll(fds, n, 20) < 0)
            n = 0;
        hostpool_step(p, fds, n, clock_now_ms());
    }
}

/* Execs let go of (closed, or freed at once) after one step of the pool: their channel's open
 * is sent, its answer not read yet. An exec whose open was answered within that very step went
 * on to send its command and is not counted. */
static int let_go_while_opening(HostPool *p, int want)
{
    int let_go = 0;
    for (int i = 0; i < 100 && let_go < want; i++) {
        RemoteExec *x = hostpool_exec(p, 0, "true", NULL, 0, NULL, NULL);
        cr_assert_not_null(x);
        hostpool_step(p, NULL, 0, clock_now_ms()); /* the pump: open sent, no poll for its answer */
        cr_assert_not(rexec_done(x), "%s", rexec_error(x));
        if (!rexec_sent(x))
            let_go++;
        if (i % 2)
            rexec_close(x);
        rexec_free(x);
    }
    return let_go;
}

Test(chanlinger, execs_let_go_while_their_channel_opens_leave_no_session_open_on_the_server,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    sshd_fixture_start(&sshd, "MaxSessions 2");
    HostPool *p = sshd_fixture_pool(&sshd, "h");
    cr_assert_geq(let_go_while_opening(p, 6), 6, "every open was answered within its step");

    /* sshd frees a closed session only after the round of packets that closed it, so an open
     * in that same round may still be refused: a refusal is asked again (the lingering opens
     * are answered and closed meanwhile). Before the fix every open was refused for good. */
    int attempts = 0;
    for (;;) {
        HostInfo hi;
        hostpool_info(p, 0, &hi);
        cr_assert_eq(hi.state, HOST_READY, "%s: %s", hostpool_state_name(hi.state), hi.last_error);
        last_out[0] = '\0';
        RemoteExec *x =
            hostpool_exec(p, 0, "echo still", NULL, 0, &(ExecOptions){.on_line = keep_out}, NULL);
        run_until_done(p, x, clock_now_ms() + 10000);
        ExecOutcome out = rexec_outcome(x);
        char why[600];
        snprintf(why, sizeof why, "%s", rexec_error(x));
        rexec_free(x);
        if (out == EXEC_EXITED)
            break;
        cr_assert(strstr(why, "cannot open a session channel"), "%s", why);
        cr_assert_lt(++attempts, 20, "every open refused after the let-go ones: %s", why);
    }
    cr_assert_str_eq(last_out, "still");
    hostpool_free(p);
}

/* Freed with the session when the pool goes first: nothing leaks (the sanitizer run). */
Test(chanlinger, a_channel_still_opening_when_the_pool_is_freed_goes_with_its_session,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    sshd_fixture_start(&sshd, "");
    HostPool *p = sshd_fixture_pool(&sshd, "h");
    cr_assert_geq(let_go_while_opening(p, 2), 2, "every open was answered within its step");
    hostpool_free(p);
}
