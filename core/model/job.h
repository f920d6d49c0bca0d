/* A job file: what the optimizer tunes for (DESIGN §5.3). Unknown fields are kept. */
#ifndef TUNEDECK_JOB_H
#define TUNEDECK_JOB_H

#include "core/base/error.h"

typedef struct cJSON cJSON;

typedef struct {
    char name[64];
    double model_mb;
    double mops;     /* millions of operations per input; 0 when not given */
    int batch;
    int iterations;  /* default 20 */
    int warmup;      /* default 10 */
    cJSON *extra;    /* every other field, passed through to trials untouched */
} JobSpec;

int job_from_json(const cJSON *root, const char *source, JobSpec *out, Error *err);
int job_load(const char *path, JobSpec *out, Error *err);
cJSON *job_to_json(const JobSpec *j);
int job_copy(JobSpec *dst, const JobSpec *src);
void job_clear(JobSpec *j);

#endif
