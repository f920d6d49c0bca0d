/* JSON for a terminal: C1 controls, DEL and the bidirectional controls and line separators are
 * escaped as \uXXXX, and a JSON parser reads the very same string back. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jsonprint.h"

/* Every code point in question, in a key and in a value, beside text kept as it is. */
static const char NASTY[] = "a\xc2\x80" "b\xc2\x9b" "[2Jc\xc2\x9f" "d\x7f"
                            "e\xe2\x80\xaa\xe2\x80\xae" "f\xe2\x81\xa6\xe2\x81\xa9"
                            "g\xe2\x80\xa8\xe2\x80\xa9" "h\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f"
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
    cJSON_AddStringToObject(o, "s", "tab\there \"q\" \\ caf\xc3\xa9 \xff");
    char *a = cJSON_PrintUnformatted(o), *b = jsonprint_text(o, 0);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    cJSON_Delete(o);
}
