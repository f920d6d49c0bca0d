/* Which leftover groups are stopped before a trial, and what happens to those whose host
 * does not answer (a pool without that host: nothing reaches SSH). */
#include <criterion/criterion.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/session/tune_orphans.h"
#include "tests/support/fixtures.h"
#include "tests/support/marked.h"
#include "tests/support/ownkill.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/timeout.h"

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
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error err;
    HostPool *pool = hostpool_new(&po, &err);
    cr_assert_not_null(pool, "%s", err.msg);
    TuneJournal *tj = tune_journal_new(NULL); /* never begun: its events are dropped */
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m1", 101, NULL), 0); /* not this trial's machine */
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100, NULL), 0); /* tried: no such host in the pool */
    cr_assert_eq(orphans_add(&lost, 3, "m0", 103, NULL), 0); /* the trial itself */
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
                      tried(2, "h3", 4243, 1, "gone")};
    OrphanList l = {items, 3};
    char why[512];
    cr_assert_eq(tune_orphans_verdict(&l, 5, "20261126-0440-ab12", why, sizeof why), -1);
    cr_assert_str_eq(why, "trial 2's leftover process group 4242 on h2 still runs (kill not "
                          "permitted): stop it by hand (kill -KILL -- -4242 on h2), then "
                          "--resume 20261126-0440-ab12; trial 5 was not launched");
}

/* Two groups still run: both are named, each with its host and what its kill said.
 * Regression: only the first was, and the operator who stopped it by hand and resumed met
 * the second's verdict. */
Test(tune_orphans, every_group_that_survived_its_kill_is_named)
{
    Orphan items[] = {tried(1, "h1", 100, 1, "stopped"),
                      tried(2, "h2", 4242, 1, "not stopped: kill not permitted"),
                      tried(2, "h3", 4243, 1, "not stopped: the stop command failed")};
    OrphanList l = {items, 3};
    char why[512];
    cr_assert_eq(tune_orphans_verdict(&l, 5, "20261126-0440-ab12", why, sizeof why), -1);
    cr_assert_str_eq(why, "2 leftover process groups still run: trial 2's 4242 on h2 (kill not "
                          "permitted); trial 2's 4243 on h3 (the stop command failed): stop them "
                          "by hand (kill -KILL -- -PGID on its host), then --resume "
                          "20261126-0440-ab12; trial 5 was not launched");
}

/* More than the reason holds: whole groups, then how many more, and the way out still said. */
Test(tune_orphans, a_long_verdict_names_whole_groups_then_how_many_more)
{
    enum { GROUPS = 30 };
    Orphan items[GROUPS];
    for (int k = 0; k < GROUPS; k++)
        items[k] = tried(2, "a-rather-long-host-name.example.org", 100000 + k, 1,
                         "not stopped: kill not permitted");
    OrphanList l = {items, GROUPS};
    char why[512];
    cr_assert_eq(tune_orphans_verdict(&l, 5, "20261126-0440-ab12", why, sizeof why), -1);
    const char *head = "30 leftover process groups still run: ";
    cr_assert(strncmp(why, head, strlen(head)) == 0, "%s", why);
    const char *p = why + strlen(head);
    int listed = 0, more = 0, used = 0;
    for (;;) {
        int trial;
        long pgid;
        cr_assert(sscanf(p,
                         "trial %d's %ld on a-rather-long-host-name.example.org (kill not "
                         "permitted)%n",
                         &trial, &pgid, &used) == 2 &&
                      used > 0,
                  "not a whole group at '%s': %s", p, why);
        cr_assert(trial == 2 && pgid == 100000 + listed, "%s", why);
        listed++;
        p += used;
        used = 0;
        if (sscanf(p, "; and %d more%n", &more, &used) == 1 && used > 0) {
            p += used;
            break;
        }
        cr_assert(strncmp(p, "; ", 2) == 0, "%s", why);
        p += 2;
    }
    cr_assert_gt(listed, 1);
    cr_assert_eq(listed + more, GROUPS, "%s", why);
    cr_assert_str_eq(p, ": stop them by hand (kill -KILL -- -PGID on its host), then --resume "
                        "20261126-0440-ab12; trial 5 was not launched");
}

/* The stop in steps (the console's): a host in the pool that is never stepped never answers,
 * so the stop is settled only by its deadline, and its end says so, as the blocking stop
 * would after waiting. No clock is read here: settled is asked at chosen instants. */
