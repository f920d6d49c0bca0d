/* Fuzzes the duplicate-key check (core/base/jdupkey.c) that every reader runs first: it finds
 * a key twice exactly when comparing every pair of keys of every object does, and its message
 * names a key that is in the document. */
#include <cJSON.h>

#include "core/base/jdupkey.h"
#include "tests/fuzz/fuzz_common.h"

/* The obvious quadratic check, as the reference. */
static int has_dup(const cJSON *node)
{
    for (const cJSON *a = node->child; a; a = a->next) {
        if (cJSON_IsObject(node))
            for (const cJSON *b = a->next; b; b = b->next)
                if (strcmp(a->string, b->string) == 0)
                    return 1;
        if ((cJSON_IsObject(a) || cJSON_IsArray(a)) && has_dup(a))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!root)
        return 0;
    Error err = {0};
    int rc = jdupkey_check(root, &err);
    if ((rc < 0) != has_dup(root))
        abort(); /* a duplicate missed, or one made up */
    if (rc < 0 && !strstr(err.msg, "\" appears "))
        abort(); /* a refusal must name the key */
    cJSON_Delete(root);
    return 0;
}
