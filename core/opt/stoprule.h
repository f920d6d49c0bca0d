/* When tuning has converged (docs/optimizer.md "The stop rule"): from what each suggestion
 * predicted and what each trial measured, whether one more trial is worth its cost. Pure, so a
 * resumed session re-derives the decision from the replayed suggestions; rules by name. */
#ifndef TUNEDECK_STOPRULE_H
#define TUNEDECK_STOPRULE_H

#include <stddef.h>

/* One trial as the stop rule sees it. */
typedef struct {
    int own;    /* the optimizer's suggestion, not the operator's */
    int has_ei; /* the suggestion said what it expected to gain */
    double ei_s;
    int has_prediction; /* mean and spread of the predicted iteration time */
    double mean_s, p10_s, p90_s;
    int ok; /* measured to its end; time_s its mean iteration time */
    double time_s;
} StopTrial;

/* decide: 1 when tuning should stop before a trial n+1, given trials [0, n); only trials from
 * `from` on count as evidence for stopping (the budget was raised at `from`: the session must
 * earn a new stop), earlier ones may inform estimates. why (cap bytes) says why on 1. */
typedef struct {
    const char *name;
    const char *summary;
    int (*decide)(const StopTrial *t, size_t n, size_t from, char *why, size_t cap);
} StopRule;

/* regret-bound and regret-ei judge the last STOPRULE_REGRET_STREAK suggestions; regret-ei also
 * asks each to expect less than STOPRULE_REGRET_EI_FRACTION of the best time. Exported for the
 * help texts that describe the default rule (remote/launch/tuner.h). */
#define STOPRULE_REGRET_STREAK 3
#define STOPRULE_REGRET_EI_FRACTION 0.01

const StopRule *stoprule_find(const char *name);
/* The rule sessions use. */
const StopRule *stoprule_default(void);
/* The registered rules, for the benchmark: *n set to their count. */
const StopRule *const *stoprule_all(size_t *n);

#endif
