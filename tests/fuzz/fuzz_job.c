/* Fuzzes the job file reader (core/model/job.c, DESIGN §5.3): refuse with a reason or round-trip. */
#include <cJSON.h>

#include "core/base/jdupkey.h"
#include "core/model/job.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!root)
        return 0;
    Error dup;
    if (jdupkey_check(root, &dup) < 0) { /* every loader refuses it before the reader sees it */
        if (!dup.msg[0])
            abort();
        cJSON_Delete(root);
        return 0;
    }
    Error err;
    JobSpec job;
    if (job_from_json(root, "job.json", &job, &err) < 0) {
        if (!err.msg[0])
            abort();
    } else {
        cJSON *out = job_to_json(&job);
        if (jdupkey_check(out, NULL) < 0)
            abort(); /* what we write, every reader must take */
        JobSpec back;
        if (job_from_json(out, "round trip", &back, &err) < 0 || back.batch != job.batch ||
            back.iterations != job.iterations || strcmp(back.name, job.name) != 0)
            abort();
        job_clear(&back);
        cJSON_Delete(out);
        job_clear(&job);
    }
    cJSON_Delete(root);
    return 0;
}
