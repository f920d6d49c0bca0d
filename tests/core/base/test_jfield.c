#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

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
