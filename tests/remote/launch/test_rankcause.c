/* Which failed rank a trial's reason names first (rankcause.h), with the words of the sshd
 * harness's PyTorch trials (tests/integration/pytorch.sh: ranks 0, 1 on h1, 2, 3 on h2; gloo
 * on CPU, torch 1.13). The notices come in the order their hosts' parts ended: the per-host
 * launcher's old reason named the first whatever it said. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "remote/launch/rankcause.h"

/* the harness's world: ranks 0 to 3 */
#define WORLD 4
#define N(a) (sizeof(a) / sizeof *(a))

static const char *const PEER_2 =
    "rank 2 on h2: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
    "Connection closed by peer [127.0.0.11]:40147";
static const char *const PEER_3 =
    "rank 3 on h2: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
    "Connection closed by peer [127.0.0.11]:40147";
static const char *const PEER_0 =
    "rank 0 on h1: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] "
    "Connection closed by peer [127.0.0.12]:52903";
static const char *const CRASH_1 =
    "rank 1 on h1: RuntimeError: crashing on purpose (--crash-rank 1 at step 2)";

static RankCause *heard(const char *const *events, size_t n)
{
    RankCause *c = rankcause_new(WORLD);
    cr_assert_not_null(c);
    for (size_t i = 0; i < n; i++)
        rankcause_event(c, events[i]);
    return c;
}

/* Regression: rank 1 raised at step 2; h2's ranks lost it in that step's all_reduce and h2's
 * part ended first, so the reason began "the command failed on h2: rank 2 (h2 cpu) ...". */
Test(rankcause, a_crashed_ranks_notice_leads_a_peer_host_that_ended_first)
{
    const char *events[] = {PEER_2, CRASH_1, PEER_3, PEER_0};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 1 (h1 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), CRASH_1), 1);
    rankcause_free(c);
}

/* The crashed rank's own event came after a peer's: whichever the trial's error event is,
 * the rank that said a cause leads. */
Test(rankcause, a_crashed_rank_leads_even_when_the_trials_event_is_a_peers)
{
    const char *events[] = {PEER_2, PEER_3, CRASH_1};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 1 (h1 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 1);
    rankcause_free(c);
}

/* Regression: rank 1 was SIGKILLed (the OOM killer's way) and said nothing; every peer said
 * it lost a peer, h2's part ended first and led the reason, rank 1 only in "; on h1: ...". */
Test(rankcause, a_rank_killed_without_a_word_leads_its_peers)
{
    const char *events[] = {PEER_2, PEER_0, PEER_3};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 1 (h1 gpu0) exited with status 137 (SIGKILL)"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 1);
    rankcause_free(c);
}

Test(rankcause, with_only_lost_peers_the_first_to_end_leads)
{
    const char *events[] = {PEER_2, PEER_0};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 0 (h1 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 0);
    rankcause_free(c);
}

/* Slurm's node notices come with no events heard (NULL): only a cause event moves one, a lost
 * peer's never does. */
Test(rankcause, without_events_heard_only_a_cause_event_moves_a_notice)
{
    const char *notices[] = {"rank 0 (n1 gpu0) exited with status 1",
                             "rank 3 (n2 cpu) exited with status 1",
                             "rank 1 (n1 gpu1) exited with status 137 (SIGKILL)"};
    cr_assert_eq(rankcause_first(NULL, notices, N(notices),
                                 "rank 3 on n2: RuntimeError: crashing on purpose"),
                 1);
    cr_assert_eq(rankcause_first(NULL, notices, N(notices),
                                 "rank 3 on n2: RuntimeError: Connection closed by peer"),
                 0);
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), NULL), 0);
}

/* The part that ended first may have no notice (a trial without per-device ranks, a fan-out
 * that failed before its ranks): it leads unless another's notice is the cause's. */
Test(rankcause, a_part_without_a_notice_leads_unless_the_cause_is_elsewhere)
{
    const char *events[] = {PEER_2, CRASH_1};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"", "rank 1 (h1 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), CRASH_1), 1);
    const char *none[] = {NULL, "rank 2 (h2 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, none, N(none), PEER_2), 0);
    rankcause_free(c);
}

/* A rank's cause is its cause whenever it comes: a lost peer's words of the same rank, before
 * or after, do not make it a lost peer. */
Test(rankcause, a_cause_said_once_stays_one)
{
    const char *events[] = {"rank 2 on h2: RuntimeError: Connection closed by peer",
                            "rank 2 on h2: ValueError: bad shard",
                            "rank 2 on h2: RuntimeError: Connection closed by peer"};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 0 (h1 cpu) exited with status 1",
                             "rank 2 (h2 cpu) exited with status 1"};
    rankcause_event(c, PEER_0);
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_0), 1);
    rankcause_free(c);
}

