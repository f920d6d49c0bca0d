/* Fuzzes the cluster a trial command rebuilds from its protocol v1 schedule
 * (core/model/schedule_cluster.c), then the schedule itself against that cluster. */
#include <cJSON.h>

#include "core/base/jdupkey.h"
#include "core/model/schedule.h"
#include "core/model/schedule_cluster.h"
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
    Cluster *c = schedule_cluster_from_json(root, "stdin", &err);
    if (c) {
        Schedule *s = schedule_from_json(root, c, "stdin", &err);
        if (s) {
            schedule_validate(s, &err);
            cJSON *out = schedule_to_json(s);
            if (jdupkey_check(out, NULL) < 0)
                abort(); /* what we write, every reader must take */
            cJSON_Delete(out);
            schedule_free(s);
        }
        cluster_free(c);
    } else if (!err.msg[0]) {
        abort();
    }
    cJSON_Delete(root);
    return 0;
}
