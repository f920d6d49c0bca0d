#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/jobctl.h"

Test(jobctl, placeholders_are_filled_quoted)
{
    const char *hosts[] = {"g2-0", "g2-1"};
    JobAlloc a = {.gpus = 4, .hosts = hosts, .n_hosts = 2, .resume = "/ck/step 10"};
    Error e;
    char *c = jobctl_command("train --gpus {gpus} --hosts {hosts} --resume {resume}", &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_str_eq(c, "train --gpus '4' --hosts 'g2-0,g2-1' --resume '/ck/step 10'");
    free(c);
}

Test(jobctl, hostile_resume_path_stays_one_argument)
{
    JobAlloc a = {.gpus = 1, .resume = "'; $(touch /tmp/x)"};
    Error e;
    char *c = jobctl_command("run {resume}", &a, &e);
    cr_assert_str_eq(c, "run ''\\''; $(touch /tmp/x)'");
    free(c);
}

Test(jobctl, empty_resume_is_an_empty_argument)
{
    JobAlloc a = {.gpus = 1, .resume = ""};
    Error e;
    char *c = jobctl_command("run {resume} {gpus}", &a, &e);
    cr_assert_str_eq(c, "run '' '1'");
    free(c);
}

Test(jobctl, unknown_placeholder_is_refused)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    cr_assert_null(jobctl_command("run {nodes}", &a, &e));
    cr_assert(strstr(e.msg, "{nodes}") && strstr(e.msg, "{gpus}"), "%s", e.msg);
}

Test(jobctl, template_without_placeholders_is_unchanged)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    char *c = jobctl_command("python train.py", &a, &e);
    cr_assert_str_eq(c, "python train.py");
    free(c);
}

/* Regression: literal text between placeholders was cut at 4095 bytes. */
Test(jobctl, long_literal_text_is_kept_whole)
{
    size_t n = 10000;
    char *t = malloc(n + 16);
    memset(t, 'x', n);
    strcpy(t + n, " {gpus}");
    JobAlloc a = {.gpus = 2};
    Error e;
    char *c = jobctl_command(t, &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(strlen(c), n + 4, "length %zu", strlen(c));
    cr_assert_str_eq(c + n, " '2'");
    free(c);
    free(t);
}

Test(jobctl, long_unknown_placeholder_is_named_whole)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    cr_assert_null(jobctl_command("run {a_placeholder_name_longer_than_thirty_two_bytes}", &a, &e));
    cr_assert(strstr(e.msg, "{a_placeholder_name_longer_than_thirty_two_bytes}"), "%s", e.msg);
}
