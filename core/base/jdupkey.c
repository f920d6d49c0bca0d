/* Finds the first object of a cJSON tree that holds a key twice, and names the path to it. */
#include "core/base/jdupkey.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

/* Error holds 512 bytes and the caller adds its source: the path and the key are bounded
 * (a key by its first bytes, a path by its first levels, each cut marked "...") and made
 * terminal-safe here, where a byte shown as \xHH takes four, so the key is never crowded out
 * of the message. */
#define PATH_MAX_CHARS 200
#define KEY_SHOWN_BYTES 48 /* of a key in the message: at most 4 * 48 + 3 characters */
#define STEP_SHOWN_BYTES 24 /* of a key as one step of the path */

typedef struct {
    const char *key;
    size_t index; /* its place among the object's members, so the earliest copy sorts first */
} Member;

typedef struct {
    /* Reused for every object; on the heap only past the common sizes, so that checking a
     * journal line or an inventory allocates nothing that could fail. */
    Member local[32];
    Member *scratch;
    size_t cap;
    char path[PATH_MAX_CHARS];
    int cut; /* the path ends in "..." and names no deeper level */
    Error *err;
} Walk;

/* At most max_raw bytes of `in`, terminal-safe, "..." when cut; out holds 4 * max_raw + 4. */
static void shown(char *out, size_t cap, const char *in, size_t max_raw)
{
    size_t n = strlen(in), cut = n > max_raw;
    size_t len = termsafe_n(out, cap, in, cut ? max_raw : n);
    if (cut && len + 4 <= cap)
        memcpy(out + len, "...", 4);
}

static int by_key_then_place(const void *a, const void *b)
{
    const Member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Sorting the keys finds the duplicates of an object in O(k log k): an object of a million
 * keys in a trial's output line must not cost a million squared comparisons. */
static int check_object(Walk *w, const cJSON *obj)
{
    size_t k = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        k++;
    if (k < 2)
        return 0;
    if (k > w->cap) {
        Member *grown = realloc(w->scratch == w->local ? NULL : w->scratch, k * sizeof *grown);
        if (!grown)
            return error_no_memory(w->err, "checking for duplicate keys");
        w->scratch = grown;
        w->cap = k;
    }
    size_t i = 0;
    for (const cJSON *c = obj->child; c; c = c->next, i++)
        w->scratch[i] = (Member){c->string ? c->string : "", i};
    qsort(w->scratch, k, sizeof *w->scratch, by_key_then_place);
    /* In each run of one key, its second copy is what makes it a duplicate: report the key
     * whose second copy comes first, the one a reader meets first. */
    const char *key = NULL;
    size_t second = k, copies = 0;
    for (size_t r = 0; r < k;) {
        size_t e = r + 1;
        while (e < k && strcmp(w->scratch[e].key, w->scratch[r].key) == 0)
            e++;
        if (e - r > 1 && w->scratch[r + 1].index < second) {
            second = w->scratch[r + 1].index;
            key = w->scratch[r].key;
            copies = e - r;
        }
        r = e;
    }
    if (!key)
        return 0;
    char safe[4 * KEY_SHOWN_BYTES + 4];
    shown(safe, sizeof safe, key, KEY_SHOWN_BYTES);
    char times[32];
    if (copies == 2)
        snprintf(times, sizeof times, "twice");
    else
        snprintf(times, sizeof times, "%zu times", copies);
    if (w->path[0])
        return error_set(w->err, "%s: key \"%s\" appears %s; expected each key once per object",
                         w->path, safe, times);
    return error_set(w->err, "key \"%s\" appears %s; expected each key once per object", safe,
                     times);
}

/* Depth-first in document order; the path grows by one step per level and is cut back on
 * the way up. cJSON refuses documents nested deeper than CJSON_NESTING_LIMIT, which bounds
 * the recursion. */
static int walk(Walk *w, const cJSON *node)
{
    if (cJSON_IsObject(node) && check_object(w, node) < 0)
        return -1;
    if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
        return 0;
    size_t len = strlen(w->path), i = 0;
    for (const cJSON *c = node->child; c; c = c->next, i++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
            continue;
        char step[4 * STEP_SHOWN_BYTES + 8];
        if (cJSON_IsArray(node)) {
            snprintf(step, sizeof step, "[%zu]", i);
        } else {
            step[0] = '.';
            shown(step + 1, sizeof step - 1, c->string ? c->string : "", STEP_SHOWN_BYTES);
        }
        const char *add = cJSON_IsArray(node) || len ? step : step + 1;
        int cut_here = 0;
        if (w->cut) {
            add = ""; /* cut above: the levels below are not named */
        } else if (len + strlen(add) + 4 > sizeof w->path) {
            add = "...";
            w->cut = cut_here = 1;
        }
        memcpy(w->path + len, add, strlen(add) + 1);
        int rc = walk(w, c);
        w->path[len] = 0;
        if (cut_here)
            w->cut = 0;
        if (rc < 0)
            return -1;
    }
    return 0;
}

int jdupkey_check(const cJSON *root, Error *err)
{
    Walk w = {.path = "", .err = err};
    w.scratch = w.local;
    w.cap = sizeof w.local / sizeof *w.local;
    int rc = root ? walk(&w, root) : 0;
    if (w.scratch != w.local)
        free(w.scratch);
    return rc;
}
