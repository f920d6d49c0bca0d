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
    /* Reused for every sorted object; on the heap only past 32 keys, so that checking a
     * journal line or an inventory allocates nothing that could fail. */
    Member local[32];
    Member *scratch;
    size_t cap;
    Error *err;
} Walk;

/* Where the walk is: one step per level, on the C stack, from the object or array being
 * read up to the root. The path is written out only for a refusal, so a document without
 * duplicates (nearly every one) costs no string work. */
typedef struct Step {
    const struct Step *up; /* NULL at the root */
    const cJSON *node;     /* the member this step enters */
    size_t index;          /* its place, for an array's member */
    int in_array;
} Step;

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

static const char *key_of(const cJSON *c)
{
    return c->string ? c->string : "";
}

/* Up to this many keys (the objects of inventories and protocol lines), comparing every pair
 * is cheaper than sorting: most pairs differ at their first byte. */
#define PAIRWISE_MAX_KEYS 16

/* Going down the members, the first one that equals an earlier one is the earliest second
 * copy. */
static const char *dup_by_pairs(const cJSON *obj, size_t *copies)
{
    for (const cJSON *b = obj->child->next; b; b = b->next)
        for (const cJSON *a = obj->child; a != b; a = a->next)
            if (strcmp(key_of(a), key_of(b)) == 0) {
                *copies = 0;
                for (const cJSON *c = obj->child; c; c = c->next)
                    *copies += strcmp(key_of(c), key_of(b)) == 0;
                return key_of(b);
            }
    return NULL;
}

/* Sorting the keys finds the duplicates of a large object in O(k log k): an object of a
 * million keys in a trial's output line must not cost a million squared comparisons. -1 when
 * memory runs out. */
static int dup_by_sorting(Walk *w, const cJSON *obj, size_t k, const char **key, size_t *copies)
{
    if (k > w->cap) {
        Member *grown = realloc(w->scratch == w->local ? NULL : w->scratch, k * sizeof *grown);
        if (!grown)
            return error_no_memory(w->err, "checking for duplicate keys");
        w->scratch = grown;
        w->cap = k;
    }
    size_t i = 0;
    for (const cJSON *c = obj->child; c; c = c->next, i++)
        w->scratch[i] = (Member){key_of(c), i};
    qsort(w->scratch, k, sizeof *w->scratch, by_key_then_place);
    /* In each run of one key, its second copy is what makes it a duplicate: report the key
     * whose second copy comes first, the one a reader meets first. */
    size_t second = k;
    for (size_t r = 0; r < k;) {
        size_t e = r + 1;
        while (e < k && strcmp(w->scratch[e].key, w->scratch[r].key) == 0)
            e++;
        if (e - r > 1 && w->scratch[r + 1].index < second) {
            second = w->scratch[r + 1].index;
            *key = w->scratch[r].key;
            *copies = e - r;
        }
        r = e;
    }
    return 0;
}

/* The path from the root down to `at`, cut with "..." where it would pass the cap. Steps
 * link upwards, so level d is found by climbing from `at`: quadratic in the depth, but only
 * for a refusal, and the cap stops it within about a hundred levels. No recursion: a document
 * may be a thousand levels deep. */
static void render(const Step *at, char *path, size_t cap)
{
    size_t depth = 0, len = 0;
    for (const Step *s = at; s; s = s->up)
        depth++;
    path[0] = 0;
    for (size_t d = 0; d < depth; d++) {
        const Step *s = at;
        for (size_t up = depth - 1 - d; up > 0; up--)
            s = s->up;
        char step[4 * STEP_SHOWN_BYTES + 8];
        if (s->in_array) {
            snprintf(step, sizeof step, "[%zu]", s->index);
        } else {
            step[0] = '.';
            shown(step + 1, sizeof step - 1, key_of(s->node), STEP_SHOWN_BYTES);
        }
        const char *add = s->in_array || len ? step : step + 1;
        if (len + strlen(add) + 4 > cap) {
            memcpy(path + len, "...", 4);
            return;
        }
        memcpy(path + len, add, strlen(add) + 1);
        len += strlen(add);
    }
}

/* The refusal, out of line: its buffers stay off the walk's frames even where a compiler
 * would inline the check into the walk (a thousand levels of 600 bytes). */
__attribute__((noinline)) static int refuse(Walk *w, const Step *at, const char *key,
                                            size_t copies)
{
    char safe[4 * KEY_SHOWN_BYTES + 4];
    shown(safe, sizeof safe, key, KEY_SHOWN_BYTES);
    char times[32];
    if (copies == 2)
        snprintf(times, sizeof times, "twice");
    else
        snprintf(times, sizeof times, "%zu times", copies);
    char path[PATH_MAX_CHARS];
    render(at, path, sizeof path);
    if (path[0])
        return error_set(w->err, "%s: key \"%s\" appears %s; expected each key once per object",
                         path, safe, times);
    return error_set(w->err, "key \"%s\" appears %s; expected each key once per object", safe,
                     times);
}

static int check_object(Walk *w, const cJSON *obj, const Step *at)
{
    size_t k = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        k++;
    if (k < 2)
        return 0;
    const char *key = NULL;
    size_t copies = 0;
    if (k <= PAIRWISE_MAX_KEYS)
        key = dup_by_pairs(obj, &copies);
    else if (dup_by_sorting(w, obj, k, &key, &copies) < 0)
        return -1;
    return key ? refuse(w, at, key, copies) : 0;
}

/* Depth-first in document order. cJSON refuses documents nested deeper than
 * CJSON_NESTING_LIMIT, which bounds the recursion. */
static int walk(Walk *w, const cJSON *node, const Step *at)
{
    if (cJSON_IsObject(node) && check_object(w, node, at) < 0)
        return -1;
    size_t i = 0;
    for (const cJSON *c = node->child; c; c = c->next, i++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
            continue;
        Step step = {.up = at, .node = c, .index = i, .in_array = cJSON_IsArray(node)};
        if (walk(w, c, &step) < 0)
            return -1;
    }
    return 0;
}

int jdupkey_check(const cJSON *root, Error *err)
{
    Walk w = {.scratch = NULL, .err = err};
    w.scratch = w.local;
    w.cap = sizeof w.local / sizeof *w.local;
    int rc = root && (cJSON_IsObject(root) || cJSON_IsArray(root)) ? walk(&w, root, NULL) : 0;
    if (w.scratch != w.local)
        free(w.scratch);
    return rc;
}
