/* Which leftover groups are stopped before a trial, and what happens to those whose host
 * does not answer (a pool without that host: nothing reaches SSH). */
#include <criterion/criterion.h>
#include <string.h>

#include "remote/session/tune_orphans.h"
#include "tests/support/fixtures.h"

static int reports;

static void count_report(void *ud, const char *line)
{
    (void)ud, (void)line;
    reports++;
}

Test(tune_orphans, only_earlier_groups_on_the_trials_machines_are_tried_and_unanswered_ones_stay)
{
    const char *inv =
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m[0-2]\", \"host\": \"10.0.0.[1-3]\", \"type\": \"t\"}]}";
    Cluster *c = fixture_cluster_json(inv);
    Schedule *s = fixture_schedule(c, 10);
    s->trial = 3;
    s->worker[0] = s->ps[0] = 1; /* m0 only: m1 and m2 are no machines of this trial */
    HostPoolOptions po = {0};
    Error err;
    HostPool *pool = hostpool_new(&po, &err);
    cr_assert_not_null(pool, "%s", err.msg);
    TuneJournal *tj = tune_journal_new(NULL); /* never begun: its events are dropped */
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m1", 101), 0); /* not this trial's machine */
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100), 0); /* tried: no such host in the pool */
    cr_assert_eq(orphans_add(&lost, 3, "m0", 103), 0); /* the trial itself */
    char why[256] = "untouched";
    reports = 0;
    int rc = tune_orphans_before_trial(pool, tj, &lost, s, count_report, NULL, why, sizeof why);
    /* A host that does not answer decides nothing: the trial runs (its own launch meets the
     * same host) and the group is tried again next time. */
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(reports, 0);
    cr_assert_eq(lost.n, 3);
    cr_assert(lost.items[0].pgid == 101 && lost.items[1].pgid == 103 &&
              lost.items[2].pgid == 100);
    cr_assert(lost.items[2].unreached && !lost.items[0].unreached);
    /* Still no such host: not tried again, the group stays as it was. */
    rc = tune_orphans_before_trial(pool, tj, &lost, s, count_report, NULL, why, sizeof why);
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(reports, 0);
    cr_assert(lost.n == 3 && lost.items[2].pgid == 100 && lost.items[2].unreached);
    orphans_clear(&lost);
    tune_journal_free(tj);
    hostpool_free(pool);
    schedule_free(s);
    cluster_free(c);
}

Test(tune_orphans, a_group_whose_stop_went_unanswered_waits_for_its_host_to_be_connected)
{
    Orphan fresh = {.trial = 1, .pgid = 100}, unreached = {.trial = 1, .pgid = 100, .unreached = 1};
    for (HostState st = HOST_IDLE; st <= HOST_DOWN; st++) {
        cr_assert(tune_orphans_worth_trying(&fresh, st)); /* one attempt, whatever the state */
        cr_assert_eq(tune_orphans_worth_trying(&unreached, st), st == HOST_READY,
                     "%s", hostpool_state_name(st));
    }
}

static Orphan tried(int trial, const char *machine, long pgid, int answered, const char *result)
{
    Orphan o = {.trial = trial, .pgid = pgid, .answered = answered};
    snprintf(o.machine, sizeof o.machine, "%s", machine);
    snprintf(o.result, sizeof o.result, "%s", result);
    return o;
}

Test(tune_orphans, stopped_gone_or_unanswered_groups_let_the_trial_run)
{
    Orphan items[] = {tried(1, "h1", 100, 1, "stopped"), tried(1, "h2", 101, 1, "gone"),
                      tried(2, "h3", 102, 0, "not stopped: no answer within 6 s")};
    OrphanList l = {items, 3};
    char why[512] = "untouched";
    cr_assert_eq(tune_orphans_verdict(&l, 3, "20261126-0440-ab12", why, sizeof why), 0);
    cr_assert_str_eq(why, "untouched");
}

Test(tune_orphans, a_group_that_survived_its_kill_stops_the_session_saying_what_to_do)
{
    Orphan items[] = {tried(1, "h1", 100, 1, "stopped"),
                      tried(2, "h2", 4242, 1, "not stopped: kill not permitted"),
                      tried(2, "h3", 4243, 1, "not stopped: the stop command failed")};
    OrphanList l = {items, 3};
    char why[512];
    cr_assert_eq(tune_orphans_verdict(&l, 5, "20261126-0440-ab12", why, sizeof why), -1);
    cr_assert_str_eq(why, "trial 2's leftover process group 4242 on h2 still runs (kill not "
                          "permitted): stop it by hand (kill -KILL -- -4242 on h2), then "
                          "--resume 20261126-0440-ab12; trial 5 was not launched");
}