static const char *one_host_inv =
    "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
    "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
    "\"machines\": [{\"name\": \"m0\", \"host\": \"192.0.2.1\", \"type\": \"t\"}]}";

static char said[4][512];
static int n_said;

/* Trial 2 on m0, whose host (TEST-NET) never answers: its pool never stepped, its journal. */
typedef struct {
    Cluster *c;
    Schedule *s;
    HostPool *pool;
    TuneJournal *tj;
} SilentHost;

static SilentHost silent_host_begin(void)
{
    SilentHost h = {.c = fixture_cluster_json(one_host_inv)};
    h.s = fixture_schedule(h.c, 10);
    h.s->trial = 2;
    h.s->worker[0] = h.s->ps[0] = 1;
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error err;
    h.pool = hostpool_new(&po, &err);
    cr_assert_not_null(h.pool, "%s", err.msg);
    cr_assert_eq(hostpool_add_cluster(h.pool, h.c, &err), 0, "%s", err.msg);
    h.tj = tune_journal_new(NULL);
    return h;
}

static void silent_host_free(SilentHost *h)
{
    tune_journal_free(h->tj);
    hostpool_free(h->pool);
    schedule_free(h->s);
    cluster_free(h->c);
}

static void keep_report(void *ud, const char *line)
{
    (void)ud;
    if (n_said < 4)
        snprintf(said[n_said], sizeof said[0], "%s", line);
    n_said++;
}

Test(tune_orphans, a_stop_in_steps_settles_at_its_deadline_and_keeps_an_unanswered_group)
{
    SilentHost h = silent_host_begin();
    Schedule *s = h.s;
    HostPool *pool = h.pool;
    TuneJournal *tj = h.tj;
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100, NULL), 0);
    n_said = 0;
    TuneStop *st = NULL;
    cr_assert_eq(tune_orphans_before_trial_begin(pool, tj, &lost, s, keep_report, NULL, &st), 0);
    cr_assert_not_null(st);
    cr_assert_eq(lost.n, 0); /* the stop holds it meanwhile */
    /* Said before anything is waited for: the host is not connected, so its connect timeout
     * counts too. */
    cr_assert_eq(n_said, 1);
    cr_assert(strstr(said[0], "stopping 1 leftover process group of earlier trials before "
                              "trial 2 (m0; up to "), "%s", said[0]);
    int64_t deadline = tune_stop_deadline(st);
    cr_assert_not(tune_stop_settled(st, deadline - 1));
    cr_assert(tune_stop_settled(st, deadline));
    char why[256] = "untouched";
    cr_assert_eq(tune_stop_end(st, why, sizeof why), 0, "%s", why);
    /* Regression: nothing followed "stopping ...", and the operator waited for an end. The
     * host's line says what happened and what becomes of the group. */
    cr_assert_eq(n_said, 2, "said %d lines: %s", n_said, said[0]);
    int up_to_s = -1;
    const char *up_to = strstr(said[0], "up to ");
    cr_assert(up_to && sscanf(up_to, "up to %d s", &up_to_s) == 1, "%s", said[0]);
    char want[512];
    snprintf(want, sizeof want,
             "trial 1's leftover process group 100 on m0 was not stopped before trial 2: m0 did "
             "not answer (no answer within %d s); it may still run, and is tried again before the "
             "next trial after m0 is connected again, and at the session's end",
             up_to_s);
    cr_assert_str_eq(said[1], want);
    cr_assert(lost.n == 1 && lost.items[0].pgid == 100 && lost.items[0].unreached);
    orphans_clear(&lost);
    silent_host_free(&h);
}

static char last_line[2048];

static void keep_last(void *ud, const char *line)
{
    (void)ud;
    snprintf(last_line, sizeof last_line, "%s", line);
    n_said++;
}

/* Many groups on a host that does not answer: its line names whole groups only, then how
 * many more. Regression: the list was cut at its buffer's end, mid-group ("..., tri"), so a
 * group named there could be one that is not (a pgid cut short). */
