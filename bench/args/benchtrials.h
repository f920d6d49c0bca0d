/* What the trial-table benchmarks (bench/trialtable, bench/consolescale) share: the records
 * of a long simulated session, and their results written as {"bench": WHO, "results": [...]}. */
#ifndef TUNEDECK_BENCHTRIALS_H
#define TUNEDECK_BENCHTRIALS_H

#include <cJSON.h>
#include <stddef.h>

#include "core/sim/simcluster.h"
#include "tui/trials.h"

/* n trials of B:googlenet, trial i numbered i + 1 with its schedule and the outcome
 * finish(record, i) gives it, and a pointer to each as the table takes them. */
typedef struct {
    SimCluster *sim;
    TrialRecord *recs;
    const TrialRecord **ptr;
    size_t n;
} BenchTrials;

/* 0, or -1 after printing "WHO: WHY". */
int benchtrials_make(const char *who, size_t n, void (*finish)(TrialRecord *r, size_t i),
                     BenchTrials *out);
void benchtrials_free(BenchTrials *t);


/* Writes {"bench": who, "results": res} to out (nothing when out is NULL) and frees res;
 * 0, or -1 after printing "WHO: WHY". */
int benchtrials_write(const char *who, const char *out, cJSON *res);

#endif
