/* The job secret (core/base/secret.c): fresh each time, hex both ways, refusals that never
 * repeat the text, and the constant-time comparison's answers. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/secret.h"

Test(secret, two_fresh_secrets_differ_and_are_64_lowercase_hex_digits)
{
    char a[SECRET_HEX_CHARS + 1], b[SECRET_HEX_CHARS + 1];
    Error err;
    cr_assert_eq(secret_new_hex(a, &err), 0, "%s", err.msg);
    cr_assert_eq(secret_new_hex(b, &err), 0, "%s", err.msg);
    cr_assert_eq(strlen(a), 64);
    cr_assert_eq(strspn(a, "0123456789abcdef"), 64, "%s", a);
    cr_assert_str_neq(a, b);
}

Test(secret, hex_round_trips)
{
    unsigned char raw[SECRET_BYTES], back[SECRET_BYTES];
    for (int i = 0; i < SECRET_BYTES; i++)
        raw[i] = (unsigned char)(i * 37 + 5);
    char hex[SECRET_HEX_CHARS + 1];
    secret_to_hex(raw, hex);
    Error err;
    cr_assert_eq(secret_from_hex(hex, back, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(raw, back, sizeof raw), 0);
    for (char *p = hex; *p; p++) /* either case */
        if (*p >= 'a')
            *p = (char)(*p - 'a' + 'A');
    cr_assert_eq(secret_from_hex(hex, back, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(raw, back, sizeof raw), 0);
}

Test(secret, a_wrong_length_or_a_non_hex_digit_is_refused_without_echoing_it)
{
    unsigned char out[SECRET_BYTES];
    Error err;
    cr_assert_eq(secret_from_hex("abc123", out, &err), -1);
    cr_assert(strstr(err.msg, "expected 64 hex digits"), "%s", err.msg);
    cr_assert(strstr(err.msg, "found 6 characters"), "%s", err.msg);
    cr_assert_null(strstr(err.msg, "abc123"), "%s", err.msg);
    char bad[SECRET_HEX_CHARS + 1];
    memset(bad, 'f', SECRET_HEX_CHARS);
    bad[SECRET_HEX_CHARS] = 0;
    bad[9] = 'g';
    cr_assert_eq(secret_from_hex(bad, out, &err), -1);
    cr_assert(strstr(err.msg, "position 10"), "%s", err.msg);
    cr_assert_null(strstr(err.msg, "fff"), "%s", err.msg);
}

Test(secret, equal_compares_every_byte)
{
    unsigned char a[32] = {0}, b[32] = {0};
    cr_assert(secret_equal(a, b, 32));
    b[31] = 1;
    cr_assert_not(secret_equal(a, b, 32));
    b[31] = 0;
    b[0] = 0x80;
    cr_assert_not(secret_equal(a, b, 32));
}

/* A crash while the secret is held must not write it to a core file (the worker calls this
 * before it reads its schedule). Criterion runs each test in a process of its own. */
Test(secret, no_core_dumps_once_asked)
{
    cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
    Error e = {0};
    cr_assert_eq(secret_no_core_dumps(&e), 0, "%s", e.msg);
    cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
}

/* PR_GET_DUMPABLE in a child after secret_no_core_dumps_unless(value), with what it returned. */
static void dumpable_after(const char *value, int *rc, int *dumpable)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        Error err;
        int out[2] = {secret_no_core_dumps_unless(value, &err), prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)};
        _exit(write(fds[1], out, sizeof out) == sizeof out ? 0 : 1);
    }
    close(fds[1]);
    int got[2];
    cr_assert_eq(read(fds[0], got, sizeof got), (ssize_t)sizeof got);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    *rc = got[0];
    *dumpable = got[1];
}

Test(secret, not_dumpable_from_the_start_unless_asked)
{
    static const char *const NOT_ONE[] = {NULL, "", "0", "yes", "1 "};
    int rc, dumpable;
    for (size_t i = 0; i < sizeof NOT_ONE / sizeof NOT_ONE[0]; i++) {
        dumpable_after(NOT_ONE[i], &rc, &dumpable);
        cr_assert_eq(rc, 1, "TUNEDECK_DUMPABLE=%s", NOT_ONE[i] ? NOT_ONE[i] : "(unset)");
        cr_assert_eq(dumpable, 0, "TUNEDECK_DUMPABLE=%s", NOT_ONE[i] ? NOT_ONE[i] : "(unset)");
    }
    dumpable_after("1", &rc, &dumpable);
    cr_assert_eq(rc, 0);
    cr_assert_eq(dumpable, 1);
}

/* The local keeper is a fork of tunedeck holding a copy of its memory: it stays not
 * dumpable (an exec'd program, a trial, starts dumpable again: prctl(2)). */
Test(secret, a_fork_keeps_it_not_dumpable)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        Error err;
        secret_no_core_dumps_unless(NULL, &err);
        pid_t child = fork();
        if (child == 0)
            _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 1);
        int st;
        waitpid(child, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st));
    cr_assert_eq(WEXITSTATUS(st), 0, "exit %d", WEXITSTATUS(st));
}
