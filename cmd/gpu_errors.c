/* The GPUs in error of a `tunedeck hosts` row, whole entries then a count (gpu_errors.h). */
#include "cmd/gpu_errors.h"

#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/termsafe.h"

/* Room kept for "; and N more" while an entry that may not fit follows. */
enum { MORE_MAX = 32 };

static int in_error(const cJSON *gpu)
{
    return cJSON_IsString(cJSON_GetObjectItem(gpu, "error"));
}

const char *gpu_errors_text(const cJSON *gpu_list, char *out, size_t cap)
{
    size_t total = 0, shown = 0, len = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, gpu_list) total += (size_t)in_error(o);
    out[0] = 0;
    cJSON_ArrayForEach(o, gpu_list)
    {
        if (!in_error(o))
            continue;
        const cJSON *i = cJSON_GetObjectItem(o, "index");
        char index[16] = "?", entry[ERROR_MSG_MAX + 64];
        /* made harmless here, not by the row's termsafe after: that one would cut it again,
         * an escaped byte taking up to four */
        char safe[4 * sizeof entry];
        if (cJSON_IsNumber(i))
            snprintf(index, sizeof index, "%d", i->valueint);
        snprintf(entry, sizeof entry, "GPU %s: error (%s)", index,
                 cJSON_GetObjectItem(o, "error")->valuestring);
        size_t need = termsafe(safe, sizeof safe, entry) + (shown ? 2 : 0);
        size_t keep = shown + 1 < total ? MORE_MAX : 0;
        if (len + need + keep >= cap)
            break;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", shown ? "; " : "", safe);
        shown++;
    }
    if (shown < total && shown)
        snprintf(out + len, cap - len, "; and %zu more", total - shown);
    else if (shown < total)
        snprintf(out, cap, "%zu GPUs in error", total);
    return out;
}
