/* A sweep's line for a host that did not answer: nothing was checked there, so it names only
 * the groups that may still run, and how to stop them by hand. Regression: the end-of-session
 * sweep said "not stopped: ssh … failed" for every group ever seen on a down host, those of
 * trials that ended cleanly included, as if each still ran. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "remote/session/sweep_unchecked.h"

static OrphanList groups(void)
{
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 1, "h2", 4200, NULL), 0); /* ended cleanly */
    cr_assert_eq(orphans_add(&l, 3, "h2", 4242, NULL), 0);
    cr_assert_eq(orphans_add(&l, 3, "h1", 4243, NULL), 0); /* another host */
    cr_assert_eq(orphans_add(&l, 3, "h2", 4244, NULL), 0);
    cr_assert_eq(orphans_add(&l, 5, "h2", 4250, NULL), 0);
    l.items[0].seen_end = 1;
    return l;
}

Test(sweep_unchecked, names_only_the_groups_that_may_still_run_and_the_command_to_stop_them)
{
    OrphanList l = groups();
    HostInfo h = {.name = "h2", .host = "h2.example.org", .user = "", .port = 22};
    char *line = sweep_unchecked_line(&l, "h2", &h, "leftover check",
                                      "ssh to h2 failed: connection refused");
    cr_assert_str_eq(line, "leftover check on h2: not checked (h2 did not answer: ssh to h2 "
                           "failed: connection refused); trial 3's process groups 4242, 4244, "
                           "trial 5's 4250 may still run: stop them by hand with: ssh "
                           "h2.example.org kill -KILL -- -4242 -4244 -4250");
    free(line);
    line =
        sweep_unchecked_line(&l, "h1", NULL, "interrupted trials' check", "no answer within 15 s");
    cr_assert_str_eq(line, "interrupted trials' check on h1: not checked (h1 did not answer: no "
                           "answer within 15 s); trial 3's process group 4243 may still run: "
                           "stop it by hand with: ssh h1 kill -KILL -- -4243");
    free(line);
    orphans_clear(&l);
}

Test(sweep_unchecked, a_host_whose_groups_all_ended_is_said_unchecked_with_nothing_to_stop)
{
    OrphanList l = groups();
    for (size_t i = 0; i < l.n; i++)
        l.items[i].seen_end = 1;
    char *line = sweep_unchecked_line(&l, "h2", NULL, "leftover check", "no answer within 15 s");
    cr_assert_str_eq(line, "leftover check on h2: not checked (h2 did not answer: no answer "
                           "within 15 s); every process group there was seen to end with its "
                           "trial");
    cr_assert_null(strstr(line, "not stopped"));
    free(line);
    orphans_clear(&l);
}

/* The command is pasted into a shell: the pool's login and port go in, and a word with a byte
 * the shell reads (an IPv6 address's brackets are a glob, a user name may end in '$') is
 * single-quoted as shquote quotes it. */
Test(sweep_unchecked, the_command_logs_in_as_the_pool_does_quoted_for_the_shell)
{
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 2, "gpu 7", 900, NULL), 0);
    HostInfo h = {.name = "gpu 7", .host = "[fe80::1]", .user = "svc$", .port = 2222};
    char *line = sweep_unchecked_line(&l, "gpu 7", &h, "leftover check", "no answer within 15 s");
    const char *cmd = strstr(line, "stop it by hand with: ");
    cr_assert_not_null(cmd, "%s", line);
    cr_assert_str_eq(cmd + strlen("stop it by hand with: "),
                     "ssh -l 'svc$' -p 2222 '[fe80::1]' kill -KILL -- -900");
    free(line);
    h = (HostInfo){.name = "gpu 7", .host = "", .user = NULL, .port = 0};
    line = sweep_unchecked_line(&l, "gpu 7", &h, "leftover check", "no answer within 15 s");
    cmd = strstr(line, "stop it by hand with: ");
    cr_assert_str_eq(cmd + strlen("stop it by hand with: "), "ssh 'gpu 7' kill -KILL -- -900");
    free(line);
    orphans_clear(&l);
}
