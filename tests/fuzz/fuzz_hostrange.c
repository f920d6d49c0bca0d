/* Fuzzes host range expansion (core/model/hostrange.c): a pattern expands within HOSTRANGE_MAX
 * names or fails with a reason. */
#include "core/model/hostrange.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *pattern = fuzz_cstring(data, size);
    char **names;
    size_t n;
    Error err;
    if (hostrange_expand(pattern, &names, &n, &err) == 0) {
        if (n == 0 || n > HOSTRANGE_MAX)
            abort();
        hostrange_free(names, n);
    } else if (!err.msg[0] || names) {
        abort();
    }
    free(pattern);
    return 0;
}
