/* What the trial-table benchmarks (bench/trialtable, bench/consolescale) share: their options
 * and sizes, the records of a long simulated session, and their results written as
 * {"bench": WHO, "results": [...]}. */
#ifndef TUNEDECK_BENCHTRIALS_H
#define TUNEDECK_BENCHTRIALS_H

#include <cJSON.h>
#include <stddef.h>

#include "core/sim/simcluster.h"
#include "tui/trials.h"

/* The session lengths measured: 1,000, 5,000 and 20,000 trials (the simulator at
 * --pace-ms 0 runs 20,000 in ten minutes); --quick stops before the last. */
extern const size_t BENCHTRIALS_SIZES[];
/* The trial events timed past each length: EVENTS / 2 trials, each started then finished. */
enum { BENCHTRIALS_EVENTS = 200 };

/* Trial i numbered i + 1 with its schedule (B:googlenet) and the outcome finish(record, i)
 * gives it, and a pointer to each as the table takes them: as many as the largest length
 * measured and its events need. */
typedef struct {
    SimCluster *sim;
    TrialRecord *recs;
    const TrialRecord **ptr;
    size_t n;
    int sizes;       /* how many of BENCHTRIALS_SIZES this run measures */
    const char *out; /* --out FILE.json, or NULL */
} BenchTrials;

/* Reads argv as "[--out FILE.json] [--quick]" (benchargs_out_quick) and makes the records.
 * 0; 2 for a usage fault, 1 for another, after printing "WHO: WHY" (the exit status). */
int benchtrials_start(const char *who, int argc, char **argv,
                      void (*finish)(TrialRecord *r, size_t i), BenchTrials *out);

/* Trial i's outcome as both benchmarks give it: ok with a time that wanders (a new best now
 * and then), every 7th failed. Its prediction is each benchmark's own. */
void benchtrials_outcome(TrialRecord *r, size_t i);

/* The events' trials past the first n are not run yet: their outcomes go. */
void benchtrials_unrun(BenchTrials *t, size_t n);

/* The run's end: with rc 0, writes {"bench": who, "results": res} to t->out (nothing when
 * NULL); frees res and the records. Returns the exit status: rc, or 1 when the write fails
 * (after printing "WHO: WHY"). */
int benchtrials_end(const char *who, BenchTrials *t, cJSON *res, int rc);

#endif