Test(tune_orphans, an_unanswered_hosts_line_names_whole_groups_and_counts_the_rest)
{
    SilentHost h = silent_host_begin();
    Schedule *s = h.s;
    HostPool *pool = h.pool;
    TuneJournal *tj = h.tj;
    OrphanList lost = {0};
    enum { GROUPS = 20 };
    for (long k = 0; k < GROUPS; k++)
        cr_assert_eq(orphans_add(&lost, 1, "m0", 100000 + k, NULL), 0);
    n_said = 0;
    TuneStop *st = NULL;
    cr_assert_eq(tune_orphans_before_trial_begin(pool, tj, &lost, s, keep_last, NULL, &st), 0);
    cr_assert_not_null(st);
    cr_assert(tune_stop_settled(st, tune_stop_deadline(st)));
    char why[256] = "untouched";
    cr_assert_eq(tune_stop_end(st, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n_said, 2);
    const char *head = "20 leftover process groups on m0 (";
    cr_assert(strncmp(last_line, head, strlen(head)) == 0, "%s", last_line);
    const char *p = last_line + strlen(head);
    int listed = 0, more = 0;
    for (;;) {
        int trial, used;
        long pgid;
        if (sscanf(p, "trial %d's %ld%n", &trial, &pgid, &used) == 2) {
            cr_assert(trial == 1 && pgid >= 100000 && pgid < 100000 + GROUPS, "%s", last_line);
            listed++;
            p += used;
        } else {
            cr_assert(sscanf(p, "and %d more)%n", &more, &used) == 1 && p[used - 1] == ')',
                      "not a whole group at '%s': %s", p, last_line);
            p += used;
            break;
        }
        if (*p == ')') {
            p++;
            break;
        }
        cr_assert(strncmp(p, ", ", 2) == 0, "%s", last_line);
        p += 2;
    }
    cr_assert_gt(listed, 0);
    cr_assert_eq(listed + more, GROUPS, "%s", last_line);
    cr_assert(strstr(p, " were not stopped before trial 2: m0 did not answer ("), "%s", p);
    cr_assert(strstr(p, "and at the session's end"), "%s", p);
    cr_assert_eq(lost.n, GROUPS);
    orphans_clear(&lost);
    silent_host_free(&h);
}

Test(tune_orphans, a_sweep_in_steps_reports_each_group_and_leaves_the_callers_list_alone)
{
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error err;
    HostPool *pool = hostpool_new(&po, &err); /* no hosts: nothing reaches SSH */
    cr_assert_not_null(pool, "%s", err.msg);
    TuneJournal *tj = tune_journal_new(NULL);
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 3, "h9", 555, NULL), 0);
    n_said = 0;
    TuneStop *st = tune_orphans_stop_begin(pool, tj, &l, "interrupted", 0, keep_report, NULL);
    cr_assert_not_null(st);
    cr_assert(tune_stop_settled(st, tune_stop_deadline(st) - 1)); /* nothing to wait for */
    cr_assert_eq(n_said, 0); /* results are said at the end only */
    cr_assert_eq(tune_stop_end(st, NULL, 0), 0);
    cr_assert_eq(n_said, 1);
    cr_assert_str_eq(said[0], "interrupted trial 3: process group 555 on h9: not stopped: no "
                              "machine 'h9' in the cluster");
    cr_assert(l.n == 1 && l.items[0].result[0] == 0);
    cr_assert_null(tune_orphans_stop_begin(pool, tj, &(OrphanList){0}, "leftover of", 1,
                                           keep_report, NULL));
    orphans_clear(&l);
    tune_journal_free(tj);
    hostpool_free(pool);
}

/* Out of memory for the stop commands (orphans_stop_begin returns NULL), a sweep says so for
 * each group, as a before-trial stop does. RLIMIT_AS (tests/support/low_memory.h) cannot make
 * that allocation fail and the sweep's larger copy of the list succeed: glibc serves a request
 * the limit refuses from an arena reserved before it. So the unit tests are linked with
 * -Wl,--wrap=orphans_stop_begin (Makefile) and this fails it on demand; everything else runs. */
static int stop_begin_out_of_memory;

OrphanStop *__real_orphans_stop_begin(HostPool *pool, OrphanList *l, double timeout_s);
OrphanStop *__wrap_orphans_stop_begin(HostPool *pool, OrphanList *l, double timeout_s)
{
    return stop_begin_out_of_memory ? NULL : __real_orphans_stop_begin(pool, l, timeout_s);
}

