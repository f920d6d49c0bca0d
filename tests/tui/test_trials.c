#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/sim/simcluster.h"
#include "tui/trials.h"

static SimCluster *sim;
static TrialRecord recs[4];
static const TrialRecord *ptr[4];

/* Four trials: ok 30 s, failed, ok 20 s (predicted 25), running. */
static void setup(void)
{
    Error err;
    sim = simcluster_new("B:googlenet", &err);
    const Cluster *c = simcluster_cluster(sim);
    memset(recs, 0, sizeof recs);
    double times[4] = {30, 0, 20, 0};
    for (int i = 0; i < 4; i++) {
        recs[i].trial = i + 1;
        recs[i].suggestion.schedule = schedule_new(c, simcluster_job(sim));
        if (i < 3) {
            recs[i].obs = observation_new(recs[i].suggestion.schedule);
            recs[i].obs->status = i == 1 ? TRIAL_FAILED : TRIAL_OK;
            recs[i].obs->time_s = times[i];
            if (i == 1)
                snprintf(recs[i].obs->reason, sizeof recs[i].obs->reason, "out of GPU memory");
        }
        ptr[i] = &recs[i];
    }
    recs[2].suggestion.has_prediction = 1;
    recs[2].suggestion.mean_s = 25;
    recs[2].overridden = 1;
    recs[3].launched = 1; /* running */
}

static void teardown(void)
{
    for (int i = 0; i < 4; i++) {
        observation_free(recs[i].obs);
        schedule_free(recs[i].suggestion.schedule);
    }
    simcluster_free(sim);
}

TestSuite(trials, .init = setup, .fini = teardown);

Test(trials, best_so_far_runs_over_trial_order)
{
    TrialTable t = {0};
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "");
    cr_assert_eq(t.n_shown, 4);
    cr_assert_float_eq(t.rows[0].best_s, 30, 1e-9);
    cr_assert_float_eq(t.rows[1].best_s, 30, 1e-9);
    cr_assert_float_eq(t.rows[2].best_s, 20, 1e-9);
    cr_assert(isnan(t.rows[1].time_s));
    cr_assert_float_eq(t.rows[2].err_pct, 25.0, 1e-9);
    cr_assert_str_eq(t.rows[3].status, "running");
    trials_free(&t);
}

/* A trial begun but held before its launch (every host refused, on the console) is waiting,
 * not running: nothing runs. */
Test(trials, a_trial_held_before_its_launch_is_waiting)
{
    recs[3].launched = 0;
    TrialTable t = {0};
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "");
    cr_assert_str_eq(t.rows[3].status, "waiting");
    trials_free(&t);
}

Test(trials, sorting_by_time_puts_unknown_last_both_ways)
{
    TrialTable t = {0};
    trials_build(&t, ptr, 4, TRIAL_COL_TIME, 0, "");
    cr_assert_eq(t.rows[t.order[0]].rec->trial, 3);
    cr_assert_eq(t.rows[t.order[1]].rec->trial, 1);
    cr_assert(isnan(t.rows[t.order[3]].time_s));
    trials_build(&t, ptr, 4, TRIAL_COL_TIME, 1, "");
    cr_assert_eq(t.rows[t.order[0]].rec->trial, 1);
    cr_assert(isnan(t.rows[t.order[3]].time_s));
    trials_free(&t);
}

Test(trials, filter_matches_every_word_case_insensitively)
{
    TrialTable t = {0};
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "FAILED gpu");
    cr_assert_eq(t.n_shown, 1);
    cr_assert_eq(t.rows[t.order[0]].rec->trial, 2);
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "override");
    cr_assert_eq(t.n_shown, 1);
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "ok");
    cr_assert_eq(t.n_shown, 2);
    trials_build(&t, ptr, 4, TRIAL_COL_NUMBER, 0, "nothing-like-this");
    cr_assert_eq(t.n_shown, 0);
    trials_free(&t);
}

/* Regression: `:sort workers` (W/PS) sorted by the workers alone, so rows of one worker count
 * stayed in trial order whatever their parameter servers ("10/3" above "10/1"). They sort by
 * workers, then PS, both ways (docs/console.md). */
