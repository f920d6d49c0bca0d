/* Keys one slip from a known one (core/base/nearkey.c): found, and said the same way by every
 * reader of a job or inventory file. */
#include <criterion/criterion.h>
#include <cJSON.h>
#include <string.h>

#include "core/base/nearkey.h"

static const char *const KNOWN[] = {"sync", "iterations", "job_command", NULL};

Test(nearkey, a_key_one_slip_from_a_known_one_is_found_with_it)
{
    cJSON *o = cJSON_Parse("{\"sync\": 1, \"learning_rate\": 2, \"job_comand\": \"x\"}");
    const char *meant = NULL, *key = nearkey_find(o, KNOWN, &meant);
    cr_assert_str_eq(key, "job_comand", "a known key itself is no slip");
    cr_assert_str_eq(meant, "job_command");
    cJSON_Delete(o);
}

Test(nearkey, nothing_is_found_in_no_object_or_far_keys)
{
    const char *meant = NULL;
    cr_assert_null(nearkey_find(NULL, KNOWN, &meant));
    cJSON *o = cJSON_Parse("[\"synch\"]");
    cr_assert_null(nearkey_find(o, KNOWN, &meant), "an array has no keys");
    cJSON_Delete(o);
    /* two edits of a four-byte key reach other words: one only */
    o = cJSON_Parse("{\"seed\": 1, \"mode\": 2}");
    cr_assert_null(nearkey_find(o, KNOWN, &meant));
    cJSON_Delete(o);
}

Test(nearkey, the_warning_names_the_file_the_key_and_the_key_meant)
{
    cJSON *o = cJSON_Parse("{\"synch\": \"allreduce\"}");
    char out[256];
    cr_assert_eq(nearkey_warning(o, KNOWN, "job.json", out, sizeof out), 1);
    cr_assert_str_eq(out, "job.json: key 'synch' is not one tunedeck reads; did you mean 'sync'?");
    cJSON_Delete(o);
    o = cJSON_Parse("{\"sync\": \"ps\"}");
    cr_assert_eq(nearkey_warning(o, KNOWN, "job.json", out, sizeof out), 0);
    cr_assert_str_eq(out, "");
    cJSON_Delete(o);
}

/* A key is the file's text: an escape in it would drive the operator's terminal. */
Test(nearkey, a_key_is_made_terminal_safe_in_the_warning)
{
    cJSON *o = cJSON_Parse("{\"syn\\u001b\": 1}");
    char out[256];
    cr_assert_eq(nearkey_warning(o, KNOWN, "job.json", out, sizeof out), 1);
    cr_assert_null(strchr(out, '\033'), "%s", out);
    cJSON_Delete(o);
}