Test(tune_orphans, a_sweep_out_of_memory_reports_each_group_not_stopped_out_of_memory)
{
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error err;
    HostPool *pool = hostpool_new(&po, &err);
    cr_assert_not_null(pool, "%s", err.msg);
    TuneJournal *tj = tune_journal_new(NULL);
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 3, "h9", 555, NULL), 0);
    cr_assert_eq(orphans_add(&l, 3, "h8", 556, NULL), 0);
    n_said = 0;
    stop_begin_out_of_memory = 1;
    TuneStop *st = tune_orphans_stop_begin(pool, tj, &l, "interrupted", 0, keep_report, NULL);
    stop_begin_out_of_memory = 0;
    cr_assert_not_null(st);
    cr_assert(tune_stop_settled(st, 0)); /* nothing was sent: nothing to wait for */
    cr_assert_eq(tune_stop_end(st, NULL, 0), 0);
    cr_assert_eq(n_said, 2);
    cr_assert_str_eq(said[0], "interrupted trial 3: process group 555 on h9: not stopped: out of "
                              "memory");
    cr_assert_str_eq(said[1], "interrupted trial 3: process group 556 on h8: not stopped: out of "
                              "memory");
    cr_assert(l.items[0].result[0] == 0 && l.items[1].result[0] == 0); /* the caller's list */
    orphans_clear(&l);
    tune_journal_free(tj);
    hostpool_free(pool);
}

/* Out of memory to keep a group for a later trial (orphans_add, linked wrapped as
 * orphans_stop_begin is): -1 lets every call through, else that many more succeed and the
 * rest fail. */
static int adds_left = -1;

int __real_orphans_add(OrphanList *l, int trial, const char *machine, long pgid, const char *mark);
int __wrap_orphans_add(OrphanList *l, int trial, const char *machine, long pgid, const char *mark)
{
    if (adds_left == 0)
        return -1;
    if (adds_left > 0)
        adds_left--;
    return __real_orphans_add(l, trial, machine, pgid, mark);
}

/* Before a trial, a host that did not answer, and out of memory to keep the second of its two
 * groups for a later trial: the kept one is tried again, the other is not, and its line says
 * so and how to stop it by hand. Regression: one line for both said "tried again before a
 * later trial", of a group no later trial's stop would ever try. */
Test(tune_orphans, an_unanswered_group_that_could_not_be_kept_is_said_to_need_stopping_by_hand)
{
    SilentHost h = silent_host_begin();
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100, NULL), 0);
    cr_assert_eq(orphans_add(&lost, 1, "m0", 101, NULL), 0);
    n_said = 0;
    TuneStop *st = NULL;
    cr_assert_eq(tune_orphans_before_trial_begin(h.pool, h.tj, &lost, h.s, keep_report, NULL, &st),
                 0);
    cr_assert_not_null(st);
    cr_assert(tune_stop_settled(st, tune_stop_deadline(st)));
    char why[256] = "untouched";
    adds_left = 1;
    int rc = tune_stop_end(st, why, sizeof why);
    adds_left = -1;
    cr_assert_eq(rc, 0, "%s", why); /* the trial runs: nothing was decided */
    cr_assert_eq(n_said, 3, "said %d lines: %s / %s", n_said, said[0], said[1]);
    cr_assert(strstr(said[1], "trial 1's leftover process group 100 on m0 was not stopped "
                              "before trial 2: m0 did not answer (") &&
                  strstr(said[1], "); it may still run, and is tried again before the next trial "
                                  "after m0 is connected again, and at the session's end"),
              "%s", said[1]);
    cr_assert(strstr(said[2], "trial 1's leftover process group 101 on m0 was not stopped "
                              "before trial 2: m0 did not answer (") &&
                  strstr(said[2], "); it may still run, and no later trial's stop tries it (out "
                                  "of memory to keep it): stop it by hand (kill -KILL -- -101 on "
                                  "m0)"),
              "%s", said[2]);
    cr_assert(lost.n == 1 && lost.items[0].pgid == 100 && lost.items[0].unreached);
    orphans_clear(&lost);
    silent_host_free(&h);
}

/* Before a trial, out of memory for the stop (nothing is sent): after "stopping ...", a line
 * says what was not stopped, why, and what becomes of the group. Regression: nothing followed,
 * and the operator waited for an end. */