Test(trials, sorting_by_w_ps_orders_by_workers_then_parameter_servers)
{
    /* trial 1: 2/3, 2: 2/1, 3: 1/2, 4: 2/2 */
    int w[4] = {2, 2, 1, 2}, ps[4] = {3, 1, 2, 2};
    for (int i = 0; i < 4; i++) {
        Schedule *sc = recs[i].suggestion.schedule;
        cr_assert_geq((int)sc->cluster->n_machines, 3);
        memset(sc->worker, 0, sc->cluster->n_machines);
        memset(sc->ps, 0, sc->cluster->n_machines);
        for (int m = 0; m < w[i]; m++)
            sc->worker[m] = 1;
        for (int m = 0; m < ps[i]; m++)
            sc->ps[m] = 1;
    }
    TrialTable t = {0};
    trials_build(&t, ptr, 4, TRIAL_COL_WORKERS, 0, "");
    int up[4] = {3, 2, 4, 1};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(t.rows[t.order[i]].rec->trial, up[i], "ascending, row %d", i);
    trials_build(&t, ptr, 4, TRIAL_COL_WORKERS, 1, "");
    int down[4] = {1, 4, 2, 3};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(t.rows[t.order[i]].rec->trial, down[i], "descending, row %d", i);
    trials_free(&t);
}

/* `:sort` takes a column by its name or by the header the table shows. */
Test(trials, a_column_is_found_by_name_or_by_its_header)
{
    cr_assert_eq(trials_column_find("time"), TRIAL_COL_TIME);
    cr_assert_eq(trials_column_find("time_s"), TRIAL_COL_TIME);
    cr_assert_eq(trials_column_find("Pred_S"), TRIAL_COL_PRED);
    cr_assert_eq(trials_column_find("err%"), TRIAL_COL_ERR);
    cr_assert_eq(trials_column_find("W/PS"), TRIAL_COL_WORKERS);
    cr_assert_eq(trials_column_find("#"), TRIAL_COL_NUMBER);
    for (int c = 0; c < TRIAL_COL_COUNT; c++) {
        cr_assert_eq(trials_column_find(trials_column_name((TrialColumn)c)), c);
        /* the header the table draws, from the same table */
        cr_assert_eq(trials_column_find(trials_column_header((TrialColumn)c)), c);
        int w = trials_column_width((TrialColumn)c);
        cr_assert_geq(w < 0 ? -w : w, (int)strlen(trials_column_header((TrialColumn)c)));
    }
    cr_assert_eq(trials_column_find("speed"), -1);
    cr_assert_eq(trials_column_find(""), -1);
}

/* Two tables alike: the rows the table shows and their order. */
static void assert_same_table(const TrialTable *kept, const TrialTable *fresh)
{
    cr_assert_eq(kept->n, fresh->n);
    cr_assert_eq(kept->n_shown, fresh->n_shown);
    for (size_t i = 0; i < fresh->n_shown; i++)
        cr_assert_eq(kept->order[i], fresh->order[i], "order[%zu]", i);
    for (size_t i = 0; i < fresh->n; i++) {
        const TrialRow *k = &kept->rows[i], *f = &fresh->rows[i];
        cr_assert_eq(k->rec, f->rec, "row %zu: its record where it is now", i);
        cr_assert_str_eq(k->status, f->status, "row %zu", i);
        cr_assert_eq(isnan(k->best_s), isnan(f->best_s), "row %zu", i);
        if (!isnan(f->best_s))
            cr_assert_float_eq(k->best_s, f->best_s, 1e-12, "row %zu", i);
        cr_assert_eq(isnan(k->time_s), isnan(f->time_s), "row %zu", i);
    }
}

/* The table is rebuilt at every trial event and keeps the rows of finished trials (a long
 * session rebuilt tens of thousands at each): a rebuild shows what a build from nothing
 * shows. The running trial that finished is read again (its status, its time, the
 * best-so-far it sets), records that moved (the tuner's array grew) are pointed at where
 * they are, a new filter matches every row again, and the order by trial number, laid out
 * without sorting, is the sorted one both ways. */
