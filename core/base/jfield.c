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
#include "core/base/utf8.h"

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
    /* %.0f up to 1e18; past it %g: "1e+300" was written out as its 301 digits */
    if (v->valuedouble < (double)min || v->valuedouble > (double)max)
        return error_set(err,
                         fabs(v->valuedouble) < 1e18
                             ? "%s: field '%s': expected an integer in [%ld, %ld], found %.0f"
                             : "%s: field '%s': expected an integer in [%ld, %ld], found %g",
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

int jfield_only(const cJSON *obj, const char *ctx, const char *const *known, Error *err)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, obj)
    {
        size_t k = 0;
        while (known[k] && strcmp(f->string, known[k]) != 0)
            k++;
        if (known[k])
            continue;
        char list[512] = "";
        size_t used = 0;
        for (k = 0; known[k] && used < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     k == 0 ? "" : known[k + 1] ? ", " : " or ", known[k]);
        return error_set(err, "%s: field '%s': unknown; expected %s", ctx, f->string, list);
    }
    return 0;
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

/* Whether brackets outside strings open more than cJSON's nesting limit before `upto`
 * bytes: cJSON then fails as if the text were malformed, which sent people looking for a
 * typo in a generated file that was only deep. */
static int too_deep(const char *text, size_t upto)
{
    size_t depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < upto && text[i]; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && text[i + 1])
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > CJSON_NESTING_LIMIT)
                return 1;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

#define JFIELD_STR2(x) #x
#define JFIELD_STR(x) JFIELD_STR2(x)
#define TOO_DEEP_TEXT "JSON nested more than " JFIELD_STR(CJSON_NESTING_LIMIT) " deep"

cJSON *jfield_parse_whole(const char *text, int *trailing)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    *trailing = root && end && end[strspn(end, " \t\r\n")] != '\0';
    return root;
}

/* What cJSON reads without a word but must not be kept: bytes that are not UTF-8 (they
 * reached the journal and `--json` as they were, and a strict JSON reader then refused the
 * whole output), and a \u0000 escape (it cut the string there: "a\u0000b" became "a").
 * Called on text cJSON parsed, so a backslash is always inside a string. Returns the
 * offset of the first such thing and what it is, or NULL. */
static const char *unkeepable(const char *text, size_t *offset)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text);
    for (size_t i = 0; p[i];) {
        if (p[i] == '\\') {
            if (p[i + 1] == 'u' && strncmp((const char *)p + i + 2, "0000", 4) == 0) {
                *offset = i;
                return "a \\u0000 escape (a NUL character, which would cut the string there)";
            }
            i += p[i + 1] ? 2 : 1;
            continue;
        }
        int cp;
        size_t n = utf8_next(text + i, len - i, &cp);
        if (cp == UTF8_INVALID) {
            *offset = i;
            return "a byte that is not UTF-8";
        }
        i += n;
    }
    return NULL;
}

/* Why cJSON could not parse text, at byte `off` where it stopped. A file says it in the words
 * its readers always used; standard input as "expected a WHAT, found ...". */
static void say_unparsed(const char *text, size_t len, size_t off, const char *source,
                         const char *what, Error *err)
{
    int line, col;
    position(text, off, &line, &col);
    int blank = !text[strspn(text, " \t\r\n")];
    if (what && blank)
        error_set(err, "%s: expected a %s, found nothing", source, what);
    else if (what)
        error_set(err, "%s:%d:%d: expected a %s, found %s", source, line, col, what,
                  too_deep(text, off + 1) ? TOO_DEEP_TEXT : "malformed JSON");
    else if (len == 0)
        error_set(err, "%s: expected a JSON object, found an empty file", source);
    else if (blank)
        error_set(err, "%s: expected a JSON object, found only white space", source);
    else if (too_deep(text, off + 1))
        error_set(err, "%s:%d:%d: expected JSON nested at most %d deep, found deeper", source,
                  line, col, CJSON_NESTING_LIMIT);
    else
        error_set(err, "%s:%d:%d: malformed JSON", source, line, col);
}

/* The checks of a file's text and of standard input's, once: what == NULL for a file. */
static cJSON *parse_checked(const char *text, size_t len, const char *source, const char *what,
                            Error *err)
{
    int line, col;
    if (strlen(text) != len) { /* what follows a NUL byte would be dropped unseen */
        position(text, strlen(text), &line, &col);
        error_set(err, "%s:%d:%d: expected JSON text, found a NUL byte", source, line, col);
        return NULL;
    }
    const char *end = NULL, *bad = NULL;
    size_t bad_at = 0;
    /* In a file, text after the value is malformed JSON where it begins. */
    cJSON *root = cJSON_ParseWithOpts(text, &end, !what);
    if (!root) {
        say_unparsed(text, len, end ? (size_t)(end - text) : 0, source, what, err);
        return NULL;
    }
    if (what && end && end[strspn(end, " \t\r\n")] != '\0') { /* which value was meant? */
        error_set(err, "%s: expected one %s, found more text after it", source, what);
    } else if ((bad = unkeepable(text, &bad_at)) != NULL) {
        position(text, bad_at, &line, &col);
        error_set(err, "%s:%d:%d: expected UTF-8 JSON text, found %s", source, line, col, bad);
    } else if (jdupkey_check(root, err) < 0) {
        /* cJSON would read the first copy; the operator most likely edited the second */
        error_prefix(err, "%s", source);
    } else {
        return root;
    }
    cJSON_Delete(root);
    return NULL;
}

cJSON *jfield_parse_text(const char *text, size_t len, const char *source, const char *what,
                         Error *err)
{
    return parse_checked(text, len, source, what, err);
}

cJSON *jfield_parse_file(const char *path, Error *err)
{
    size_t len = 0;
    /* A bound, so that `--job /dev/zero` or a wrong multi-gigabyte file is refused instead of
     * read until the kernel's OOM killer ends tunedeck (or a neighbour). */
    char *buf = readall_file(path, JFIELD_FILE_MAX_BYTES, &len, err);
    if (!buf)
        return NULL;
    cJSON *root = parse_checked(buf, len, path, NULL, err);
    free(buf);
    return root;
}
