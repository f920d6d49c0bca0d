/* Fuzzes the cluster inventory reader (core/model/cluster_parse.c, DESIGN §5.2): any input either fails
 * with a message or gives a cluster that writes out and reads back the same. */
#include <cJSON.h>

#include "core/base/jdupkey.h"
#include "core/model/cluster.h"
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
    Cluster *c = cluster_from_json(root, "fuzz.json", &err);
    if (!c) {
        if (!err.msg[0])
            abort(); /* a refusal must say why */
    } else {
        cJSON *out = cluster_to_json(c);
        if (jdupkey_check(out, NULL) < 0)
            abort(); /* what we write, every reader must take */
        Cluster *back = cluster_from_json(out, "round trip", &err);
        if (!back || back->n_machines != c->n_machines || back->n_devices != c->n_devices)
            abort(); /* what we write, we must read */
        cluster_free(back);
        cJSON_Delete(out);
        cluster_free(c);
    }
    cJSON_Delete(root);
    return 0;
}
