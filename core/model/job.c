/* Job files: the model and batch the optimizer tunes for; unknown fields ride along. */
#include "core/model/job.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/base/jfield.h"
#include "core/base/nearkey.h"

static const char *const KNOWN[] = {"name", "model_mb", "mops", "batch", "iterations", "warmup",
                                    "sync", "collective", NULL};

static int known(const char *key)
{
    for (const char *const *k = KNOWN; *k; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

const char *job_misspelt_key(const JobSpec *j, const char **meant)
{
    return nearkey_find(j->extra, KNOWN, meant);
}

int job_misspelt_warning(const JobSpec *j, const char *source, char *out, size_t cap)
{
    return nearkey_warning(j->extra, KNOWN, source, out, cap);
}

const char *job_sync_name(JobSync s)
{
    return s == JOB_SYNC_ALLREDUCE ? "allreduce" : "ps";
}

/* "sync" picks the schedule's shape; "collective" only means something for allreduce, so
 * giving it to a PS job is refused rather than silently ignored. */
static int parse_sync(const cJSON *root, const char *source, JobSpec *out, Error *err)
{
    char sync[32] = "ps", coll[32] = "";
    if (jfield_string(root, source, "sync", 0, sync, sizeof sync, err) < 0 ||
        jfield_string(root, source, "collective", 0, coll, sizeof coll, err) < 0)
        return -1;
    if (strcmp(sync, "ps") == 0)
        out->sync = JOB_SYNC_PS;
    else if (strcmp(sync, "allreduce") == 0)
        out->sync = JOB_SYNC_ALLREDUCE;
    else
        return error_set(err, "%s: field 'sync': expected \"ps\" or \"allreduce\", found \"%s\"",
                         source, sync);
    out->collective = ALLREDUCE_RING;
    if (!coll[0])
        return 0;
    if (out->sync != JOB_SYNC_ALLREDUCE)
        return error_set(err,
                         "%s: field 'collective': only an allreduce job (\"sync\": "
                         "\"allreduce\") has one, found \"%s\" on a parameter-server job",
                         source, coll);
    if (strcmp(coll, "ring") == 0)
        out->collective = ALLREDUCE_RING;
    else if (strcmp(coll, "doubling") == 0)
        out->collective = ALLREDUCE_DOUBLING;
    else
        return error_set(err,
                         "%s: field 'collective': expected \"ring\" or \"doubling\", found \"%s\"",
                         source, coll);
    return 0;
}

static int job_parse(const cJSON *root, const char *source, JobSpec *out, Error *err)
{
    memset(out, 0, sizeof *out);
    out->iterations = 20;
    out->warmup = 10;
    if (!cJSON_IsObject(root))
        return error_set(err, "%s: expected a JSON object, found %s", source,
                         jfield_type_name(root));
    if (jfield_string(root, source, "name", 1, out->name, sizeof out->name, err) < 0 ||
        jfield_number(root, source, "model_mb", 1, 1e-6, 1e7, &out->model_mb, err) < 0 ||
        jfield_number(root, source, "mops", 0, 1e-9, 1e12, &out->mops, err) < 0 ||
        jfield_int(root, source, "batch", 1, 1, 100000000, &out->batch, err) < 0 ||
        jfield_int(root, source, "iterations", 0, 1, 1000000, &out->iterations, err) < 0 ||
        jfield_int(root, source, "warmup", 0, 0, 1000000, &out->warmup, err) < 0)
        return -1;
    if (out->warmup >= out->iterations && !cJSON_HasObjectItem(root, "warmup"))
        /* the file never said 10: name the default, or the message points at nothing */
        return error_set(err,
                         "%s: field 'warmup': absent, and its default (%d) is not fewer than "
                         "the %d iterations; give \"warmup\" below %d",
                         source, out->warmup, out->iterations, out->iterations);
    if (out->warmup >= out->iterations)
        return error_set(err,
                         "%s: field 'warmup': expected fewer warm-up iterations than the %d "
                         "iterations, found %d",
                         source, out->iterations, out->warmup);
    if (parse_sync(root, source, out, err) < 0)
        return -1;
    const cJSON *f;
    cJSON_ArrayForEach(f, root)
    {
        if (known(f->string))
            continue;
        if (!out->extra)
            out->extra = cJSON_CreateObject();
        cJSON_AddItemToObject(out->extra, f->string, cJSON_Duplicate(f, 1));
    }
    return 0;
}

/* Every failure is a bad job file (or journal entry): marked ERROR_INPUT for main. */
int job_from_json(const cJSON *root, const char *source, JobSpec *out, Error *err)
{
    return job_parse(root, source, out, err) < 0 ? error_mark(err, ERROR_INPUT) : 0;
}

int job_load(const char *path, JobSpec *out, Error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = jfield_parse_file(path, err);
    if (!root)
        return error_mark(err, ERROR_INPUT);
    int rc = job_from_json(root, path, out, err);
    /* Only a job file must name its job: a journal or a trial's schedule with an empty name
     * (older tunedeck took one) still reads, so what was measured stays resumable. */
    if (rc == 0 && !out->name[0]) {
        error_set(err, "%s: field 'name': expected the job's name, found \"\"", path);
        rc = error_mark(err, ERROR_INPUT);
    }
    cJSON_Delete(root);
    if (rc < 0)
        job_clear(out);
    return rc;
}

cJSON *job_to_json(const JobSpec *j)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", j->name);
    cJSON_AddNumberToObject(o, "model_mb", j->model_mb);
    if (j->mops > 0)
        cJSON_AddNumberToObject(o, "mops", j->mops);
    cJSON_AddNumberToObject(o, "batch", j->batch);
    cJSON_AddNumberToObject(o, "iterations", j->iterations);
    cJSON_AddNumberToObject(o, "warmup", j->warmup);
    if (j->sync == JOB_SYNC_ALLREDUCE) {
        cJSON_AddStringToObject(o, "sync", "allreduce");
        cJSON_AddStringToObject(o, "collective", allreduce_name(j->collective));
    }
    const cJSON *f;
    if (j->extra)
        cJSON_ArrayForEach(f, j->extra) cJSON_AddItemToObject(o, f->string,
                                                              cJSON_Duplicate(f, 1));
    return o;
}

int job_copy(JobSpec *dst, const JobSpec *src)
{
    *dst = *src;
    dst->extra = src->extra ? cJSON_Duplicate(src->extra, 1) : NULL;
    return 0;
}

void job_clear(JobSpec *j)
{
    if (!j)
        return;
    cJSON_Delete(j->extra);
    j->extra = NULL;
}
