/* The stop rules on hand-made trials: regret-bound stops on a model that stays optimistic by a
 * steady amount (where ei-streak went on), not while the corrected lower end still beats the
 * best by more than the model's error; regret-ei also waits for an EI under 1%; a raised
 * budget and an operator's trial need new evidence. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/opt/stoprule.h"

/* n trials of a model that predicts `mean` with p10 `p10`, each measuring `time` (plus a small
 * alternating jitter), expecting `ei` each; the first, the best, measured 5.00 s. */
static void fill(StopTrial *t, size_t n, double mean, double p10, double time, double ei)
{
    for (size_t i = 0; i < n; i++)
        t[i] = (StopTrial){.own = 1,
                           .has_ei = 1,
                           .ei_s = ei,
                           .has_prediction = 1,
                           .mean_s = mean,
                           .p10_s = p10,
                           .p90_s = 2 * mean - p10,
                           .ok = 1,
                           .time_s = time + (i % 2 ? 0.01 : -0.01)};
    t[0].time_s = 5.00;
}

static const StopRule *rule(const char *name)
{
    const StopRule *r = stoprule_find(name);
    cr_assert_not_null(r, "no stop rule '%s'", name);
    return r;
}

Test(stoprule, regret_bound_stops_on_a_steadily_optimistic_model_where_ei_streak_goes_on)
{
    /* Predicts 5.00 (p10 4.95), measures 5.10 +- 0.01: 2% optimistic, every time, and no
     * suggestion beats the best (5.00) even at its corrected lower end. */
    StopTrial t[12];
    fill(t, 12, 5.00, 4.95, 5.10, 0.1);
    char why[256] = "";
    cr_assert_eq(rule("ei-streak")->decide(t, 12, 0, why, sizeof why), 0,
                 "EI of 2%% is no convergence for ei-streak");
    cr_assert_eq(rule("regret-bound")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert(strncmp(why, "converged: the last 3 suggestions", 33) == 0, "%s", why);
    /* It needs a window of residuals before each of the 3: not before trial 8. */
    cr_assert_eq(rule("regret-bound")->decide(t, 7, 0, why, sizeof why), 0);
    cr_assert_eq(rule("regret-bound")->decide(t, 8, 0, why, sizeof why), 1);
}

Test(stoprule, regret_bound_goes_on_while_the_corrected_lower_end_beats_the_best)
{
    /* Same bias, but the latest suggestions' p10 is 4% under the others': after the bias
     * correction they could still beat the best by far more than the model's error. */
    StopTrial t[12];
    fill(t, 12, 5.00, 4.95, 5.10, 0.1);
    for (size_t i = 9; i < 12; i++)
        t[i].p10_s = 4.75;
    char why[256];
    cr_assert_eq(rule("regret-bound")->decide(t, 12, 0, why, sizeof why), 0);
    /* One of them is enough to go on. */
    fill(t, 12, 5.00, 4.95, 5.10, 0.1);
    t[10].p10_s = 4.75;
    cr_assert_eq(rule("regret-bound")->decide(t, 12, 0, why, sizeof why), 0);
}

Test(stoprule, regret_ei_waits_for_the_ei_to_settle_and_judges_allreduce_by_the_bound)
{
    StopTrial t[12];
    fill(t, 12, 5.00, 4.95, 5.10, 0.04); /* the bound is met, EI 0.8% of the best */
    char why[256] = "";
    cr_assert_eq(rule("ei-streak")->decide(t, 12, 0, why, sizeof why), 0);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert(strstr(why, "each expected at most 0.8%"), "%s", why);
    t[10].ei_s = 0.06; /* 1.2%: the model still sees room elsewhere */
    cr_assert_eq(rule("regret-bound")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 0);
    /* The allreduce form's suggestions carry no EI: the bound alone decides. */
    for (size_t i = 0; i < 12; i++)
        t[i].has_ei = 0;
    cr_assert_eq(rule("ei-streak")->decide(t, 12, 0, why, sizeof why), 0);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert_null(strstr(why, "expected"), "%s", why);
}

Test(stoprule, regret_calibrated_stops_where_the_models_band_is_wider_than_its_errors)
{
    /* The model claims +-10% (p10 4.50, p90 5.50) and errs by 0.01 around a steady 2% bias:
     * the raw p10 leaves 8% to gain, the band rescaled to those errors none. */
    StopTrial t[12];
    fill(t, 12, 5.00, 4.50, 5.10, 0.001);
    for (size_t i = 1; i < 12; i++)
        t[i].time_s += i % 3 == 0 ? 0.005 : 0; /* errors of their own, not all alike */
    char why[256] = "";
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 0);
    cr_assert_eq(rule("regret-calibrated")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert(strncmp(why, "converged: the last 3 suggestions", 33) == 0, "%s", why);
    cr_assert(strstr(why, "its spread rescaled"), "%s", why);
    /* The EI condition is regret-ei's: a suggestion expecting 1.2% goes on. */
    t[11].ei_s = 0.06;
    cr_assert_eq(rule("regret-calibrated")->decide(t, 12, 0, why, sizeof why), 0);
}

Test(stoprule, regret_calibrated_goes_on_where_a_suggestion_is_less_known_than_those_before)
{
    /* Calibrated on trials whose band was +-1% and whose errors were about 0.01 (under a bias
     * of 0.11), a suggestion the model is twenty times less sure of is twenty times as wide
     * after the rescaling, and reaches below the best. */
    StopTrial t[12];
    fill(t, 12, 5.00, 4.95, 5.10, 0.001);
    for (size_t i = 1; i < 12; i++)
        t[i].time_s += i % 3 == 0 ? 0.005 : 0;
    char why[256];
    cr_assert_eq(rule("regret-calibrated")->decide(t, 12, 0, why, sizeof why), 1);
    t[10].p10_s = 4.00;
    t[10].p90_s = 6.00;
    cr_assert_eq(rule("regret-calibrated")->decide(t, 12, 0, why, sizeof why), 0);
    /* A trial that claimed no spread gives no scale to calibrate by: no decision on it. */
    fill(t, 12, 5.00, 4.95, 5.10, 0.001);
    t[7].p10_s = t[7].p90_s = 5.00;
    cr_assert_eq(rule("regret-calibrated")->decide(t, 12, 0, why, sizeof why), 0);
}

Test(stoprule, a_raised_budget_and_an_operators_trial_need_new_evidence)
{
    StopTrial t[12];
    fill(t, 12, 5.00, 4.95, 5.10, 0.1);
    char why[256];
    const char *names[] = {"ei-streak", "regret-bound", "regret-ei", "regret-calibrated"};
    for (size_t r = 0; r < 4; r++) {
        const StopRule *sr = rule(names[r]);
        if (!r)
            for (size_t i = 0; i < 12; i++)
                t[i].ei_s = 0.001;
        cr_assert_eq(sr->decide(t, 12, 0, why, sizeof why), 1, "%s", sr->name);
        /* Budget raised after trial 10: trials 11 and 12 are not a streak of 3. */
        cr_assert_eq(sr->decide(t, 12, 10, why, sizeof why), 0, "%s", sr->name);
        cr_assert_eq(sr->decide(t, 12, 9, why, sizeof why), 1, "%s", sr->name);
        /* The operator's schedule in the streak: not the optimizer's judgement. */
        t[11].own = 0;
        cr_assert_eq(sr->decide(t, 12, 0, why, sizeof why), 0, "%s", sr->name);
        t[11].own = 1;
    }
}

Test(stoprule, the_default_is_registered)
{
    size_t n;
    const StopRule *const *all = stoprule_all(&n);
    cr_assert_geq(n, 2);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= all[i] == stoprule_default();
    cr_assert(found);
    cr_assert_null(stoprule_find("no-such-rule"));
}

/* The help texts (tunedeck tune --help, :converge) print STOPRULE_REGRET_STREAK and
 * STOPRULE_REGRET_EI_FRACTION: they are the values regret-ei and the default decide by, and
 * regret-ei's summary (a literal, for the benchmark) says the same. */
Test(stoprule, the_exported_streak_and_ei_fraction_are_the_ones_regret_ei_uses)
{
    StopTrial t[12];
    char why[256] = "", text[64];
    /* The best is 5.00 s: an EI just under the fraction of it stops, just over does not. */
    fill(t, 12, 5.00, 4.95, 5.10, 0.99 * STOPRULE_REGRET_EI_FRACTION * 5.00);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 1);
    cr_assert_eq(stoprule_default()->decide(t, 12, 0, why, sizeof why), 1);
    snprintf(text, sizeof text, "the last %d suggestions", STOPRULE_REGRET_STREAK);
    cr_assert(strstr(why, text), "%s", why);
    /* The streak: a budget raised just before the last STOPRULE_REGRET_STREAK stops, one
     * more trial later does not. */
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 12 - STOPRULE_REGRET_STREAK, why, sizeof why), 1);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 13 - STOPRULE_REGRET_STREAK, why, sizeof why), 0);
    fill(t, 12, 5.00, 4.95, 5.10, 1.01 * STOPRULE_REGRET_EI_FRACTION * 5.00);
    cr_assert_eq(rule("regret-ei")->decide(t, 12, 0, why, sizeof why), 0);
    cr_assert_eq(stoprule_default()->decide(t, 12, 0, why, sizeof why), 0, "the default uses them");
    /* The summaries. */
    cr_assert(strstr(rule("regret-ei")->summary, text), "%s", rule("regret-ei")->summary);
    cr_assert(strstr(rule("regret-bound")->summary, text), "%s", rule("regret-bound")->summary);
    snprintf(text, sizeof text, "< %g%% gain", 100 * STOPRULE_REGRET_EI_FRACTION);
    cr_assert(strstr(rule("regret-ei")->summary, text), "%s", rule("regret-ei")->summary);
}
