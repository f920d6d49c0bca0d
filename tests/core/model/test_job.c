#include <criterion/criterion.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model/job.h"

static int parse(const char *text, JobSpec *j, Error *err)
{
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    int rc = job_from_json(root, "job.json", j, err);
    cJSON_Delete(root);
    return rc;
}

Test(job, parses_fields_defaults_and_keeps_unknown_ones)
{
    JobSpec j;
    Error err;
    cr_assert_eq(parse("{\"name\": \"resnet\", \"model_mb\": 97.5, \"batch\": 256, "
                       "\"lr\": 0.1, \"data\": {\"path\": \"/d\"}}",
                       &j, &err),
                 0, "%s", err.msg);
    cr_assert_str_eq(j.name, "resnet");
    cr_assert_float_eq(j.model_mb, 97.5, 1e-12);
    cr_assert_eq(j.batch, 256);
    cr_assert_eq(j.iterations, 20);
    cr_assert_eq(j.warmup, 10);
    cr_assert_float_eq(j.mops, 0.0, 0);
    cJSON *out = job_to_json(&j);
    cr_assert_float_eq(cJSON_GetObjectItem(out, "lr")->valuedouble, 0.1, 1e-12);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "data"), "path")->valuestring,
                     "/d");
    JobSpec k;
    cr_assert_eq(job_from_json(out, "again", &k, &err), 0, "%s", err.msg);
    cJSON *out2 = job_to_json(&k);
    cr_assert(cJSON_Compare(out, out2, 1), "round trip must be exact");
    JobSpec copy;
    cr_assert_eq(job_copy(&copy, &k), 0);
    cr_assert_str_eq(copy.name, "resnet");
    cJSON_Delete(out);
    cJSON_Delete(out2);
    job_clear(&j);
    job_clear(&k);
    job_clear(&copy);
}

static void rejects(const char *text, const char *needle)
{
    JobSpec j;
    Error err = {0};
    cr_assert_eq(parse(text, &j, &err), -1, "expected rejection: %s", needle);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert(strstr(err.msg, "job.json"), "message '%s' lacks the file", err.msg);
}

Test(job, rejects_every_bad_field)
{
    rejects("{\"model_mb\": 1, \"batch\": 8}", "field 'name'");
    rejects("{\"name\": \"x\", \"batch\": 8}", "field 'model_mb'");
    rejects("{\"name\": \"x\", \"model_mb\": -1, \"batch\": 8}", "field 'model_mb'");
    rejects("{\"name\": \"x\", \"model_mb\": 1}", "field 'batch'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 0}", "field 'batch'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 2.5}", "field 'batch'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": \"8\"}", "found a string");
    rejects("{\"name\": 3, \"model_mb\": 1, \"batch\": 8}", "field 'name'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"iterations\": 0}",
            "field 'iterations'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"iterations\": 5, \"warmup\": 5}",
            "warmup");
    /* iterations 3 and no warmup: the default 10 is named, not 'found 10' */
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"iterations\": 3}",
            "field 'warmup': absent, and its default (10) is not fewer than the 3 iterations");
    rejects("[1]", "expected a JSON object");
}

