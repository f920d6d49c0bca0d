/* The options, session records and results file of the trial-table benchmarks
 * (benchtrials.h). */
#include "bench/args/benchtrials.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench/args/benchargs.h"
#include "core/base/jsonfile.h"

const size_t BENCHTRIALS_SIZES[] = {1000, 5000, 20000};
#define NSIZES (int)(sizeof BENCHTRIALS_SIZES / sizeof BENCHTRIALS_SIZES[0])

static void records_free(BenchTrials *t)
{
    for (size_t i = 0; t->recs && i < t->n; i++) {
        observation_free(t->recs[i].obs);
        schedule_free(t->recs[i].suggestion.schedule);
    }
    free(t->recs);
    free(t->ptr);
    if (t->sim)
        simcluster_free(t->sim);
    *t = (BenchTrials){0};
}

int benchtrials_start(const char *who, int argc, char **argv,
                      void (*finish)(TrialRecord *r, size_t i), BenchTrials *out)
{
    *out = (BenchTrials){0};
    int quick;
    if (benchargs_out_quick(who, argc, argv, &out->out, &quick) < 0)
        return 2;
    out->sizes = quick ? NSIZES - 1 : NSIZES;
    size_t n = BENCHTRIALS_SIZES[out->sizes - 1] + BENCHTRIALS_EVENTS / 2;
    Error e;
    out->sim = simcluster_new("B:googlenet", &e);
    if (!out->sim) {
        fprintf(stderr, "%s: %s\n", who, e.msg);
        return 1;
    }
    out->recs = calloc(n, sizeof *out->recs);
    out->ptr = calloc(n, sizeof *out->ptr);
    if (!out->recs || !out->ptr) {
        fprintf(stderr, "%s: out of memory\n", who);
        records_free(out);
        return 1;
    }
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        TrialRecord *r = &out->recs[i];
        r->trial = (int)i + 1;
        r->suggestion.schedule =
            schedule_new(simcluster_cluster(out->sim), simcluster_job(out->sim));
        finish(r, i);
        out->ptr[i] = r;
    }
    return 0;
}

void benchtrials_outcome(TrialRecord *r, size_t i)
{
    r->obs = observation_new(r->suggestion.schedule);
    r->obs->status = i % 7 == 3 ? TRIAL_FAILED : TRIAL_OK;
    r->obs->time_s = 5.0 + (double)((i * 7919) % 1000) / 100.0;
}

void benchtrials_unrun(BenchTrials *t, size_t n)
{
    for (size_t i = n; i < n + BENCHTRIALS_EVENTS / 2 && i < t->n; i++) {
        observation_free(t->recs[i].obs);
        t->recs[i].obs = NULL;
    }
}

int benchtrials_end(const char *who, BenchTrials *t, cJSON *res, int rc)
{
    if (rc == 0 && t->out) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "bench", who);
        cJSON_AddItemToObject(doc, "results", res);
        res = NULL;
        Error e;
        if (jsonfile_write(t->out, doc, &e) < 0) {
            fprintf(stderr, "%s: %s\n", who, e.msg);
            rc = 1;
        }
        cJSON_Delete(doc);
    }
    cJSON_Delete(res);
    records_free(t);
    return rc;
}
