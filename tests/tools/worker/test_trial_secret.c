/* A trial's secret in memory (tools/worker/trial_secret.c, tools/worker/trial.c): the
 * schedule text is wiped once parsed, on a failing path too, and every parsed "ps_secret"
 * is wiped before the tree is freed, a repeated key included. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tools/worker/trial.h"
#include "tools/worker/trial_secret.h"

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static int all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

Test(trial_secret, the_secret_is_taken_from_ps_secret)
{
    cJSON *root = cJSON_Parse("{\"ps_secret\": \"" HEX "\"}");
    unsigned char secret[SECRET_BYTES];
    Error err;
    cr_assert_eq(trial_secret_take(root, "in", 0, secret, &err), 0, "%s", err.msg);
    cr_assert_eq(secret[1], 0x11);
    cr_assert_eq(secret[31], 0xff);
    cJSON_Delete(root);
}

Test(trial_secret, every_parsed_ps_secret_is_wiped_a_repeated_key_too)
{
    cJSON *root = cJSON_Parse("{\"ps_secret\": \"" HEX "\", \"x\": 1, \"ps_secret\": \"" HEX "\"}");
    cr_assert_not_null(root);
    char *first = root->child->valuestring, *second = root->child->next->next->valuestring;
    trial_secret_wipe_json(root);
    cr_assert(all_zero(first, strlen(HEX)), "the first ps_secret is left: %s", first);
    cr_assert(all_zero(second, strlen(HEX)), "the repeated ps_secret is left: %s", second);
    cJSON_Delete(root);
}

static void run_and_check_wiped(const char *schedule, const char *expected_msg)
{
    char text[512];
    size_t len = (size_t)snprintf(text, sizeof text, "%s", schedule);
    TrialOptions o = {.all_local = 1, .connect_timeout_s = 1};
    Error err;
    cr_assert_eq(trial_run(&o, text, len, "in", &err), -1);
    cr_assert(strstr(err.msg, expected_msg), "%s", err.msg);
    cr_assert(all_zero(text, len), "the schedule text is left: %s", text);
}

Test(trial_secret, malformed_json_after_the_secret_still_wipes_the_text)
{
    run_and_check_wiped("{\"ps_secret\": \"" HEX "\", \"machines\": [", "malformed JSON");
}

Test(trial_secret, a_schedule_that_fails_its_checks_still_wipes_the_text)
{
    run_and_check_wiped("{\"protocol\": 1, \"ps_secret\": \"" HEX "\", \"machines\": []}",
                        "expected at least one machine");
}
