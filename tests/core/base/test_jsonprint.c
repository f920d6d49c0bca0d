/* JSON for a terminal: C1 controls, DEL and the bidirectional controls and line separators are
 * escaped as \uXXXX, and a JSON parser reads the very same string back. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jsonprint.h"
#include "core/base/utf8.h"

/* Every code point in question, in a key and in a value, beside text kept as it is. */
static const char NASTY[] = "a\xc2\x80"
                            "b\xc2\x9b"
                            "[2Jc\xc2\x9f"
                            "d\x7f"
                            "e\xe2\x80\xaa\xe2\x80\xae"
                            "f\xe2\x81\xa6\xe2\x81\xa9"
                            "g\xe2\x80\xa8\xe2\x80\xa9"
                            "h\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f"
                            " caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0";

Test(jsonprint, terminal_controls_are_escaped_and_read_back_the_same)
{
    for (int indent = 0; indent <= 1; indent++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", NASTY);
        cJSON_AddStringToObject(o, NASTY, "key");
        char *text = jsonprint_text(o, indent);
        cr_assert_not_null(text);
        /* nothing a terminal acts on is left raw */
        for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
            cr_assert_neq(*s, 0x7F);
            cr_assert_not(s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F, "C1 raw in %s", text);
            cr_assert_not(s[0] == 0xE2 && s[1] == 0x80 &&
                              ((s[2] >= 0xA8 && s[2] <= 0xAE) || s[2] == 0x8E || s[2] == 0x8F),
                          "bidi raw in %s", text);
            cr_assert_not(s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9);
            cr_assert_not(s[0] == 0xD8 && s[1] == 0x9C);
        }
        cr_assert(strstr(text, "a\\u0080b\\u009B[2Jc\\u009Fd\\u007Fe\\u202A\\u202Ef\\u2066\\u2069"
                               "g\\u2028\\u2029h\\u061C\\u200E\\u200F caf\xc3\xa9 \xe2\x82\xac "
                               "\xf0\x9f\x98\x80 \xc2\xa0"),
                  "%s", text);
        cJSON *back = cJSON_Parse(text);
        cr_assert_not_null(back, "%s", text);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(back, "name")->valuestring, NASTY);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(back, NASTY)->valuestring, "key");
        cJSON_Delete(back);
        free(text);
        cJSON_Delete(o);
    }
}

Test(jsonprint, plain_text_is_cjsons_own)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "s", "tab\there \"q\" \\ caf\xc3\xa9 \xf0\x9f\x98\x80");
    char *a = cJSON_PrintUnformatted(o), *b = jsonprint_text(o, 0);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    cJSON_Delete(o);
}

/* The text of {"s": bytes} through jsonprint: what stands between the quotes. */
static char *printed(const char *bytes)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "s", bytes);
    char *text = jsonprint_text(o, 0);
    cJSON_Delete(o);
    cr_assert_not_null(text);
    return text;
}

/* Each class of bytes that are not UTF-8, in a value and in a key: every maximal subpart is
 * one \uFFFD (cJSON passed them on raw, and a strict reader refused the whole output). */
Test(jsonprint, bytes_that_are_not_utf8_become_replacement_characters)
{
    static const struct {
        const char *in, *out;
    } CASES[] = {
        {"a\xff"
         "b",
         "{\"s\":\"a\\uFFFDb\"}"}, /* never a lead */
        {"a\x80\xbf"
         "b",
         "{\"s\":\"a\\uFFFD\\uFFFDb\"}"},                                 /* continuations */
        {"\xc0\xaf", "{\"s\":\"\\uFFFD\\uFFFD\"}"},                       /* overlong '/' */
        {"\xe0\x80\xaf", "{\"s\":\"\\uFFFD\\uFFFD\\uFFFD\"}"},            /* overlong */
        {"\xed\xa0\x80", "{\"s\":\"\\uFFFD\\uFFFD\\uFFFD\"}"},            /* U+D800 */
        {"\xf4\x90\x80\x80", "{\"s\":\"\\uFFFD\\uFFFD\\uFFFD\\uFFFD\"}"}, /* > U+10FFFF */
        {"x\xe2\x82", "{\"s\":\"x\\uFFFD\"}"},                            /* cut at the end */
        {"\xf0\x9f\x98"
         "a\xc3",
         "{\"s\":\"\\uFFFDa\\uFFFD\"}"},                 /* truncated */
        {"\xe2\x82\"\\", "{\"s\":\"\\uFFFD\\\"\\\\\"}"}, /* cut by what cJSON escapes */
        {"caf\xc3\xa9\xc2\x9b\xff", "{\"s\":\"caf\xc3\xa9\\u009B\\uFFFD\"}"}, /* kept, C1, bad */
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char *text = printed(CASES[i].in);
        cr_assert_str_eq(text, CASES[i].out, "case %zu", i);
        cJSON *back = cJSON_Parse(text);
        cr_assert_not_null(back, "%s", text);
        cJSON_Delete(back);
        free(text);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "k\xed\xbf\xbf", "v");
    char *text = jsonprint_text(o, 1);
    cr_assert(strstr(text, "\"k\\uFFFD\\uFFFD\\uFFFD\":\t\"v\""), "%s", text);
    free(text);
    cJSON_Delete(o);
}

/* Whatever the bytes, the text is UTF-8 with no control raw, and parses: every byte alone
 * and every pair. */
Test(jsonprint, any_bytes_give_valid_json)
{
    char in[3] = {0};
    for (int a = 1; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            in[0] = (char)a;
            in[1] = (char)b;
            char *text = printed(in);
            for (size_t at = 0, n = strlen(text), len; at < n; at += len) {
                int cp;
                len = utf8_next(text + at, n - at, &cp);
                cr_assert(cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp <= 0x9F),
                          "%02X %02X gave %s", a, b, text);
            }
            cJSON *back = cJSON_Parse(text);
            cr_assert_not_null(back, "%s", text);
            cJSON_Delete(back);
            free(text);
        }
}
