/* Fuzzes the protocol v1 schedule reader (core/model/schedule.c, DESIGN §5.1) against setting B:
 * a schedule read is validated and written back; a valid one round-trips exactly. */
#include <cJSON.h>

#include "core/base/jdupkey.h"
#include "core/model/schedule.h"
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
    const Cluster *c = simcluster_cluster(fuzz_sim());
    Error err;
    Schedule *s = schedule_from_json(root, c, "stdin", &err);
    if (!s) {
        if (!err.msg[0])
            abort();
    } else {
        int valid = schedule_validate(s, &err) == 0;
        cJSON *out = schedule_to_json(s);
        if (jdupkey_check(out, NULL) < 0)
            abort(); /* what we write, every reader must take */
        Schedule *back = schedule_from_json(out, c, "round trip", &err);
        if (!back || (valid && !schedule_equal(s, back)))
            abort();
        schedule_free(back);
        cJSON_Delete(out);
        schedule_free(s);
    }
    cJSON_Delete(root);
    return 0;
}