Test(job, example_job_loads)
{
    JobSpec j;
    Error err;
    cr_assert_eq(job_load(TUNEDECK_SOURCE_DIR "/examples/small-job.json", &j, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(j.batch, 256);
    job_clear(&j);
    cr_assert_eq(job_load("missing-job.json", &j, &err), -1);
    cr_assert(strstr(err.msg, "missing-job.json"));
}

Test(job, sync_defaults_to_ps_and_round_trips_allreduce)
{
    JobSpec j;
    Error err;
    cr_assert_eq(parse("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8}", &j, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(j.sync, JOB_SYNC_PS);
    cJSON *out = job_to_json(&j);
    cr_assert_null(cJSON_GetObjectItem(out, "sync"), "a PS job prints as before");
    cJSON_Delete(out);
    job_clear(&j);

    cr_assert_eq(parse("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"sync\": \"allreduce\"}",
                       &j, &err),
                 0, "%s", err.msg);
    cr_assert_eq(j.sync, JOB_SYNC_ALLREDUCE);
    cr_assert_eq(j.collective, ALLREDUCE_RING);
    cr_assert_null(j.extra, "sync is a known field, not passed through twice");
    job_clear(&j);

    cr_assert_eq(parse("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"sync\": \"allreduce\", "
                       "\"collective\": \"doubling\"}",
                       &j, &err),
                 0, "%s", err.msg);
    cr_assert_eq(j.collective, ALLREDUCE_DOUBLING);
    out = job_to_json(&j);
    cr_assert_str_eq(cJSON_GetObjectItem(out, "sync")->valuestring, "allreduce");
    cr_assert_str_eq(cJSON_GetObjectItem(out, "collective")->valuestring, "doubling");
    JobSpec k;
    cr_assert_eq(job_from_json(out, "again", &k, &err), 0, "%s", err.msg);
    cr_assert_eq(k.sync, JOB_SYNC_ALLREDUCE);
    cr_assert_eq(k.collective, ALLREDUCE_DOUBLING);
    cJSON_Delete(out);
    job_clear(&j);
    job_clear(&k);
}

Test(job, rejects_bad_sync_and_collective)
{
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"sync\": \"nccl\"}",
            "field 'sync': expected \"ps\" or \"allreduce\", found \"nccl\"");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"sync\": 1}", "field 'sync'");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"sync\": \"allreduce\", "
            "\"collective\": \"tree\"}",
            "field 'collective': expected \"ring\" or \"doubling\", found \"tree\"");
    rejects("{\"name\": \"x\", \"model_mb\": 1, \"batch\": 8, \"collective\": \"ring\"}",
            "field 'collective': only an allreduce job");
}

Test(job, a_missing_or_bad_job_file_is_marked_as_bad_input)
{
    Error e;
    JobSpec j;
    cr_assert_eq(job_load("/nonexistent/job.json", &j, &e), -1);
    cr_assert_eq(e.kind, ERROR_INPUT, "%s", e.msg);
    cJSON *bad = cJSON_Parse("{\"name\": \"j\", \"model_mb\": 1, \"batch\": 0}");
    cr_assert_eq(job_from_json(bad, "x.json", &j, &e), -1);
    cr_assert_eq(e.kind, ERROR_INPUT, "%s", e.msg);
    cJSON_Delete(bad);
}

Test(job, a_job_file_with_an_empty_name_is_refused_a_journal_job_is_not)
{
    char path[] = "/tmp/td-job-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char TEXT[] = "{\"name\": \"\", \"model_mb\": 1, \"batch\": 8}";
    cr_assert_eq(write(fd, TEXT, sizeof TEXT - 1), (ssize_t)(sizeof TEXT - 1));
    close(fd);
    JobSpec j;
    Error e;
    cr_assert_eq(job_load(path, &j, &e), -1);
    cr_assert(strstr(e.msg, path) && strstr(e.msg, "field 'name': expected the job's name"), "%s",
              e.msg);
    cr_assert_eq(e.kind, ERROR_INPUT);
    unlink(path);
    /* what an older session journalled still reads */
    cJSON *old = cJSON_Parse(TEXT);
    cr_assert_eq(job_from_json(old, "journal", &j, &e), 0, "%s", e.msg);
    job_clear(&j);
    cJSON_Delete(old);
}

Test(job, a_job_file_with_a_key_twice_is_refused_naming_the_key)
{
    char path[] = "/tmp/td-job-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    /* the batch pasted again and edited: cJSON alone would read 8 */
    static const char TEXT[] = "{\"name\": \"j\", \"model_mb\": 1, \"batch\": 8, \"batch\": 64}";
    cr_assert_eq(write(fd, TEXT, sizeof TEXT - 1), (ssize_t)(sizeof TEXT - 1));
    close(fd);
    JobSpec j;
    Error e;
    cr_assert_eq(job_load(path, &j, &e), -1);
    char want[256];
    snprintf(want, sizeof want, "%s: key \"batch\" appears twice; expected each key once per object",
             path);
    cr_assert_str_eq(e.msg, want);
    cr_assert_eq(e.kind, ERROR_INPUT);
    unlink(path);
}

/* "synch" for "sync" was passed to the trial and "sync" left at its default without a word:
 * the key is still kept, and named with the key it most likely meant. */
Test(job, a_misspelt_key_is_kept_and_named_with_the_key_meant)
{
    static const struct {
        const char *key, *meant;
    } cases[] = {{"synch", "sync"},           {"iteration", "iterations"},
                 {"Batch", "batch"},          {"wramup", "warmup"},
                 {"colective", "collective"}, {"model_MB", "model_mb"},
                 {"learning_rate", NULL},     {"mode", NULL},
                 {"seed", NULL},              {"optimizer", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"name\": \"j\", \"model_mb\": 1, \"batch\": 8, \"%s\": 1}",
                 cases[i].key);
        cJSON *root = cJSON_Parse(text);
        JobSpec j;
        Error err;
        cr_assert_eq(job_from_json(root, "job.json", &j, &err), 0, "%s", err.msg);
        cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(j.extra, cases[i].key));
        const char *meant = NULL, *key = job_misspelt_key(&j, &meant);
        if (cases[i].meant) {
            cr_assert_str_eq(key, cases[i].key);
            cr_assert_str_eq(meant, cases[i].meant, "%s", cases[i].key);
        } else {
            cr_assert_null(key, "%s warned as %s", cases[i].key, meant);
        }
        job_clear(&j);
        cJSON_Delete(root);
    }
}