Test(tune_orphans, a_stop_before_a_trial_out_of_memory_says_the_group_was_not_stopped)
{
    SilentHost h = silent_host_begin();
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100, NULL), 0);
    n_said = 0;
    TuneStop *st = NULL;
    stop_begin_out_of_memory = 1;
    tune_orphans_before_trial_begin(h.pool, h.tj, &lost, h.s, keep_report, NULL, &st);
    stop_begin_out_of_memory = 0;
    cr_assert_not_null(st);
    cr_assert_eq(n_said, 1, "%s", said[0]);
    cr_assert(strstr(said[0], "stopping 1 leftover process group"), "%s", said[0]);
    cr_assert(tune_stop_settled(st, 0)); /* nothing was sent: nothing to wait for */
    char why[256] = "untouched";
    cr_assert_eq(tune_stop_end(st, why, sizeof why), 0, "%s", why); /* the trial runs */
    cr_assert_eq(n_said, 2, "said %d lines: %s", n_said, said[0]);
    cr_assert_str_eq(said[1], "trial 1's leftover process group 100 on m0 was not stopped before "
                              "trial 2 (out of memory); it may still run, and is tried again "
                              "before the next trial after m0 is connected again, and at the "
                              "session's end");
    cr_assert(lost.n == 1 && lost.items[0].pgid == 100 && lost.items[0].unreached);
    /* As said: m0 is not connected (its pool is never stepped), so the next trial does not
     * wait for it. */
    cr_assert_eq(tune_orphans_before_trial_begin(h.pool, h.tj, &lost, h.s, keep_report, NULL, &st),
                 0);
    cr_assert_null(st);
    cr_assert_eq(n_said, 2);
    cr_assert(lost.n == 1 && lost.items[0].pgid == 100);
    orphans_clear(&lost);
    silent_host_free(&h);
}

/* Before a trial, a group on a host the pool does not have, stopped with one on a host it has
 * (whose wait is announced): its own line says that nothing can reach it, and it is not
 * tried before a later trial. Regression: "stopping 2 ..." was followed by m0's line only. */
Test(tune_orphans, a_stop_before_a_trial_says_a_group_on_no_host_of_the_pool_was_not_stopped)
{
    SilentHost h = silent_host_begin();
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m0", 100, NULL), 0);
    cr_assert_eq(orphans_add(&lost, 1, "m9", 200, NULL), 0); /* no machine of the cluster */
    n_said = 0;
    TuneStop *st = NULL;
    tune_orphans_before_trial_begin(h.pool, h.tj, &lost, h.s, keep_report, NULL, &st);
    cr_assert_not_null(st);
    cr_assert_eq(n_said, 1);
    cr_assert(strstr(said[0], "stopping 2 leftover process groups of earlier trials before "
                              "trial 2 (m0, ...; up to "), "%s", said[0]);
    cr_assert(tune_stop_settled(st, tune_stop_deadline(st)));
    char why[256] = "untouched";
    cr_assert_eq(tune_stop_end(st, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n_said, 3, "said %d lines: %s / %s", n_said, said[0], said[1]);
    cr_assert(strncmp(said[1], "trial 1's leftover process group 100 on m0 was not stopped", 58) ==
                  0, "%s", said[1]);
    cr_assert_str_eq(said[2], "trial 1's leftover process group 200 on m9 was not stopped before "
                              "trial 2 (no machine 'm9' in the cluster); it may still run, and no "
                              "later stop can reach m9: stop it by hand (kill -KILL -- -200 on "
                              "m9)");
    /* Kept for the session's end (whose sweep names it again), not tried before a trial. */
    cr_assert_eq(lost.n, 2);
    cr_assert(lost.items[1].pgid == 200 && lost.items[1].unreached);
    cr_assert_eq(tune_orphans_before_trial_begin(h.pool, h.tj, &lost, h.s, keep_report, NULL, &st),
                 0);
    cr_assert_null(st);
    cr_assert_eq(n_said, 3);
    orphans_clear(&lost);
    silent_host_free(&h);
}

/* Resume: the groups of the trials the journal never saw finish, collected from it and handed
 * to the stop (not copied); sanitize.sh's AddressSanitizer run fails on a leak or a double free
 * of them. A journal whose trials all finished has nothing to stop. */
static void write_journal(const char *path, const char *trial_lines)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f,
            "{\"event\":\"session\",\"version\":1,\"id\":\"orphans-test\",\"optimizer\":\"random\","
            "\"seed\":\"1\",\"budget\":3,\"launcher\":\"local\",\"trial_timeout_s\":60,"
            "\"sim\":\"A:googlenet\"}\n%s",
            trial_lines);
    fclose(f);
}

