/* A failed per-host trial's reason (remote/launch/launch_ssh_reason.c), whole, with the words
 * of the sshd harness's PyTorch trials (tests/integration/pytorch.sh: ranks 0, 1 on h1, 2, 3
 * on h2, 4 on h3; gloo on CPU). Which part leads is rankcause's (test_rankcause.c); here, the
 * text the launcher gives: the leader's head, the others in the order they came. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/launch/launch_ssh_reason.h"

#define WORLD 5
#define N(a) (sizeof(a) / sizeof *(a))

static const char *const HOST[] = {"h1", "h2", "h3"};

static const char *const PEER_2 =
    "rank 2 on h2: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
    "Connection closed by peer [127.0.0.11]:40147";
static const char *const PEER_0 =
    "rank 0 on h1: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
    "Connection closed by peer [127.0.0.12]:52903";

/* What the ranks said in their error events, in order (NULL-ended). */
static RankCause *heard(const char *const *said)
{
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
    cr_assert_not_null(c);
    while (*said)
        rankcause_event(c, *said++);
    return c;
}

/* h3's rank 4 crashed; h2's rank 2 lost it, its notice came first and h2 ended first; h1's
 * rank 0 came last. The cause leads, then h2, then h1: the order they came, not the
 * inventory's (h1, h2, h3), and the leader's index comes back for its stderr line. */
Test(launch_ssh_reason, the_cause_leads_and_the_others_follow_in_the_order_they_came)
{
    const char *crash = "rank 4 on h3: RuntimeError: crashing on purpose";
    const char *events[] = {PEER_2, crash, PEER_0, NULL};
    RankCause *c = heard(events);
    const PartFailure parts[] = {
        {.host = "h1",
         .notice = "rank 0 (h1 cpu) exited with status 1",
         .exit_status = 1,
         .came = 3},
        {.host = "h2",
         .notice = "rank 2 (h2 cpu) exited with status 1",
         .exit_status = 1,
         .came = 1},
        {.host = "h3",
         .notice = "rank 4 (h3 cpu) exited with status 1",
         .exit_status = 1,
         .came = 2},
    };
    char out[256];
    size_t lead = launch_ssh_reason_write(c, parts, N(parts), 1, crash, out, sizeof out);
    cr_assert_eq(lead, 2);
    cr_assert_str_eq(out, "the command failed on h3: rank 4 (h3 cpu) exited with status 1; "
                          "on h2: rank 2 (h2 cpu) exited with status 1; "
                          "on h1: rank 0 (h1 cpu) exited with status 1");
    rankcause_free(c);
}

/* Rank 1 was SIGKILLed without a word and its peers only lost it: h2 ended first, but h1's
 * notice leads; a part that did not fail (h3, no `came`) is not named. */
Test(launch_ssh_reason,
     a_rank_killed_without_a_word_leads_and_a_part_that_did_not_fail_is_not_named)
{
    const char *events[] = {PEER_2, PEER_0, NULL};
    RankCause *c = heard(events);
    const PartFailure parts[] = {
        {.host = "h1",
         .notice = "rank 1 (h1 gpu0) exited with status 137 (SIGKILL)",
         .signal = "killed by signal KILL",
         .came = 2},
        {.host = "h2",
         .notice = "rank 2 (h2 cpu) exited with status 1",
         .exit_status = 1,
         .came = 1},
        {.host = "h3", .notice = "", .exit_status = 0, .came = 0},
    };
    char out[256];
    cr_assert_eq(launch_ssh_reason_write(c, parts, N(parts), 1, PEER_2, out, sizeof out), 0);
    cr_assert_str_eq(out, "the command failed on h1: rank 1 (h1 gpu0) exited with status 137 "
                          "(SIGKILL); on h2: rank 2 (h2 cpu) exited with status 1");
    rankcause_free(c);
}

/* Without a notice a part is said by its command's end: the signal's words before its exit
 * status, the status where it exited; nothing known of the ranks: the first to end leads. */
Test(launch_ssh_reason, a_part_without_a_notice_is_said_by_its_signal_else_its_exit_status)
{
    const PartFailure parts[] = {
        {.host = "h1",
         .notice = "",
         .signal = "killed by signal TERM",
         .exit_status = -1,
         .came = 2},
        {.host = "h2", .notice = "", .exit_status = 3, .came = 1},
    };
    char out[256];
    cr_assert_eq(launch_ssh_reason_write(NULL, parts, N(parts), 1, NULL, out, sizeof out), 1);
    cr_assert_str_eq(out, "the command failed on h2: exit status 3; on h1: killed by signal TERM");
    launch_ssh_reason_head(&parts[0], out, sizeof out);
    cr_assert_str_eq(out, "the command failed on h1: killed by signal TERM");
}

/* The words are cut at the room given, and no other part is begun with 8 bytes or fewer
 * left; a part that ended first out of range names nothing. */
Test(launch_ssh_reason, the_words_stay_within_their_room)
{
    const PartFailure parts[] = {
        {.host = "h1", .notice = "", .exit_status = 1, .came = 1},
        {.host = "h2", .notice = "", .exit_status = 2, .came = 2},
    };
    static const char head[] = "the command failed on h1: exit status 1";
    char out[sizeof head + 7]; /* 8 bytes left after the head, its NUL's included */
    cr_assert_eq(launch_ssh_reason_write(NULL, parts, N(parts), 0, NULL, out, sizeof out), 0);
    cr_assert_str_eq(out, head);
    char cut[sizeof head + 12];
    launch_ssh_reason_write(NULL, parts, N(parts), 0, NULL, cut, sizeof cut);
    cr_assert_str_eq(cut, "the command failed on h1: exit status 1; on h2: exi");
    char small[10];
    launch_ssh_reason_write(NULL, parts, N(parts), 0, NULL, small, sizeof small);
    cr_assert_str_eq(small, "the comma");
    cr_assert_eq(launch_ssh_reason_write(NULL, parts, N(parts), 2, NULL, out, sizeof out), 2);
    cr_assert_str_eq(out, "");
}
