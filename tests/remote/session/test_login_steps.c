/* The steps of trials the login node's dropped connection cut are kept, cancelled once it
 * answers again, and said at the session's end when it never does (regression: nothing
 * cancelled them, and the next trial's step waited behind them on the allocation's GPUs:
 * tests/integration/slurm_login.sh checks the scancel on a real login node). A port nobody
 * listens on is a login node that does not answer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/login_hold.h"
#include "remote/session/login_steps.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
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

/* The login node "login" on a closed port, connected and kept as slurm_ctl_new does, until
 * its first attempt failed. */
static HostPool *down_login_pool(void)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2, .backoff_max_s = 30};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = sshd_fixture_free_port(), .connect_timeout_s = 2};
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

/* Regression: "the steps of 1 more trials". */
Test(login_steps, one_trial_past_the_room_is_said_in_the_singular, .timeout = TEST_TIMEOUT_S)
{
    HostPool *p = down_login_pool();
    LoginSteps ls = {0};
    for (int t = 0; t <= LOGIN_STEPS_MAX; t++)
        login_steps_add(&ls, 2 + t, "77.1");
    login_steps_end(&ls, p, "login", "77", keep_line, NULL);
    cr_assert_eq(n_lines, LOGIN_STEPS_MAX + 1, "%d lines", n_lines);
    cr_assert_str_eq(lines[LOGIN_STEPS_MAX],
                     "login node login: and the steps of 1 more trial its drops cut; the "
                     "allocation's release ends them");
    hostpool_free(p);
}

static Sshd sshd; /* stopped by the test's fini, whatever its assertions */

static void sshd_fini(void)
{
    sshd_fixture_stop(&sshd);
}

/* The login node "login" on d, connected. */
static HostPool *ready_login_pool(const Sshd *d)
{
    HostPool *p = sshd_fixture_pool(d, "login");
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
            login_hold_step(p, 20);
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
    sshd_fixture_start(&sshd, "MaxSessions 0");
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
    sshd_fixture_start(&sshd, "ForceCommand kill -TERM $$");
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

/* Regression: at the end each trial's steps had a wait of their own, LOGIN_STEPS_WAIT_MS
 * each, on a login node whose scancel never answers: the console's quit froze for up to
 * LOGIN_STEPS_MAX of them. The first unanswered one ends the scancels; the rest are said. */
Test(login_steps, the_end_waits_for_one_unanswered_scancel_not_one_a_trial,
     .timeout = TEST_TIMEOUT_S, .fini = sshd_fini)
{
    sshd_fixture_start(&sshd, "ForceCommand exec sleep 12");
    HostPool *p = ready_login_pool(&sshd);
    LoginSteps ls = {0};
    login_steps_add(&ls, 2, "77.1");
    login_steps_add(&ls, 3, "77.2");
    login_steps_add(&ls, 4, "77.3 77.4");
    login_steps_end(&ls, p, "login", "77", keep_line, NULL);
    cr_assert_eq(n_lines, 3, "%d lines", n_lines);
    cr_assert(strstr(lines[0], "login node login: scancel of step 77.1 left running by trial 2 "
                               "did not answer in ") == lines[0],
              "%s", lines[0]);
    cr_assert_str_eq(lines[1],
                     "login node login: step 77.2 left running by trial 3 when its connection "
                     "dropped could not be cancelled (the login node does not answer); the "
                     "release of the session's allocation, Slurm job 77, ends it");
    cr_assert(strstr(lines[2], ": steps 77.3 77.4 left running by trial 4 when its connection "
                               "dropped could not be cancelled ") != NULL,
              "%s", lines[2]);
    cr_assert_eq(ls.n, 0);
    hostpool_free(p);
}
