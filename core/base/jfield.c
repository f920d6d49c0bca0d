/* Typed, self-explaining reads of JSON fields, and whole-file parsing with positions. */
#include "core/base/jfield.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jdupkey.h"
#include "core/base/readall.h"

const char *jfield_type_name(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an unknown value";
}

static const cJSON *get(const cJSON *obj, const char *ctx, const char *key, int required,
                        Error *err)
{
    if (err)
        err->msg[0] = 0;
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v && required)
        error_set(err, "%s: field '%s' is missing", ctx, key);
    return v;
}

int jfield_string(const cJSON *obj, const char *ctx, const char *key, int required, char *out,
                  size_t cap, Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (!v)
        return required ? -1 : 0;
    if (!cJSON_IsString(v))
        return error_set(err, "%s: field '%s': expected a string, found %s", ctx, key,
                         jfield_type_name(v));
    size_t n = strlen(v->valuestring);
    /* The limit is the buffer's, in bytes: a name in Japanese takes 3 a character, so
     * "at most 63 characters, found 75" for a 25-character name read as a miscount. */
    if (n >= cap)
        return error_set(err, "%s: field '%s': expected at most %zu bytes of UTF-8, found %zu",
                         ctx, key, cap - 1, n);
    memcpy(out, v->valuestring, n + 1);
    return 0;
}

/* How a value that is not finite is named: cJSON reads 1e999 as infinity, and a protocol
 * line may carry Python's NaN (core/model/protocol.c). */
static const char *nonfinite_name(double v)
{
    return isnan(v) ? "NaN"
           : v > 0  ? "one too large to represent (Infinity)"
                    : "one too large to represent (-Infinity)";
}

int jfield_number(const cJSON *obj, const char *ctx, const char *key, int required, double min,
                  double max, double *out, Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (!v)
        return required ? -1 : 0;
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) /* 1e999: cJSON's infinity */
        return error_set(err, "%s: field '%s': expected a number in [%g, %g], found %s", ctx,
                         key, min, max, nonfinite_name(v->valuedouble));
    if (!cJSON_IsNumber(v))
        return error_set(err, "%s: field '%s': expected a number, found %s", ctx, key,
                         jfield_type_name(v));
    if (v->valuedouble < min || v->valuedouble > max)
        return error_set(err, "%s: field '%s': expected a number in [%g, %g], found %g", ctx,
                         key, min, max, v->valuedouble);
    *out = v->valuedouble;
    return 0;
}

int jfield_int(const cJSON *obj, const char *ctx, const char *key, int required, long min,
               long max, int *out, Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (!v)
        return required ? -1 : 0;
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
        return error_set(err, "%s: field '%s': expected an integer in [%ld, %ld], found %s", ctx,
                         key, min, max, nonfinite_name(v->valuedouble));
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return error_set(err, "%s: field '%s': expected an integer, found %s", ctx, key,
                         cJSON_IsNumber(v) ? "a fraction" : jfield_type_name(v));
    if (v->valuedouble < (double)min || v->valuedouble > (double)max)
        return error_set(err, "%s: field '%s': expected an integer in [%ld, %ld], found %.0f",
                         ctx, key, min, max, v->valuedouble);
    *out = (int)v->valuedouble;
    return 0;
}

int jfield_bool(const cJSON *obj, const char *ctx, const char *key, int required, int *out,
                Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (!v)
        return required ? -1 : 0;
    if (!cJSON_IsBool(v))
        return error_set(err, "%s: field '%s': expected true or false, found %s", ctx, key,
                         jfield_type_name(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

const cJSON *jfield_array(const cJSON *obj, const char *ctx, const char *key, int required,
                          Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (v && !cJSON_IsArray(v)) {
        error_set(err, "%s: field '%s': expected an array, found %s", ctx, key,
                  jfield_type_name(v));
        return NULL;
    }
    return v;
}

const cJSON *jfield_object(const cJSON *obj, const char *ctx, const char *key, int required,
                           Error *err)
{
    const cJSON *v = get(obj, ctx, key, required, err);
    if (v && !cJSON_IsObject(v)) {
        error_set(err, "%s: field '%s': expected an object, found %s", ctx, key,
                  jfield_type_name(v));
        return NULL;
    }
    return v;
}

/* Line and column of a byte offset, for parse errors a person can find. */
static void position(const char *text, size_t offset, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

const char *jfield_unparsed(const char *text)
{
    return text[strspn(text, " \t\r\n")] ? "malformed JSON" : "nothing";
}

cJSON *jfield_parse_file(const char *path, Error *err)
{
    size_t len = 0;
    char *buf = readall_file(path, 0, &len, err);
    if (!buf)
        return NULL;
    if (strlen(buf) != len) {
        free(buf);
        error_set(err, "%s: expected JSON text, found a NUL byte", path);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(buf, &end, 1);
    if (!root) {
        int line, col;
        size_t off = end ? (size_t)(end - buf) : 0;
        position(buf, off, &line, &col);
        if (len == 0)
            error_set(err, "%s: expected a JSON object, found an empty file", path);
        else
            error_set(err, "%s:%d:%d: malformed JSON", path, line, col);
    } else if (jdupkey_check(root, err) < 0) {
        /* cJSON would read the first copy; the operator most likely edited the second */
        error_prefix(err, "%s", path);
        cJSON_Delete(root);
        root = NULL;
    }
    free(buf);
    return root;
}
