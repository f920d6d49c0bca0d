/* Which failed rank a trial's reason names first (rankcause.h), with the words of the sshd
 * harness's PyTorch trials (tests/integration/pytorch.sh: ranks 0, 1 on h1, 2, 3 on h2; gloo
 * on CPU, torch 1.13). The notices come in the order their hosts' parts ended: the per-host
 * launcher's old reason named the first whatever it said. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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

/* The harness's hosts in the inventory's order: h1, h2, h3. */
static const char *const HOST[] = {"h1", "h2", "h3"};

static RankCause *heard(const char *const *events, size_t n)
{
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
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
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
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
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
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

/* Regression: what a rank said was kept by its number alone, and a script that numbers its
 * ranks per host has a "rank 0" on every host. h1 holds rank 0, SIGKILLed without a word;
 * h2 holds ranks 1 to 3, which call themselves 0 to 2 and lose it. h2's "rank 0 on h2" made
 * h1's rank 0 a lost peer, and h2, which ended first, led the reason. */
Test(rankcause, a_lost_peers_words_count_only_from_that_rank_on_its_own_host)
{
    const char *events[] = {
        "rank 0 on h2: RuntimeError: Connection closed by peer [127.0.0.11]:40147",
        "rank 1 on h2: RuntimeError: Connection closed by peer [127.0.0.11]:40147",
        "rank 2 on h2: RuntimeError: Connection closed by peer [127.0.0.11]:40147"};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 1 (h2 cpu0) exited with status 1",
                             "rank 0 (h1 gpu0) exited with status 137 (SIGKILL)"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), events[0]), 1);
    rankcause_free(c);
}

/* Regression, the other way round: rank 2 on h2 lost its peer, rank 1 on h1 died without a
 * word, and h1's script (numbering its own) said a cause as "rank 2 on h1", which made h2's
 * rank 2 one that said more than a lost peer's words: h2 led. */
Test(rankcause, a_cause_said_on_another_host_is_not_the_ranks_own)
{
    const char *other = "rank 2 on h1: ValueError: bad shard";
    const char *events[] = {PEER_2, other};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 1 (h1 gpu0) exited with status 137 (SIGKILL)"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), other), 1);
    rankcause_free(c);
}

/* Rank 0 on `lost` lost its peer, rank 0 on `cause` (whose name begins with `lost`'s) said a
 * cause; `lost`'s notice came first. Which notice leads, with the events' rows alone (no
 * error event) or with the cause's event as the trial's. */
static void names_apart(const char *lost, const char *cause, int with_error_event)
{
    const char *hosts[] = {lost, cause};
    RankCause *c = rankcause_new(1, hosts, N(hosts));
    cr_assert_not_null(c);
    char peer[128], said[128], lost_notice[96], cause_notice[96];
    snprintf(peer, sizeof peer, "rank 0 on %s: RuntimeError: Connection closed by peer", lost);
    snprintf(said, sizeof said, "rank 0 on %s: ValueError: bad shard", cause);
    snprintf(lost_notice, sizeof lost_notice, "rank 0 (%s cpu) exited with status 1", lost);
    snprintf(cause_notice, sizeof cause_notice, "rank 0 (%s cpu) exited with status 1", cause);
    rankcause_event(c, peer);
    rankcause_event(c, said);
    const char *notices[] = {lost_notice, cause_notice};
    cr_assert_eq(rankcause_first(c, notices, N(notices), with_error_event ? said : NULL), 1,
                 "%s's cause read as %s's", cause, lost);
    rankcause_free(c);
}

/* n1's stored "n1:" never began "n10: ..." */
Test(rankcause, a_name_that_begins_another_is_not_its_host)
{
    names_apart("n1", "n10", 0);
    names_apart("n1", "n10", 1);
}

/* Regression: a name holding ':' ("a:b", an IPv6 literal) begins with another's "a:", so the
 * event "rank 0 on a:b: ..." marked both rows (and read as of a's notice), and a's notice read
 * a cause a never said. */
