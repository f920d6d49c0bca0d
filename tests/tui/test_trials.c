#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

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
