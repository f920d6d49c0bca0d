/* The session records and the results file of the trial-table benchmarks (benchtrials.h). */
#include "bench/args/benchtrials.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/base/jsonfile.h"

int benchtrials_make(const char *who, size_t n, void (*finish)(TrialRecord *r, size_t i),
                     BenchTrials *out)
{
    Error e;
    *out = (BenchTrials){0};
    out->sim = simcluster_new("B:googlenet", &e);
    if (!out->sim) {
        fprintf(stderr, "%s: %s\n", who, e.msg);
        return -1;
    }
    out->recs = calloc(n, sizeof *out->recs);
    out->ptr = calloc(n, sizeof *out->ptr);
    if (!out->recs || !out->ptr) {
        fprintf(stderr, "%s: out of memory\n", who);
        benchtrials_free(out);
        return -1;
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

void benchtrials_free(BenchTrials *t)
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

int benchtrials_write(const char *who, const char *out, cJSON *res)
{
    if (!out) {
        cJSON_Delete(res);
        return 0;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "bench", who);
    cJSON_AddItemToObject(doc, "results", res);
    Error e;
    int rc = jsonfile_write(out, doc, &e);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", who, e.msg);
    cJSON_Delete(doc);
    return rc < 0 ? -1 : 0;
}