Test(trials, a_rebuild_shows_what_a_fresh_build_shows)
{
    TrialTable kept = {0}, fresh = {0};
    trials_build(&kept, ptr, 3, TRIAL_COL_NUMBER, 0, "");
    trials_build(&kept, ptr, 4, TRIAL_COL_NUMBER, 0, "");
    cr_assert_str_eq(kept.rows[3].status, "running");
    /* trial 4 finishes, the fastest yet, in a tuner whose records moved */
    recs[3].obs = observation_new(recs[3].suggestion.schedule);
    recs[3].obs->status = TRIAL_OK;
    recs[3].obs->time_s = 10;
    TrialRecord moved[4];
    const TrialRecord *mptr[4];
    for (int i = 0; i < 4; i++) {
        moved[i] = recs[i];
        mptr[i] = &moved[i];
    }
    trials_build(&kept, mptr, 4, TRIAL_COL_NUMBER, 0, "");
    trials_build(&fresh, mptr, 4, TRIAL_COL_NUMBER, 0, "");
    cr_assert_str_eq(kept.rows[3].status, "ok", "the trial that finished is read again");
    cr_assert_float_eq(kept.rows[3].best_s, 10, 1e-12);
    assert_same_table(&kept, &fresh);
    const char *filters[] = {"failed", "ok", "override", "", "#4"};
    for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++)
        for (int desc = 0; desc < 2; desc++)
            for (int col = 0; col < TRIAL_COL_COUNT; col++) {
                trials_free(&fresh);
                trials_build(&kept, mptr, 4, (TrialColumn)col, desc, filters[f]);
                trials_build(&fresh, mptr, 4, (TrialColumn)col, desc, filters[f]);
                assert_same_table(&kept, &fresh);
            }
    trials_build(&kept, mptr, 4, TRIAL_COL_NUMBER, 1, "");
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(kept.order[i], 3 - i, "newest first");
    trials_free(&kept);
    trials_free(&fresh);
}

/* Random sequences of what a session does to the table (trials start and finish in any
 * order, records move, the filter and the sort change, another tuner's fewer trials): the
 * table kept from build to build (its rows, its decimals, its sorted order with only the
 * moved rows placed again) equals one built from nothing and sorted (trials_sort), and its
 * decimals those read from every row (trials_decimals_scan), after every event. */
enum { RAND_MAX_TRIALS = 160, RAND_SCHEDULES = 3 };

