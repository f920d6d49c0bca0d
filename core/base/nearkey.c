/* Keys one slip from a known one, and the warning every reader gives for them
 * (core/base/nearkey.h). */
#include "core/base/nearkey.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/base/termsafe.h"

/* Edit distance (insertions, deletions, substitutions, swaps of neighbours), stopping at
 * 3: only "close or not" is asked. Keys longer than 63 bytes are never close. */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63 || (n > m ? n - m : m - n) > 2)
        return 3;
    int d[64][64];
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= m; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = (int)(i + j);
                continue;
            }
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int best = sub < del ? sub : del;
            best = best < ins ? best : ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m] < 3 ? d[n][m] : 3;
}

static int is_known(const char *key, const char *const *known)
{
    for (const char *const *k = known; *k; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

const char *nearkey_find(const cJSON *obj, const char *const *known, const char **meant)
{
    const cJSON *f;
    if (!cJSON_IsObject(obj))
        return NULL;
    cJSON_ArrayForEach(f, obj)
    {
        if (!f->string || is_known(f->string, known))
            continue;
        for (const char *const *k = known; *k; k++) {
            int most = strlen(*k) <= 4 ? 1 : 2;
            int d = edit_distance(f->string, *k);
            if (d >= 1 && d <= most) {
                *meant = *k;
                return f->string;
            }
        }
    }
    return NULL;
}

int nearkey_warning(const cJSON *obj, const char *const *known, const char *source, char *out,
                    size_t cap)
{
    const char *meant = NULL, *key = nearkey_find(obj, known, &meant);
    if (cap)
        out[0] = 0;
    if (!key)
        return 0;
    char safe[256];
    termsafe(safe, sizeof safe, key); /* "\u001b" in a key is read as an escape */
    snprintf(out, cap, "%s: key '%s' is not one tunedeck reads; did you mean '%s'?", source, safe,
             meant);
    return 1;
}