Test(rankcause, a_notice_or_event_names_its_rank_exactly)
{
    cr_assert_eq(rankcause_notice_rank("rank 12 (n3 gpu1) exited with status 1"), 12);
    cr_assert_eq(rankcause_notice_rank("rank 1 on h1: RuntimeError: x"), -1);
    cr_assert_eq(rankcause_notice_rank("ranks 1 (h1 cpu) exited"), -1);
    cr_assert_eq(rankcause_notice_rank("rank x (h1 cpu)"), -1);
    cr_assert_eq(rankcause_notice_rank(""), -1);
    cr_assert_eq(rankcause_notice_rank(NULL), -1);
    /* rank 1's cause is not rank 10's */
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 10 (h3 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), "rank 1 on h1: crashing"), 0);
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), "rank 10 on h3: crashing"), 1);
    /* text that names no rank is passed over */
    RankCause *c = rankcause_new(WORLD);
    rankcause_event(c, "Connection closed by peer");
    rankcause_event(c, NULL);
    cr_assert_eq(rankcause_first(c, notices, N(notices), NULL), 0);
    rankcause_free(c);
}

/* Regression: every rank number a trial sent grew the store (a trial printing `rank 0 on x`
 * ... `rank 999999 on x` took memory and a scan of all before it, per event, in the event
 * loop). Memory follows the schedule: a rank outside the world is not kept, so its notice
 * (none of ours ever names one) counts as a rank that said nothing. */
Test(rankcause, events_of_ranks_outside_the_world_are_not_kept)
{
    RankCause *c = rankcause_new(WORLD);
    cr_assert_not_null(c);
    char event[64];
    for (long rank = WORLD; rank < WORLD + 20000; rank++) {
        snprintf(event, sizeof event, "rank %ld on x: RuntimeError: Connection closed by peer",
                 rank);
        rankcause_event(c, event);
    }
    rankcause_event(c, PEER_2);
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 4 (x cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 1,
                 "a rank beyond the world was kept as a lost peer");
    rankcause_free(c);
}

/* Regression: an event and a notice were matched by rank number alone. A user's script that
 * numbers its ranks per host (LOCAL_RANK) sends "rank 0 on h2: ..." for h2's crash, and h1's
 * notice "rank 0 (h1 gpu0)", a peer that lost it, led the reason. */
Test(rankcause, a_cause_event_moves_only_the_notice_of_its_own_host)
{
    const char *notices[] = {"rank 1 (h2 cpu) exited with status 1",
                             "rank 0 (h1 gpu0) exited with status 1",
                             "rank 0 (h2 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), "rank 0 on h2: ValueError: bad shard"),
                 2);
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), "rank 0 on h: ValueError: bad shard"),
                 0, "a host that only begins the notice's host matched it");
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), "rank 0 on h1x: ValueError: x"), 0,
                 "a host the notice's host only begins matched it");
    /* a host with a space in its name: its device is the notice's last word */
    const char *spaced[] = {"rank 1 (h2 cpu) exited with status 1",
                            "rank 0 (big box gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(NULL, spaced, N(spaced), "rank 0 on big box: ValueError: x"), 1);
}

/* Regression: the notice's host was read between its first "(" and first ")", so a machine
 * named gpu(1) never matched its own notice, and a notice cut short (first_failed holds 160
 * bytes) before its ")" matched nothing. */
Test(rankcause, a_host_with_parentheses_or_a_cut_notice_still_matches)
{
    const char *paren[] = {"rank 1 (h2 cpu) exited with status 1",
                           "rank 0 (gpu(2) cuda:0) exited with status 1",
                           "rank 0 (gpu(1) cuda:0) exited with status 1"};
    cr_assert_eq(rankcause_first(NULL, paren, N(paren), "rank 0 on gpu(1): ValueError: x"), 2);
    cr_assert_eq(rankcause_first(NULL, paren, N(paren), "rank 0 on gpu(2): ValueError: x"), 1);
    cr_assert_eq(rankcause_first(NULL, paren, N(paren), "rank 0 on gpu(: ValueError: x"), 0,
                 "a host that only begins the notice's host matched it");
    char cut[160];
    snprintf(cut, sizeof cut, "rank 0 (%0150d gpu0) exited with status 1", 7);
    char host[200];
    snprintf(host, sizeof host, "rank 0 on %0150d: ValueError: x", 7);
    const char *cuts[] = {"rank 1 (h2 cpu) exited with status 1",
                          "rank 0 (h1 gpu0) exited with status 1", cut};
    cr_assert_eq(rankcause_first(NULL, cuts, N(cuts), host), 2, "%s", cut);
    cr_assert_eq(rankcause_first(NULL, cuts, N(cuts), "rank 0 on 0000: ValueError: x"), 0,
                 "a host that only begins the cut notice's host matched it");
}
