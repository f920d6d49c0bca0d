#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "remote/ssh/shquote.h"

Test(shquote, plain_word_is_single_quoted)
{
    char *q = shquote("abc");
    cr_assert_str_eq(q, "'abc'");
    free(q);
}

Test(shquote, embedded_quote_is_closed_escaped_and_reopened)
{
    char *q = shquote("it's");
    cr_assert_str_eq(q, "'it'\\''s'");
    free(q);
}

Test(shquote, empty_argument_stays_an_argument)
{
    char *q = shquote("");
    cr_assert_str_eq(q, "''");
    free(q);
}

Test(shquote, argv_joins_quoted_words)
{
    const char *argv[] = {"echo", "a b", "$HOME"};
    char *q = shquote_argv(argv, 3);
    cr_assert_str_eq(q, "'echo' 'a b' '$HOME'");
    free(q);
}

/* The property that matters: whatever the bytes, /bin/sh gives them back unchanged and
 * runs nothing. Checked against the real shell over hostile and random strings. */
static void roundtrip(const char *arg)
{
    char *q = shquote(arg);
    char *cmd = NULL;
    size_t len = 0;
    shquote_append_raw(&cmd, &len, "printf %s ");
    shquote_append_raw(&cmd, &len, q);
    char *outer = shquote(cmd); /* the command itself goes through sh -c */
    char line[8192];
    snprintf(line, sizeof line, "/bin/sh -c %s", outer);
    FILE *f = popen(line, "r");
    cr_assert_not_null(f);
    char got[4096];
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = 0;
    cr_assert_eq(pclose(f), 0, "sh failed on %s", q);
    cr_assert_eq(n, strlen(arg), "length differs for %s", q);
    cr_assert_str_eq(got, arg);
    free(q);
    free(cmd);
    free(outer);
}

Test(shquote, hostile_arguments_arrive_byte_for_byte)
{
    roundtrip("'; $(touch /tmp/tunedeck-shquote-pwned)");
    roundtrip("`id` \"$PATH\" \\ \\\\ ' '' ''' ;|&<>*?[]{}~#!\t");
    roundtrip("-n");
    cr_assert_eq(access("/tmp/tunedeck-shquote-pwned", F_OK), -1, "a quoted argument ran");
}

Test(shquote, random_bytes_roundtrip)
{
    unsigned seed = 12345;
    for (int t = 0; t < 40; t++) {
        char arg[64];
        size_t n = (size_t)(rand_r(&seed) % 60);
        for (size_t i = 0; i < n; i++)
            arg[i] = (char)(1 + rand_r(&seed) % 126); /* no NUL: argv cannot carry one */
        arg[n] = 0;
        roundtrip(arg);
    }
}

Test(shquote, host_names_with_metacharacters_are_refused)
{
    Error e;
    cr_assert_eq(host_name_valid("node-01.lab", &e), 0);
    cr_assert_eq(host_name_valid("10.1.0.7", &e), 0);
    cr_assert_eq(host_name_valid("[fe80::1]", &e), 0);
    cr_assert_eq(host_name_valid("fe80::1", &e), 0);
    /* brackets only around a whole IPv6 address, as the error's advice says */
    cr_assert_eq(host_name_valid("n[1]", &e), -1);
    cr_assert(strstr(e.msg, "in brackets around the whole host, [fd00::1]"), "%s", e.msg);
    cr_assert_eq(host_name_valid("[node]", &e), -1);
    cr_assert_eq(host_name_valid("[::1]:22", &e), -1);
    cr_assert_eq(host_name_valid("a;rm -rf /", &e), -1);
    cr_assert(strstr(e.msg, "unexpected character ';'"), "%s", e.msg);
    cr_assert_eq(host_name_valid("$(x)", &e), -1);
    cr_assert_eq(host_name_valid("-oProxyCommand=x", &e), -1);
    cr_assert(strstr(e.msg, "not starting with '-'"), "%s", e.msg);
    cr_assert_eq(host_name_valid("", &e), -1);
    /* libssh's SSH_OPTIONS_HOST would read it as a user and a host */
    cr_assert_eq(host_name_valid("alice@10.1.0.7", &e), -1);
    cr_assert(strstr(e.msg, "unexpected character '@'"), "%s", e.msg);
    /* a non-ASCII character showed as '?', where the machine-name check showed '\xE8' */
    cr_assert_eq(host_name_valid("cach\xc3\xa8", &e), -1);
    cr_assert(strstr(e.msg, "unexpected character '\xc3\xa8' (U+00E8) at 5"), "%s", e.msg);
    cr_assert_eq(host_name_valid("cach\xe8", &e), -1);
    cr_assert(strstr(e.msg, "unexpected character '\\xE8' at 5"), "%s", e.msg);
}

Test(shquote, user_names_sites_use_are_accepted)
{
    Error err;
    static const char *const GOOD[] = {"",
                                       "alice",
                                       "first.last@corp",
                                       "svc-train_2+gpu",
                                       "DOMAIN\\user",
                                       "host01$",
                                       "a\\$",
                                       "j.doe@EXAMPLE.ORG",
                                       "renée"};
    for (size_t i = 0; i < sizeof GOOD / sizeof *GOOD; i++)
        cr_assert_eq(user_name_valid(GOOD[i], &err), 0, "%s: %s", GOOD[i], err.msg);
    char longest[USER_NAME_MAX + 2];
    memset(longest, 'a', USER_NAME_MAX);
    longest[USER_NAME_MAX] = 0;
    cr_assert_eq(user_name_valid(longest, &err), 0, "256 bytes, as AD allows: %s", err.msg);
    longest[USER_NAME_MAX] = 'a';
    longest[USER_NAME_MAX + 1] = 0;
    cr_assert_eq(user_name_valid(longest, &err), -1);
    cr_assert(strstr(err.msg, "expected at most 256 bytes, found 257"), "%s", err.msg);
}

Test(shquote, user_names_with_shell_syntax_are_refused)
{
    Error err;
    static const char *const BAD[] = {"x$(touch /tmp/p)",
                                      "x`id`",
                                      "a b",
                                      "a\tb",
                                      "a;b",
                                      "a|b",
                                      "a'b",
                                      "a\"b",
                                      "a\\",
                                      "-oProxyCommand=x",
                                      "a\nb",
                                      "a%rb",
                                      "a&b",
                                      "a>b",
                                      "a<b",
                                      "a(b",
                                      "a{b}",
                                      "$HOME",
                                      "a$b",
                                      "a$$",
                                      "a*",
                                      "a?",
                                      "a[1]",
                                      "~root",
                                      "#x",
                                      "a\x7f",
                                      "DOMAIN\\"};
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        cr_assert_eq(user_name_valid(BAD[i], &err), -1, "%s", BAD[i]);
        cr_assert(strstr(err.msg, "user '"), "%s", err.msg);
    }
    cr_assert_eq(user_name_valid("x$(id)", &err), -1);
    cr_assert(strstr(err.msg, "unexpected character '$' at 2"), "%s", err.msg);
    cr_assert_eq(user_name_valid("\xc3\xa9x\x01", &err), -1);
    cr_assert(strstr(err.msg, "unexpected character '^A' at 3"), "%s", err.msg);
    cr_assert_eq(user_name_valid("-x", &err), -1);
    cr_assert(strstr(err.msg, "not starting with '-'"), "%s", err.msg);
    cr_assert_eq(user_name_valid("DOMAIN\\", &err), -1);
    cr_assert(strstr(err.msg, "not ending in '\\'"), "%s", err.msg);
}
