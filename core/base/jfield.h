/* Typed reads of cJSON object fields that explain what was wrong: which field, what was
 * expected, what was found. Every format reader is built on these. */
#ifndef TUNEDECK_JFIELD_H
#define TUNEDECK_JFIELD_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct cJSON cJSON;

/* `ctx` names where the object sits ("job.json", "machines[2]"); it prefixes messages.
 * Required readers fail when the field is absent; optional ones leave *out unchanged. */
int jfield_string(const cJSON *obj, const char *ctx, const char *key, int required,
                  char *out, size_t cap, Error *err);
int jfield_number(const cJSON *obj, const char *ctx, const char *key, int required,
                  double min, double max, double *out, Error *err);
int jfield_int(const cJSON *obj, const char *ctx, const char *key, int required, long min,
               long max, int *out, Error *err);
int jfield_bool(const cJSON *obj, const char *ctx, const char *key, int required, int *out,
                Error *err);
/* Returns the array/object field or NULL (with err set when required or of the wrong type;
 * an absent optional field returns NULL with err->msg[0] == 0). */
const cJSON *jfield_array(const cJSON *obj, const char *ctx, const char *key, int required,
                          Error *err);
const cJSON *jfield_object(const cJSON *obj, const char *ctx, const char *key, int required,
                           Error *err);

/* Refuses a key of obj that is not in `known` (NULL-terminated): tunedeck's own settings,
 * where a misspelt key would be ignored and its default used without a word.
 * "CTX: field 'KEY': unknown; expected a, b or c". */
int jfield_only(const cJSON *obj, const char *ctx, const char *const *known, Error *err);

/* Describes a JSON value's type for messages: "a string", "null", "an array"... */
const char *jfield_type_name(const cJSON *v);
/* cJSON_Parse that also says whether more than white space follows the value: *trailing is
 * set then (`{"a": 1} {"a": 2}` was read as its first object, the rest dropped). The caller
 * refuses such text: which object was meant? */
cJSON *jfield_parse_whole(const char *text, int *trailing);

/* Parses the `len` bytes of `text` read from `source` (standard input: a trial's schedule),
 * which must be one JSON value, refusing what jfield_parse_file refuses in a file, with the
 * same words and SOURCE:LINE:COL: a NUL byte, malformed JSON ("expected a WHAT, found
 * malformed JSON"; "found nothing" when blank), text after the value ("expected one WHAT,
 * found more text after it"), bytes that are not UTF-8, a \u0000 escape, a key twice. */
cJSON *jfield_parse_text(const char *text, size_t len, const char *source, const char *what,
                         Error *err);

/* The most a JSON file may hold (a job file, an inventory, a theme...): 256 MiB. */
#define JFIELD_FILE_MAX_BYTES ((size_t)256 << 20)

/* Reads a whole file and parses it; errors name the file and the parse position. A document
 * with a key twice in one object is refused (core/base/jdupkey.h): "FILE: PATH: key ...";
 * so is one over JFIELD_FILE_MAX_BYTES, one with bytes that are not UTF-8 or with a \u0000
 * escape ("FILE:LINE:COL: expected UTF-8 JSON text, found ..."). */
cJSON *jfield_parse_file(const char *path, Error *err);

#endif