Test(tune_orphans, the_interrupted_sweep_stops_the_groups_of_the_unfinished_trials_in_the_journal)
{
    char path[] = "/tmp/td-tune-orphans-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    write_journal(path, "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":100}\n"
                        "{\"event\":\"finished\",\"trial\":1,\"status\":\"ok\",\"time_s\":1}\n"
                        "{\"event\":\"remote_process\",\"trial\":2,\"machine\":\"h1\",\"pgid\":200}\n"
                        "{\"event\":\"remote_process\",\"trial\":2,\"machine\":\"h2\",\"pgid\":201}\n");
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    Error err;
    HostPool *pool = hostpool_new(&po, &err); /* no hosts: nothing reaches SSH */
    cr_assert_not_null(pool, "%s", err.msg);
    TuneJournal *tj = tune_journal_new(NULL);
    TuneSetup setup;
    cr_assert_eq(tune_journal_load(tj, path, &setup, &err), 0, "%s", err.msg);
    tune_setup_clear(&setup);
    n_said = 0;
    TuneStop *st = tune_orphans_stop_interrupted_begin(pool, tj, keep_report, NULL);
    cr_assert_not_null(st);
    cr_assert_eq(tune_stop_end(st, NULL, 0), 0);
    cr_assert_eq(n_said, 2);
    cr_assert_str_eq(said[0], "interrupted trial 2: process group 200 on h1: not stopped: no "
                              "machine 'h1' in the cluster");
    cr_assert_str_eq(said[1], "interrupted trial 2: process group 201 on h2: not stopped: no "
                              "machine 'h2' in the cluster");
    tune_journal_free(tj);

    write_journal(path, "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":100}\n"
                        "{\"event\":\"finished\",\"trial\":1,\"status\":\"ok\",\"time_s\":1}\n");
    tj = tune_journal_new(NULL);
    cr_assert_eq(tune_journal_load(tj, path, &setup, &err), 0, "%s", err.msg);
    tune_setup_clear(&setup);
    cr_assert_null(tune_orphans_stop_interrupted_begin(pool, tj, keep_report, NULL));
    tune_journal_free(tj);
    unlink(path);
    hostpool_free(pool);
}

static Sshd sweep_sshd; /* stopped by the test's fini, whatever its assertions */

static void sweep_sshd_fini(void)
{
    sshd_fixture_stop(&sweep_sshd);
}

/* A sweep whose host refused the first ask (its sshd away) asks once more when the pool
 * connects it again within the sweep's bound: the group is checked after all, where the
 * first ask alone left it "not stopped: ssh … failed" with no second look. (A real sshd of
 * the test's own; the group is one that no longer exists: "gone".) */
Test(tune_orphans, a_sweep_asks_a_host_once_more_when_it_is_back_within_the_bound,
     .timeout = TEST_TIMEOUT_S, .fini = sweep_sshd_fini)
{
    sshd_fixture_start(&sweep_sshd, "");
    sshd_fixture_pause(&sweep_sshd);
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG, .backoff_base_s = 0.2};
    Error err;
    HostPool *pool = hostpool_new(&po, &err);
    cr_assert_not_null(pool, "%s", err.msg);
    HostConf hc = {.port = sweep_sshd.port, .connect_timeout_s = 5};
    snprintf(hc.name, sizeof hc.name, "h1");
    snprintf(hc.host, sizeof hc.host, "127.0.0.1");
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    snprintf(hc.user, sizeof hc.user, "%s", pw->pw_name);
    snprintf(hc.identity, sizeof hc.identity, "%s/id", sweep_sshd.dir);
    snprintf(hc.known_hosts, sizeof hc.known_hosts, "%s/known_hosts", sweep_sshd.dir);
    cr_assert_eq(hostpool_add(pool, &hc, &err), 0, "%s", err.msg);
    pid_t child = gone_group();
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 1, "h1", (long)child, NULL), 0);
    TuneJournal *tj = tune_journal_new(NULL);
    n_said = 0;
    TuneStop *st = tune_orphans_stop_begin(pool, tj, &l, "leftover of", 0, keep_report, NULL);
    cr_assert_not_null(st);
    hostpool_run_until_settled(pool, clock_now_ms() + 10000); /* the first ask: refused */
    HostInfo hi;
    hostpool_info(pool, 0, &hi);
    cr_assert_eq(hi.state, HOST_DOWN, "%s", hostpool_state_name(hi.state));
    sshd_fixture_resume(&sweep_sshd);
    tune_stop_wait(st);
    cr_assert_eq(tune_stop_end(st, NULL, 0), 0);
    cr_assert_eq(n_said, 1);
    char want[128];
    snprintf(want, sizeof want, "leftover of trial 1: process group %ld on h1: gone", (long)child);
    cr_assert_str_eq(said[0], want);
    orphans_clear(&l);
    tune_journal_free(tj);
    hostpool_free(pool);
}

