/* A job file: what the optimizer tunes for (DESIGN §5.3). Unknown fields are kept. */
#ifndef TUNEDECK_JOB_H
#define TUNEDECK_JOB_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/model/allreduce.h"

typedef struct cJSON cJSON;

/* How workers combine gradients: through parameter servers (the schedule names PS roles), or
 * by an allreduce among the participating devices (no PS roles; DDP-style). */
typedef enum { JOB_SYNC_PS, JOB_SYNC_ALLREDUCE } JobSync;

typedef struct {
    char name[64];
    double model_mb;
    double mops;     /* millions of operations per input; 0 when not given */
    int batch;
    int iterations;  /* default 20 */
    int warmup;      /* default 10 */
    JobSync sync;    /* "sync": "ps" (default) or "allreduce" */
    AllreduceAlgo collective; /* allreduce jobs: "collective": "ring" (default) or "doubling" */
    cJSON *extra;    /* every other field, passed through to trials untouched */
} JobSpec;

int job_from_json(const cJSON *root, const char *source, JobSpec *out, Error *err);
int job_load(const char *path, JobSpec *out, Error *err);
cJSON *job_to_json(const JobSpec *j);
int job_copy(JobSpec *dst, const JobSpec *src);
void job_clear(JobSpec *j);
const char *job_sync_name(JobSync s);
/* The first field tunedeck does not read whose name is within edit distance 2 of one it does
 * (1 for keys of four bytes or fewer), with that key in *meant; NULL when none is. Such a
 * field is still passed to the trial: only a warning is due ("synch" left "sync" at its
 * default without a word). */
const char *job_misspelt_key(const JobSpec *j, const char **meant);
/* Its warning, as every reader of a job file gives it (nearkey_warning): "SOURCE: key 'synch'
 * is not one tunedeck reads; did you mean 'sync'?"; 1 when written, 0 when none. */
int job_misspelt_warning(const JobSpec *j, const char *source, char *out, size_t cap);

#endif
