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
    orphans_clear(&lost);
    tune_journal_free(tj);
    hostpool_free(pool);
    schedule_free(s);
    cluster_free(c);
}