/* Regression: a finished trial's group whose stop said "not stopped" (its host down at the end
 * of the earlier session) was never stopped by a resume, which took only the groups of
 * unfinished trials. Now the resume's sweep takes every group whose last stop line says so,
 * and stops it over SSH under the same mark guard; a group whose last stop said "stopped" is
 * not taken (here a marked daemon that still runs, to see it left alone). */
static Sshd resume_sshd;
static pid_t resume_daemons[2];

static void resume_fini(void)
{
    for (int i = 0; i < 2; i++)
        if (ownkill_child(resume_daemons[i], SIGKILL) == 0) /* a test that reaped it sent none */
            waitpid(resume_daemons[i], NULL, 0);
    sshd_fixture_stop(&resume_sshd);
}

Test(tune_orphans, a_resume_stops_a_finished_trials_group_an_earlier_stop_left_running,
     .timeout = TEST_TIMEOUT_S, .fini = resume_fini)
{
    char left[GROUPSTOP_MARK_CHARS + 1], stopped[GROUPSTOP_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(left, &err), 0, "%s", err.msg);
    cr_assert_eq(orphans_mark_new(stopped, &err), 0, "%s", err.msg);
    resume_daemons[0] = marked_daemon(left, 0);
    resume_daemons[1] = marked_daemon(stopped, 0);
    sshd_fixture_start(&resume_sshd, "");
    HostPool *pool = sshd_fixture_pool(&resume_sshd, "h1");
    char path[] = "/tmp/td-tune-orphans-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char lines[2048];
    snprintf(lines, sizeof lines,
             "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":%ld,"
             "\"mark\":\"%s\"}\n"
             "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":%ld,"
             "\"mark\":\"%s\"}\n"
             "{\"event\":\"finished\",\"trial\":1,\"status\":\"unreachable\",\"time_s\":null}\n"
             "{\"event\":\"remote_process_stop\",\"trial\":1,\"machine\":\"h1\",\"pgid\":%ld,"
             "\"mark\":\"%s\",\"result\":\"not stopped: ssh failed: connection refused\"}\n"
             "{\"event\":\"remote_process_stop\",\"trial\":1,\"machine\":\"h1\",\"pgid\":%ld,"
             "\"mark\":\"%s\",\"result\":\"stopped\"}\n",
             (long)resume_daemons[0], left, (long)resume_daemons[1], stopped,
             (long)resume_daemons[0], left, (long)resume_daemons[1], stopped);
    write_journal(path, lines);
    TuneJournal *tj = tune_journal_new(NULL);
    TuneSetup setup;
    cr_assert_eq(tune_journal_load(tj, path, &setup, &err), 0, "%s", err.msg);
    tune_setup_clear(&setup);
    n_said = 0;
    TuneStop *st = tune_orphans_stop_interrupted_begin(pool, tj, keep_report, NULL);
    cr_assert_not_null(st, "the resume took no group");
    tune_stop_wait(st);
    cr_assert_eq(tune_stop_end(st, NULL, 0), 0);
    cr_assert_eq(n_said, 1, "said %d lines: %s", n_said, said[0]);
    char want[128];
    snprintf(want, sizeof want, "leftover of trial 1: process group %ld on h1: stopped",
             (long)resume_daemons[0]);
    cr_assert_str_eq(said[0], want);
    cr_assert_neq(ended_status(resume_daemons[0]), -1, "the group left running still runs");
    resume_daemons[0] = 0;
    cr_assert_eq(waitpid(resume_daemons[1], NULL, WNOHANG), 0,
                 "a group whose last stop said stopped was taken");
    tune_journal_free(tj);
    unlink(path);
    hostpool_free(pool);
}

/* Regression: a leftover group its guard had already ended (the usual case once a connection
 * dropped: the guard stops the group when its session process goes) is "gone" to the stop
 * before the next trial. The operator was told "stopping 1 leftover process group ... (up to
 * N s)" and then nothing, as if the stop had not ended; now how it went is said. */
static Sshd gone_sshd;

static void gone_sshd_fini(void)
{
    sshd_fixture_stop(&gone_sshd);
}