static unsigned rand_next(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A few values alike (ties, plateaus of the best-so-far), tiny and large ones (every
 * decimals count, and a largest one too wide for the column). */
static double rand_time(unsigned *s)
{
    static const double T[] = {0.00042, 0.0031, 0.012, 0.25, 0.25, 1.5, 1.5, 1.5,
                               7.0,     42.0,   99.99, 150,  2048, 123456.7, 0};
    return T[rand_next(s) % (sizeof T / sizeof T[0])];
}

static void assert_same_random(const TrialTable *kept, const TrialTable *fresh, unsigned seed,
                               int step)
{
    cr_assert_eq(kept->n, fresh->n, "seed %u step %d", seed, step);
    cr_assert_eq(kept->n_shown, fresh->n_shown, "seed %u step %d", seed, step);
    for (size_t i = 0; i < fresh->n_shown; i++)
        cr_assert_eq(kept->order[i], fresh->order[i], "seed %u step %d order[%zu]", seed, step,
                     i);
    for (size_t i = 0; i < fresh->n; i++) {
        const TrialRow *k = &kept->rows[i], *f = &fresh->rows[i];
        cr_assert_eq(k->rec, f->rec, "seed %u step %d row %zu", seed, step, i);
        cr_assert_str_eq(k->status, f->status);
        cr_assert(k->best_s == f->best_s || (isnan(k->best_s) && isnan(f->best_s)),
                  "seed %u step %d row %zu", seed, step, i);
    }
    int scanned = trials_decimals_scan(fresh);
    cr_assert_eq(kept->decimals, scanned, "seed %u step %d: decimals kept %d, read %d", seed,
                 step, kept->decimals, scanned);
    cr_assert_eq(fresh->decimals, scanned);
}

Test(trials_random, a_kept_table_equals_one_rebuilt_and_sorted_after_every_event)
{
    Error err;
    SimCluster *s = simcluster_new("B:googlenet", &err);
    cr_assert_not_null(s, "%s", err.msg);
    const Cluster *c = simcluster_cluster(s);
    Schedule *sch[RAND_SCHEDULES];
    for (int k = 0; k < RAND_SCHEDULES; k++) {
        sch[k] = schedule_new(c, simcluster_job(s));
        for (size_t m = 0; m < c->n_machines; m++)
            sch[k]->worker[m] = (unsigned char)(m <= (size_t)k);
    }
    static const char *FILTERS[] = {"", "", "", "ok", "failed", "#1", "override", "running",
                                    "ok #2"};
    enum { NF = sizeof FILTERS / sizeof FILTERS[0] };
    static TrialRecord buf[2][RAND_MAX_TRIALS];
    const TrialRecord *ptr2[RAND_MAX_TRIALS];
    for (unsigned seed = 1; seed <= 300; seed++) {
        unsigned r = seed * 2654435761u | 1;
        memset(buf, 0, sizeof buf);
        int cur = 0;
        size_t n = 0;
        TrialColumn sort = (TrialColumn)(rand_next(&r) % TRIAL_COL_COUNT);
        int desc = (int)(rand_next(&r) % 2);
        const char *filter = "";
        TrialTable kept = {0};
        for (int step = 0; step < 400; step++) {
            unsigned what = rand_next(&r) % 100;
            if (what < 40 && n < RAND_MAX_TRIALS) { /* a trial starts */
                TrialRecord *t = &buf[cur][n];
                memset(t, 0, sizeof *t);
                t->trial = (int)n + 1;
                t->suggestion.schedule = sch[rand_next(&r) % RAND_SCHEDULES];
                t->suggestion.has_prediction = rand_next(&r) % 4 != 0;
                t->suggestion.mean_s = rand_time(&r);
                t->overridden = rand_next(&r) % 5 == 0;
                n++;
            } else if (what < 80 && n > 0) { /* a running trial finishes, any of them */
                size_t i = rand_next(&r) % n;
                TrialRecord *t = &buf[cur][i];
                if (!t->obs) {
                    t->obs = observation_new(t->suggestion.schedule);
                    unsigned st = rand_next(&r) % 10;
                    t->obs->status = st < 6   ? TRIAL_OK
                                     : st < 8 ? TRIAL_FAILED
                                     : st < 9 ? TRIAL_PRUNED
                                              : TRIAL_INTERRUPTED;
                    t->obs->time_s = rand_time(&r);
                    if (t->obs->status == TRIAL_FAILED)
                        snprintf(t->obs->reason, sizeof t->obs->reason, "out of memory");
                }
            } else if (what < 88) { /* the tuner's records moved */
                memcpy(buf[1 - cur], buf[cur], n * sizeof buf[0][0]);
                memset(buf[cur], 0xa5, sizeof buf[cur]); /* the old place is garbage now */
                cur = 1 - cur;
            } else if (what < 94) {
                sort = (TrialColumn)(rand_next(&r) % TRIAL_COL_COUNT);
                desc = (int)(rand_next(&r) % 2);
            } else if (what < 98) {
                filter = FILTERS[rand_next(&r) % NF];
            } else if (n > 0) { /* another tuner's, with fewer trials: they end here */
                size_t to = rand_next(&r) % n;
                for (size_t i = to; i < n; i++)
                    observation_free(buf[cur][i].obs);
                n = to;
            }
            for (size_t i = 0; i < n; i++)
                ptr2[i] = &buf[cur][i];
            trials_build(&kept, ptr2, n, sort, desc, filter);
            TrialTable fresh = {0};
            trials_build(&fresh, ptr2, n, sort, desc, filter);
            trials_sort(&fresh, sort, desc);
            assert_same_random(&kept, &fresh, seed, step);
            trials_free(&fresh);
        }
        for (size_t i = 0; i < n; i++)
            observation_free(buf[cur][i].obs);
        trials_free(&kept);
    }
    for (int k = 0; k < RAND_SCHEDULES; k++)
        schedule_free(sch[k]);
    simcluster_free(s);
}
