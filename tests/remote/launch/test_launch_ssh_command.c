/* The shell text of one part of an SSH trial (remote/launch/launch_ssh_command.c): pinned
 * whole, and run by a real /bin/sh to show that every value reaches the command as it was,
 * a quote and a space in a machine's name and the command included. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/launch_ssh_command.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/shquote.h"
#include "tests/support/timeout.h"

static const char MARK[] = "0123456789abcdef0123456789abcdef";

/* The text, with the guard's and the wrapping shell's own texts (groupstop's, tested in
 * test_groupstop.c) put in as they are, the rest spelt out. */
Test(launch_ssh_command, the_text_says_the_group_puts_the_guard_exports_and_execs)
{
    char *got = launch_ssh_command_build("python3 train.py --lr '0.1'", "m'0 a", 12, MARK);
    cr_assert_not_null(got);
    char *wrap = shquote(groupstop_trial_sh);
    cr_assert_not_null(wrap);
    const char *head = "printf 'tunedeck-pgid %s\\n' \"$$\" >&2; " GROUPSTOP_GUARD_SH("20");
    char *want = NULL;
    cr_assert(asprintf(&want,
                       "%sTUNEDECK_MACHINE='m'\\''0 a' TUNEDECK_TRIAL='12' "
                       "TUNEDECK_RUN_MARK='%s' "
                       "TUNEDECK_TRIAL_COMMAND='python3 train.py --lr '\\''0.1'\\''';"
                       " export TUNEDECK_MACHINE TUNEDECK_TRIAL TUNEDECK_RUN_MARK "
                       "TUNEDECK_TRIAL_COMMAND; exec sh -c %s tunedeck-trial",
                       head, MARK, wrap) > 0);
    cr_assert_str_eq(got, want);
    free(want);
    free(wrap);
    free(got);
}

/* The single launcher's part speaks for every machine: an empty name, still quoted. */
Test(launch_ssh_command, a_part_for_every_machine_exports_an_empty_name)
{
    char *got = launch_ssh_command_build("true", "", -3, MARK);
    cr_assert_not_null(got);
    cr_assert_not_null(strstr(got, "TUNEDECK_MACHINE='' TUNEDECK_TRIAL='-3' TUNEDECK_RUN_MARK="));
    free(got);
}

/* Run by a real sh in a session of its own, as sshd would: the pgid line comes first on
 * stderr, and the command sees each value byte for byte, the quote and space of the machine's
 * name and of its own words. */
Test(launch_ssh_command, a_real_shell_hands_every_value_over_as_it_was, .timeout = TEST_TIMEOUT_S)
{
    char *text = launch_ssh_command_build(
        "printf '%s|%s|%s|%s\\n' \"$TUNEDECK_MACHINE\" \"$TUNEDECK_TRIAL\" "
        "\"$TUNEDECK_RUN_MARK\" \"it's a word\"",
        "host 'q\" $x", 7, MARK);
    cr_assert_not_null(text);
    char *quoted = shquote(text);
    cr_assert_not_null(quoted);
    char *line = NULL;
    cr_assert(asprintf(&line, "setsid sh -c %s 2>&1", quoted) > 0);
    FILE *p = popen(line, "r");
    cr_assert_not_null(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    cr_assert_eq(pclose(p), 0, "%s", out);
    cr_assert_eq(strncmp(out, LAUNCH_SSH_PGID_MARK, strlen(LAUNCH_SSH_PGID_MARK)), 0, "%s", out);
    char want[256];
    snprintf(want, sizeof want, "\nhost 'q\" $x|7|%s|it's a word\n", MARK);
    cr_assert_not_null(strstr(out, want), "%s", out);
    free(line);
    free(quoted);
    free(text);
}
