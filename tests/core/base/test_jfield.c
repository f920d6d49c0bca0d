#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/jfield.h"

/* A job named with 25 Japanese characters (75 bytes) was refused as "expected at most 63
 * characters, found 75": the count is of bytes, and says so. */
Test(jfield, a_string_too_long_is_counted_in_bytes_and_says_so)
{
    cJSON *o = cJSON_Parse("{\"name\": \"\u753b\u50cf\u8a8d\u8b58\u30e2\u30c7\u30eb\u5927"
                           "\u898f\u6a21\u30d0\u30c3\u30c1\u5b9f\u9a13\u756a\u53f7\u56db"
                           "\u5341\u4e8c\u306e\u6df7\u5408\u7cbe\u5ea6\"}");
    cr_assert_not_null(o);
    char out[64];
    Error err;
    cr_assert_eq(jfield_string(o, "job.json", "name", 1, out, sizeof out, &err), -1);
    cr_assert_str_eq(err.msg,
                     "job.json: field 'name': expected at most 63 bytes of UTF-8, found 75");
    cJSON_Delete(o);
}

/* A file nested past cJSON's limit (1000) was said to be "malformed JSON": a generated file
 * that was only deep sent its reader looking for a typo. */
Test(jfield, a_file_nested_too_deeply_says_so_with_its_line)
{
    char path[] = "/tmp/td-jfield-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"a\":\n", f);
    for (int i = 0; i < 1200; i++)
        fputc('[', f);
    for (int i = 0; i < 1200; i++)
        fputc(']', f);
    fputs("}\n", f);
    fclose(f);
    Error err;
    cJSON *root = jfield_parse_file(path, &err);
    unlink(path);
    cr_assert_null(root);
    cr_assert(strstr(err.msg, path) == err.msg, "%s", err.msg);
    cr_assert(strstr(err.msg, ":2:") != NULL, "no line 2: %s", err.msg);
    cr_assert(strstr(err.msg, "expected JSON nested at most 1000 deep, found deeper"), "%s",
              err.msg);
}

/* `{...} {...}` on standard input was read as its first object, the rest dropped. */
Test(jfield, parse_whole_says_what_follows_the_value)
{
    int trailing = -1;
    cJSON *o = jfield_parse_whole("{\"a\": 1} \n\t", &trailing);
    cr_assert_not_null(o);
    cr_assert_eq(trailing, 0);
    cJSON_Delete(o);
    o = jfield_parse_whole("{\"a\": 1} {\"a\": 2}", &trailing);
    cr_assert_not_null(o);
    cr_assert_eq(trailing, 1);
    cJSON_Delete(o);
}

static void text_refused(const char *text, size_t len, const char *want)
{
    Error err = {0};
    cr_assert_null(jfield_parse_text(text, len, "standard input", "schedule object", &err),
                   "accepted: %s", text);
    cr_assert_str_eq(err.msg, want);
}

/* Regression: a schedule on standard input was refused as "found malformed JSON" with no
 * place to look, and what a file is refused for passed there: a \u0000 escape (cutting the
 * string), a byte that is not UTF-8, text after a NUL byte (dropped unseen). */
Test(jfield, text_from_a_stream_is_refused_as_a_file_is_with_line_and_column)
{
    text_refused(" \n", 2, "standard input: expected a schedule object, found nothing");
    text_refused("{\"a\": 1,\n \"b\": ", 15,
                 "standard input:2:7: expected a schedule object, found malformed JSON");
    text_refused("{\"a\": 1} {\"a\": 2}", 17,
                 "standard input: expected one schedule object, found more text after it");
    text_refused("{\"a\": \"x\\u0000\"}", 16,
                 "standard input:1:9: expected UTF-8 JSON text, found a \\u0000 escape (a NUL "
                 "character, which would cut the string there)");
    text_refused("{\"a\": \"\xff\"}", 10,
                 "standard input:1:8: expected UTF-8 JSON text, found a byte that is not UTF-8");
    static const char nul[] = "{\"a\": 1}\n\0{\"a\": 2}";
    text_refused(nul, sizeof nul - 1, "standard input:2:1: expected JSON text, found a NUL byte");
    text_refused("{\"a\": 1, \"a\": 2}", 16,
                 "standard input: key \"a\" appears twice; expected each key once per object");
    Error err = {0};
    cJSON *o = jfield_parse_text("{\"a\": 1}\n", 9, "standard input", "schedule object", &err);
    cr_assert_not_null(o, "%s", err.msg);
    cJSON_Delete(o);
}
