#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jdupkey.h"

/* The message for a document, "" when it has no duplicate key. */
static const char *check(const char *text)
{
    static Error err;
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "test text must parse: %s", text);
    err.msg[0] = 0;
    int rc = jdupkey_check(root, &err);
    cJSON_Delete(root);
    cr_assert_eq(rc, err.msg[0] ? -1 : 0, "rc %d with message '%s'", rc, err.msg);
    return err.msg;
}

Test(jdupkey, a_key_twice_at_the_top_is_named_without_a_path)
{
    cr_assert_str_eq(check("{\"hosts\": [1], \"name\": \"x\", \"hosts\": [2]}"),
                     "key \"hosts\" appears twice; expected each key once per object");
}

Test(jdupkey, a_key_twice_in_an_object_in_arrays_of_objects_names_the_path)
{
    cr_assert_str_eq(check("{\"machines\": [{}, {}, {\"devices\": [{\"id\": \"cpu\", "
                           "\"inputs\": 1, \"id\": \"gpu0\"}]}]}"),
                     "machines[2].devices[0]: key \"id\" appears twice; expected each key "
                     "once per object");
}

Test(jdupkey, nested_objects_are_named_by_their_keys)
{
    cr_assert_str_eq(check("{\"machine_types\": {\"g2.2xlarge\": {\"ssh\": {\"port\": 22, "
                           "\"user\": \"a\", \"port\": 23}}}}"),
                     "machine_types.g2.2xlarge.ssh: key \"port\" appears twice; expected each "
                     "key once per object");
}

Test(jdupkey, arrays_inside_arrays_are_indexed)
{
    cr_assert_str_eq(check("[[1], [2, {\"a\": 1, \"a\": 1}]]"),
                     "[1][1]: key \"a\" appears twice; expected each key once per object");
}

Test(jdupkey, a_key_three_times_says_how_many)
{
    cr_assert_str_eq(check("{\"a\": 1, \"a\": 2, \"a\": 3}"),
                     "key \"a\" appears 3 times; expected each key once per object");
}

Test(jdupkey, equal_keys_in_different_objects_are_not_duplicates)
{
    cr_assert_str_eq(check("{\"id\": 0, \"machines\": [{\"id\": \"a\", \"devices\": [{\"id\": "
                           "\"cpu\"}, {\"id\": \"gpu0\"}]}, {\"id\": \"b\"}], \"x\": {\"id\": 1, "
                           "\"y\": {\"id\": 2}}}"),
                     "");
}

Test(jdupkey, keys_differing_in_case_are_different_keys)
{
    cr_assert_str_eq(check("{\"id\": 1, \"ID\": 2, \"Id\": 3, \"iD\": 4}"), "");
}

Test(jdupkey, the_key_whose_second_copy_comes_first_is_reported)
{
    /* "b" repeats at member 2, "a" only at member 3: a reader meets "b" first */
    cr_assert_str_eq(check("{\"a\": 1, \"b\": 1, \"b\": 2, \"a\": 2}"),
                     "key \"b\" appears twice; expected each key once per object");
}

Test(jdupkey, an_outer_object_is_checked_before_the_objects_inside_it)
{
    cr_assert_str_eq(check("{\"m\": {\"x\": 1, \"x\": 2}, \"m\": {}}"),
                     "key \"m\" appears twice; expected each key once per object");
}

Test(jdupkey, scalars_empty_objects_and_null_have_nothing_to_report)
{
    cr_assert_str_eq(check("3"), "");
    cr_assert_str_eq(check("{}"), "");
    cr_assert_str_eq(check("[]"), "");
    cr_assert_eq(jdupkey_check(NULL, NULL), 0);
}

Test(jdupkey, a_key_with_control_characters_is_shown_harmlessly)
{
    const char *msg = check("{\"a\\u001b[2J\": 1, \"a\\u001b[2J\": 2}");
    cr_assert_null(strchr(msg, 0x1b), "%s", msg);
    cr_assert_not_null(strstr(msg, "key \"a^[[2J\" appears twice"), "%s", msg);
}

/* Past the walk's fixed scratch space (32 members), and many keys: sorted, not compared in
 * pairs; the duplicate is still found wherever it sits. */
Test(jdupkey, a_large_object_is_checked_whole)
{
    enum { N = 20000 };
    cJSON *o = cJSON_CreateObject();
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON_AddNumberToObject(o, key, i);
    }
    Error err;
    cr_assert_eq(jdupkey_check(o, &err), 0);
    cJSON_AddNumberToObject(o, "k12345", 1);
    cr_assert_eq(jdupkey_check(o, &err), -1);
    cr_assert_str_eq(err.msg, "key \"k12345\" appears twice; expected each key once per object");
    cJSON_Delete(o);
}

/* Objects past 16 keys are sorted, not compared in pairs: the same answer. */
Test(jdupkey, in_a_sorted_object_too_the_key_whose_second_copy_comes_first_is_reported)
{
    char text[2048] = "{\"zz\": 0, \"aa\": 0";
    for (int i = 0; i < 30; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), ", \"k%02d\": %d", i, i);
    strcat(text, ", \"zz\": 1, \"aa\": 1, \"aa\": 2}");
    cr_assert_str_eq(check(text), "key \"zz\" appears twice; expected each key once per object");
    strcpy(strstr(text, ", \"zz\": 1"), ", \"aa\": 1, \"zz\": 1, \"aa\": 2}");
    cr_assert_str_eq(check(text), "key \"aa\" appears 3 times; expected each key once per object");
}

Test(jdupkey, a_deep_path_is_cut_but_the_key_is_named)
{
    char text[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(text, "{\"level_name\": ");
    strcat(text, "{\"z\": 1, \"z\": 2}");
    for (int i = 0; i < 100; i++)
        strcat(text, "}");
    const char *msg = check(text);
    cr_assert(strncmp(msg, "level_name.level_name.", 22) == 0, "%s", msg);
    cr_assert_not_null(strstr(msg, "level_name...: key \"z\" appears twice; expected each key "
                                  "once per object"),
                       "%s", msg);
    cr_assert_lt(strlen(msg), 300);
}

/* As deep as cJSON reads (CJSON_NESTING_LIMIT, 1000): the walk and the path it writes hold. */
Test(jdupkey, a_document_nested_as_deep_as_cjson_reads_is_checked)
{
    enum { DEPTH = 900 };
    static char text[4 * DEPTH];
    memset(text, '[', DEPTH);
    strcpy(text + DEPTH, "{\"a\": 1, \"a\": 2}");
    memset(text + strlen(text), ']', DEPTH);
    const char *msg = check(text);
    cr_assert(strncmp(msg, "[0][0][0]", 9) == 0, "%s", msg);
    cr_assert_not_null(strstr(msg, "[0]...: key \"a\" appears twice"), "%s", msg);
}

Test(jdupkey, long_keys_are_cut_in_the_path_and_in_the_message)
{
    char key[200], text[1024];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = 0;
    snprintf(text, sizeof text, "{\"%s\": {\"%s\": 1, \"%s\": 2}}", key, key, key);
    const char *msg = check(text);
    char want[256];
    snprintf(want, sizeof want,
             "%.24s...: key \"%.48s...\" appears twice; expected each key once per object", key,
             key);
    cr_assert_str_eq(msg, want);
}