Test(tune_orphans, a_stop_before_a_trial_that_finds_its_group_gone_says_so,
     .timeout = TEST_TIMEOUT_S, .fini = gone_sshd_fini)
{
    sshd_fixture_start(&gone_sshd, "");
    HostPool *pool = sshd_fixture_pool(&gone_sshd, "m0");
    Cluster *c = fixture_cluster_json(one_host_inv);
    Schedule *s = fixture_schedule(c, 10);
    s->trial = 3;
    s->worker[0] = s->ps[0] = 1;
    pid_t child = gone_group();
    TuneJournal *tj = tune_journal_new(NULL);
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m0", (long)child, NULL), 0);
    n_said = 0;
    TuneStop *st = NULL;
    cr_assert_eq(tune_orphans_before_trial_begin(pool, tj, &lost, s, keep_report, NULL, &st), 0);
    cr_assert_not_null(st);
    cr_assert_eq(n_said, 1);
    cr_assert(strstr(said[0], "stopping 1 leftover process group of earlier trials before "
                              "trial 3 (m0; up to "), "%s", said[0]);
    tune_stop_wait(st);
    char why[256] = "untouched";
    cr_assert_eq(tune_stop_end(st, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n_said, 2, "said %d lines: %s", n_said, said[0]);
    char want[160];
    snprintf(want, sizeof want,
             "trial 1's leftover process group %ld on m0 had already ended: nothing to stop "
             "before trial 3",
             (long)child);
    cr_assert_str_eq(said[1], want);
    cr_assert_eq(lost.n, 0, "a gone group was kept for later");
    orphans_clear(&lost);
    tune_journal_free(tj);
    hostpool_free(pool);
    schedule_free(s);
    cluster_free(c);
}

/* Regression: a group a stop could not reach (its host down) was tried again only before a
 * later trial that used its host, so once the host came back a session whose next trials ran
 * elsewhere left it running, its GPUs held, until its end. Now the next trial's stop takes it
 * as soon as the host is connected, whatever that trial's machines: here trial 3 runs on m0
 * only, and trial 1's group on m1 (connected again: a real sshd) is stopped before it. */
static const char *two_host_inv =
    "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
    "{\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
    "\"machines\": [{\"name\": \"m[0-1]\", \"host\": \"192.0.2.[1-2]\", \"type\": \"t\"}]}";

static Sshd back_sshd;
static pid_t back_daemon;

static void back_fini(void)
{
    if (back_daemon > 0 && ownkill_child(back_daemon, SIGKILL) == 0)
        waitpid(back_daemon, NULL, 0);
    sshd_fixture_stop(&back_sshd);
}

Test(tune_orphans, an_unreached_group_is_stopped_before_the_next_trial_once_its_host_is_back,
     .timeout = TEST_TIMEOUT_S, .fini = back_fini)
{
    char mark[GROUPSTOP_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(mark, &err), 0, "%s", err.msg);
    back_daemon = marked_daemon(mark, 0);
    sshd_fixture_start(&back_sshd, "");
    HostPool *pool = sshd_fixture_pool(&back_sshd, "m1"); /* connected: READY */
    Cluster *c = fixture_cluster_json(two_host_inv);
    Schedule *s = fixture_schedule(c, 10);
    s->trial = 3;
    s->worker[0] = s->ps[0] = 1; /* m0 only */
    TuneJournal *tj = tune_journal_new(NULL);
    OrphanList lost = {0};
    cr_assert_eq(orphans_add(&lost, 1, "m1", (long)back_daemon, mark), 0);
    lost.items[0].unreached = 1; /* an earlier stop found m1 down */
    n_said = 0;
    char why[256] = "untouched";
    int rc = tune_orphans_before_trial(pool, tj, &lost, s, keep_report, NULL, why, sizeof why);
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(lost.n, 0, "the group on m1 was left for a trial on m1");
    cr_assert_eq(n_said, 2, "said %d lines: %s", n_said, said[0]);
    cr_assert(strstr(said[0], "stopping 1 leftover process group of earlier trials before "
                              "trial 3 (m1; up to "),
              "%s", said[0]);
    char want[160];
    snprintf(want, sizeof want, "stopped trial 1's leftover process group %ld on m1 before trial 3",
             (long)back_daemon);
    cr_assert_str_eq(said[1], want);
    cr_assert_neq(ended_status(back_daemon), -1, "the group still runs");
    back_daemon = 0;
    /* Taken once: the next trial's stop has nothing left to take. */
    s->trial = 4;
    n_said = 0;
    cr_assert_eq(tune_orphans_before_trial(pool, tj, &lost, s, keep_report, NULL, why, sizeof why),
                 0, "%s", why);
    cr_assert_eq(n_said, 0);
    orphans_clear(&lost);
    tune_journal_free(tj);
    hostpool_free(pool);
    schedule_free(s);
    cluster_free(c);
}