Test(rankcause, a_name_holding_a_colon_is_not_the_host_it_begins_with)
{
    names_apart("a", "a:b", 0);
    names_apart("a", "a:b", 1);
    names_apart("2001:db8::1", "2001:db8::1:5", 0);
    names_apart("2001:db8::1", "2001:db8::1:5", 1);
}

/* A name holding ": " still begins another's event ("a: b: ..." is "a" followed by ": "): the
 * longest name that fits is the event's, so a's row keeps only what a said. */
Test(rankcause, of_names_that_fit_an_event_the_longest_is_its_host)
{
    names_apart("a", "a: b", 0);
}

/* Regression: the trial's error event was matched to a notice by prefix alone, so "rank 0 on
 * a: b: ValueError ..." read as an event of "a" (followed by ": b: ...") and a's notice, a
 * lost peer's that came first, led the reason. */
Test(rankcause, the_error_events_host_is_the_longest_name_that_fits_it)
{
    names_apart("a", "a: b", 1);
}

/* The same rule for the first notice of the cause's host (a peer beside the crashed rank ended
 * first there): a's notice came first, rank 1 on "a: b" crashed and rank 2 beside it was named. */
Test(rankcause, the_cause_hosts_notice_is_of_the_longest_name_that_fits_its_event)
{
    const char *hosts[] = {"a", "a: b"};
    RankCause *c = rankcause_new(3, hosts, N(hosts));
    cr_assert_not_null(c);
    const char *crash = "rank 1 on a: b: RuntimeError: crashing on purpose";
    rankcause_event(c, crash);
    const char *notices[] = {"rank 0 (a cpu) exited with status 1",
                             "rank 2 (a: b cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), crash), 1);
    /* a's own crash still finds a's notice, not that of "a: b" */
    const char *of_a = "rank 0 on a: RuntimeError: crashing on purpose";
    const char *other[] = {"rank 2 (a: b cpu) exited with status 1",
                           "rank 0 (a cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, other, N(other), of_a), 1);
    /* an event of no machine of the schedule is of no notice's host */
    cr_assert_eq(rankcause_first(c, other, N(other), "rank 0 on zz: RuntimeError: x"), 0);
    rankcause_free(c);
}

/* Regression: the first `world` (rank, host) pairs heard were kept and the rest passed over,
 * and the harness's real traffic alone (ranks 0 to 3, each on its host) fills `world` pairs:
 * any other pair heard before a real one (a host of no notice, "rank 03" for "rank 3", an
 * event whose first ": " comes late and reads as host "h1 RuntimeError") pushed it out. Ranks
 * 2, 3 and 0 lost their peer, then the trial's own words came, then rank 1 on h1 said it lost
 * its peer too; it read as a rank that said nothing and led h2, which ended first. */
Test(rankcause, pairs_heard_before_a_real_ranks_event_do_not_push_it_out)
{
    RankCause *c = heard((const char *[]){PEER_2, PEER_3, PEER_0}, 3);
    const char *bogus[] = {"rank 1 on x: RuntimeError: Connection closed by peer",
                           "rank 03 on h1: RuntimeError: Connection closed by peer",
                           "rank 1 on h1 RuntimeError: [pair.cc:598]: Connection closed by peer",
                           "rank 2 on h9: RuntimeError: Connection closed by peer",
                           "rank 0 on h: RuntimeError: Connection closed by peer"};
    for (size_t i = 0; i < N(bogus); i++)
        rankcause_event(c, bogus[i]);
    rankcause_event(c, "rank 1 on h1: RuntimeError: Connection closed by peer");
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 1 (h1 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 0,
                 "rank 1 on h1's lost peer was pushed out and it led");
    rankcause_free(c);
}

/* What is kept follows the schedule, not what the trial sends: a flood of events from hosts of
 * no notice keeps nothing and bounds nothing, and afterwards every rank on every host, more
 * pairs than the world holds ranks (a script that numbers its ranks per host), is still heard.
 * Only rank 3 on h3 said nothing, and its notice, the last, leads. */
Test(rankcause, a_flood_from_other_hosts_keeps_nothing_and_every_ranks_words_on_every_host_count)
{
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
    cr_assert_not_null(c);
    char event[80];
    for (int host = 0; host < 20000; host++) {
        snprintf(event, sizeof event, "rank %d on x%d: RuntimeError: Connection closed by peer",
                 host % WORLD, host);
        rankcause_event(c, event);
    }
    const char *notices[WORLD * N(HOST)];
    char text[WORLD * N(HOST)][64];
    for (size_t i = 0; i < WORLD * N(HOST); i++) {
        size_t rank = i % WORLD;
        const char *host = HOST[i / WORLD];
        snprintf(text[i], sizeof text[i], "rank %zu (%s cpu) exited with status 1", rank, host);
        notices[i] = text[i];
        if (i + 1 < WORLD * N(HOST)) {
            snprintf(event, sizeof event, "rank %zu on %s: RuntimeError: Connection closed by peer",
                     rank, host);
            rankcause_event(c, event);
        }
    }
    cr_assert_eq(rankcause_first(c, notices, N(notices), NULL), N(notices) - 1);
    rankcause_free(c);
}

/* The hosts are rankcause_new's copies: the caller's names may go. */
Test(rankcause, the_hosts_are_kept_as_copies)
{
    char h1[] = "h1", h2[] = "h2";
    const char *hosts[] = {h1, h2};
    RankCause *c = rankcause_new(WORLD, hosts, N(hosts));
    cr_assert_not_null(c);
    strcpy(h1, "zz");
    strcpy(h2, "zz");
    rankcause_event(c, PEER_2);
    const char *notices[] = {"rank 1 (h1 gpu0) exited with status 1",
                             "rank 2 (h2 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), PEER_2), 0);
    rankcause_free(c);
    cr_assert_null(rankcause_new((size_t)-1, hosts, 2), "world * hosts overflowed");
}

/* An event without the helper's "rank N on HOST: " names no host: passed over, as text that
 * names no rank is. */
Test(rankcause, an_event_without_a_host_is_passed_over)
{
    RankCause *c = rankcause_new(WORLD, HOST, N(HOST));
    rankcause_event(c, "rank 2 on h2 Connection closed by peer");
    rankcause_event(c, "rank 2 on : Connection closed by peer");
    const char *notices[] = {"rank 2 (h2 cpu) exited with status 1",
                             "rank 0 (h1 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, notices, N(notices), NULL), 0);
    rankcause_free(c);
}

/* The reason rankcause_order's order makes, as launch_ssh_reason.c writes it (its own test,
 * test_launch_ssh_reason.c, has the whole text). */
static void reason(const size_t *order, size_t n, const char *const *notices, char *out, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s: %s", i ? "; on " : "", HOST[order[i]],
                                notices[order[i]]);
}

/* Regression: over SSH the notices after the leading one were said in the inventory's order
 * (h1, h2, h3), whatever order they came in. h3's rank 4 crashed; h2's rank 2 lost it and
 * its notice came first, h1's rank 0 last; h2 ended first. The reason reads as a timeline:
 * the cause, then h2, then h1. */
Test(rankcause, the_others_follow_the_leader_in_the_order_their_notices_came)
{
    const char *crash = "rank 4 on h3: RuntimeError: crashing on purpose";
    const char *events[] = {PEER_2, crash, PEER_0};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 0 (h1 cpu) exited with status 1",
                             "rank 2 (h2 cpu) exited with status 1",
                             "rank 4 (h3 cpu) exited with status 1"};
    const unsigned came[] = {3, 1, 2};
    size_t order[3];
    size_t n = rankcause_order(c, notices, came, 3, 1, crash, order);
    char out[512];
    reason(order, n, notices, out, sizeof out);
    cr_assert_str_eq(out, "h3: rank 4 (h3 cpu) exited with status 1; "
                          "on h2: rank 2 (h2 cpu) exited with status 1; "
                          "on h1: rank 0 (h1 cpu) exited with status 1");
    rankcause_free(c);
}

/* The part that ended first without a notice (a fan-out that failed before its ranks) is
 * named where its end came; a part with neither is not named. */
Test(rankcause, a_part_without_a_notice_is_named_where_it_ended)
{
    const char *crash = "rank 4 on h3: RuntimeError: crashing on purpose";
    const char *notices[] = {"", "rank 2 (h2 cpu) exited with status 1",
                             "rank 4 (h3 cpu) exited with status 1"};
    const unsigned came[] = {2, 3, 1};
    size_t order[3];
    size_t n = rankcause_order(NULL, notices, came, 3, 0, crash, order);
    cr_assert_eq(n, 3);
    cr_assert_eq(order[0], 2);
    cr_assert_eq(order[1], 0);
    cr_assert_eq(order[2], 1);
    const unsigned unnamed[] = {0, 2, 1};
    n = rankcause_order(NULL, notices, unnamed, 3, 2, NULL, order);
    cr_assert_eq(n, 2);
    cr_assert_eq(order[0], 2);
    cr_assert_eq(order[1], 1);
}

/* Two ranks on two hosts SIGKILLed without a word (the OOM killer's way): neither said
 * anything, their peers only lost peers. The part that ended first leads whichever notice
 * came first, and both are named. */
Test(rankcause, of_two_ranks_killed_without_a_word_the_first_to_end_leads_and_both_are_named)
{
    const char *events[] = {PEER_0, PEER_2};
    RankCause *c = heard(events, N(events));
    const char *notices[] = {"rank 1 (h1 gpu0) exited with status 137 (SIGKILL)",
                             "rank 3 (h2 cpu) exited with status 137 (SIGKILL)"};
    size_t order[2];
    char out[512];
    /* h2 ended first, h1's notice came first */
    const unsigned came[] = {1, 2};
    size_t n = rankcause_order(c, notices, came, 2, 1, PEER_0, order);
    reason(order, n, notices, out, sizeof out);
    cr_assert_str_eq(out, "h2: rank 3 (h2 cpu) exited with status 137 (SIGKILL); "
                          "on h1: rank 1 (h1 gpu0) exited with status 137 (SIGKILL)");
    /* h1 ended first */
    n = rankcause_order(c, notices, came, 2, 0, PEER_2, order);
    reason(order, n, notices, out, sizeof out);
    cr_assert_str_eq(out, "h1: rank 1 (h1 gpu0) exited with status 137 (SIGKILL); "
                          "on h2: rank 3 (h2 cpu) exited with status 137 (SIGKILL)");
    rankcause_free(c);
}

/* Regression (seen once in CI, slurm.sh): rank 1 on n1 raised at step 2, and rank 2 beside it
 * lost it in that step's all_reduce and ended first there, so n1's fan-out named rank 2. n2's
 * notice came first and led the reason, though the cause was n1's: its host leads. */
Test(rankcause, the_cause_hosts_notice_leads_when_it_names_a_peer_beside_the_crashed_rank)
{
    const char *notices[] = {"rank 3 (n2 cpu) exited with status 1",
                             "rank 2 (n1 gpu1) exited with status 1"};
    const char *crash = "rank 1 on n1: RuntimeError: crashing on purpose (--crash-rank 1 at step 2)";
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), crash), 1);
    /* the crashed rank's own notice still goes before its host's other ranks' */
    const char *both[] = {"rank 2 (n1 gpu1) exited with status 1",
                          "rank 1 (n1 gpu0) exited with status 1"};
    cr_assert_eq(rankcause_first(NULL, both, N(both), crash), 1);
    /* over SSH too, before a host whose rank said nothing (status 137) */
    const char *events[] = {PEER_0, CRASH_1};
    RankCause *c = heard(events, N(events));
    const char *ssh[] = {"rank 3 (h2 cpu) exited with status 137 (SIGKILL)",
                         "rank 0 (h1 cpu) exited with status 1"};
    cr_assert_eq(rankcause_first(c, ssh, N(ssh), CRASH_1), 1);
    /* a lost peer's event moves nothing */
    cr_assert_eq(rankcause_first(NULL, notices, N(notices), PEER_0), 0);
    rankcause_free(c);
}
