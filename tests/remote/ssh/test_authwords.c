/* What a failed login says of the agent. Regression: with no agent at all (SSH_AUTH_SOCK
 * unset, or a socket nothing listens on) it said "no agent key was accepted", and the operator
 * went looking for an agent problem that did not exist. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "remote/ssh/authwords.h"

Test(authwords, an_agent_that_answered_is_named_as_asked)
{
    AuthAgent a = {.auth_sock = "/tmp/ssh-x/agent.1"};
    char out[700];
    authwords_none_accepted(&a, out, sizeof out);
    cr_assert_str_eq(out, "no agent key or identity file was accepted");
    authwords_agent(&a, out, sizeof out);
    cr_assert_str_eq(out, "no agent key was accepted");
}

Test(authwords, no_agent_says_so_with_why)
{
    AuthAgent unset = {0}, empty = {.auth_sock = ""},
              dead = {.auth_sock = "/tmp/gone", .connect_errno = ECONNREFUSED};
    char out[700];
    authwords_none_accepted(&unset, out, sizeof out);
    cr_assert_str_eq(out, "no agent is running (SSH_AUTH_SOCK unset) and no identity file was "
                          "accepted");
    authwords_agent(&unset, out, sizeof out);
    cr_assert_str_eq(out, "no agent is running (SSH_AUTH_SOCK unset)");
    authwords_none_accepted(&empty, out, sizeof out);
    cr_assert_str_eq(out, "no agent is running (SSH_AUTH_SOCK empty) and no identity file was "
                          "accepted");
    authwords_none_accepted(&dead, out, sizeof out);
    cr_assert_str_eq(out, "no agent answers at SSH_AUTH_SOCK (/tmp/gone: Connection refused) and "
                          "no identity file was accepted");
}

/* The ssh config's IdentityAgent replaces SSH_AUTH_SOCK for libssh: where which line libssh
 * took cannot be told (a value too long to keep, or many under Match exec), an agent may have
 * been asked whatever the environment says. */
Test(authwords, an_agent_socket_that_cannot_be_told_counts_as_an_agent_asked)
{
    AuthAgent a = {.config_unknown = 1};
    char out[700];
    authwords_none_accepted(&a, out, sizeof out);
    cr_assert_str_eq(out, "no agent key or identity file was accepted");
}

/* Regression: `IdentityAgent none` counted as an agent asked ("no agent key was accepted"),
 * though libssh asks none (it connects to a socket named none, which is not there). */
Test(authwords, identity_agent_none_says_the_agent_is_turned_off_and_where)
{
    AuthAgent a = {.config_sock = "none",
                   .config_where = "/home/u/.ssh/config:7",
                   .auth_sock = "/tmp/ssh-x/agent.1",
                   .connect_errno = ENOENT};
    char out[700];
    authwords_none_accepted(&a, out, sizeof out);
    cr_assert_str_eq(out, "the agent is turned off (IdentityAgent none at /home/u/.ssh/config:7) "
                          "and no identity file was accepted");
    authwords_agent(&a, out, sizeof out);
    cr_assert_str_eq(out, "the agent is turned off (IdentityAgent none at /home/u/.ssh/config:7)");
}

/* Regression: an IdentityAgent socket nothing listens on counted as an agent asked; its
 * connect is what counts, not SSH_AUTH_SOCK's. */
Test(authwords, an_identity_agent_socket_that_does_not_answer_is_named_with_why)
{
    AuthAgent dead = {.config_sock = "/run/u/agent",
                      .config_where = "/etc/ssh/ssh_config:3",
                      .connect_errno = ECONNREFUSED},
              value = {.config_sock = "SSH_AUTH_SOCK",
                       .config_where = "cfg:2",
                       .auth_sock = "/tmp/ssh-x/agent.1",
                       .connect_errno = ENOENT},
              live = {.config_sock = "/run/u/agent", .config_where = "cfg:2"};
    char out[700];
    authwords_none_accepted(&dead, out, sizeof out);
    cr_assert_str_eq(out, "no agent answers at /run/u/agent (from IdentityAgent at "
                          "/etc/ssh/ssh_config:3): Connection refused and no identity file was "
                          "accepted");
    authwords_agent(&value, out, sizeof out);
    cr_assert_str_eq(out, "no agent answers at SSH_AUTH_SOCK (from IdentityAgent at cfg:2): No "
                          "such file or directory (libssh reads it as a file name, not as the "
                          "variable)");
    authwords_none_accepted(&live, out, sizeof out);
    cr_assert_str_eq(out, "no agent key or identity file was accepted", "SSH_AUTH_SOCK unset");
}

/* libssh copies the agent's socket path into sun_path with snprintf, cut to its first 107
 * bytes, and connects there. Regression: the probe refused such a path (ENAMETOOLONG) and a
 * failed login said no agent answered, where libssh had asked the agent at the cut path. */
Test(authwords, a_socket_path_too_long_for_sun_path_is_probed_cut_as_libssh_connects)
{
    char dir[] = "/tmp/authwords-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cut[AUTHWORDS_SUN_PATH], path[AUTHWORDS_SUN_PATH + 16];
    size_t pad = AUTHWORDS_SUN_PATH - 1 - strlen(dir) - 1;
    snprintf(cut, sizeof cut, "%s/%0*d", dir, (int)pad, 0);
    cr_assert_eq(strlen(cut), AUTHWORDS_SUN_PATH - 1);
    snprintf(path, sizeof path, "%s.sock", cut);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, cut, strlen(cut) + 1);
    cr_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    cr_assert_eq(listen(fd, 4), 0);
    int got = authwords_connect_errno(path);
    close(fd);
    unlink(cut);
    int gone = authwords_connect_errno(path);
    rmdir(dir);
    cr_assert_eq(got, 0, "libssh connects to the cut path, where an agent listens: %s",
                 strerror(got));
    cr_assert_eq(gone, ENOENT);
    AuthAgent a = {.auth_sock = path, .connect_errno = gone};
    char out[1200], want[1200];
    authwords_agent(&a, out, sizeof out);
    snprintf(want, sizeof want,
             "no agent answers at SSH_AUTH_SOCK (%s (libssh connects to its first %zu bytes, "
             "%s): No such file or directory)",
             path, AUTHWORDS_SUN_PATH - 1, cut);
    cr_assert_str_eq(out, want);
}

/* libssh 0.10.6 runs a Match exec command while it parses and takes the block's IdentityAgent
 * only if it succeeded; tunedeck does not run it again. Regression: such a line counted as an
 * agent asked, so with no agent anywhere a failed login still said "no agent key was
 * accepted". Now every socket libssh may have asked is probed: none answers, none was asked;
 * all answer, one was; else the words say which answers. */
Test(authwords, identity_agent_lines_under_match_exec_are_each_a_socket_libssh_may_have_asked)
{
    AuthAgent none = {.n_maybe = 2,
                      .maybe = {{.sock = "/run/a", .where = "cfg:2", .connect_errno = ENOENT},
                                {.where = "cfg:4"}}},
              all = {.config_sock = "/run/b",
                     .config_where = "cfg:6",
                     .n_maybe = 1,
                     .maybe = {{.sock = "/run/a", .where = "cfg:2"}}},
              some = {.auth_sock = "/tmp/ssh-x/agent.1",
                      .connect_errno = ECONNREFUSED,
                      .n_maybe = 1,
                      .maybe = {{.sock = "/run/a", .where = "cfg:2"}}},
              env = {.config_sock = "/run/b",
                     .config_where = "cfg:6",
                     .connect_errno = ENOENT,
                     .n_maybe = 1,
                     .maybe = {{.where = "cfg:2", .connect_errno = ECONNREFUSED}},
                     .auth_sock = "/tmp/ssh-x/agent.1"};
    char out[1200];
    authwords_none_accepted(&none, out, sizeof out);
    cr_assert_str_eq(out, "no agent is running (SSH_AUTH_SOCK unset); nor at /run/a "
                          "(IdentityAgent at cfg:2, under Match exec): No such file or directory "
                          "and no identity file was accepted");
    authwords_none_accepted(&all, out, sizeof out);
    cr_assert_str_eq(out, "no agent key or identity file was accepted");
    authwords_agent(&some, out, sizeof out);
    cr_assert_str_eq(out, "no agent key was accepted, if an agent was asked: libssh asked /run/a "
                          "(answers) if the Match exec command of IdentityAgent at cfg:2 "
                          "succeeded, else /tmp/ssh-x/agent.1 (does not answer: Connection "
                          "refused)");
    authwords_agent(&env, out, sizeof out);
    cr_assert_str_eq(out, "no agent answers at /run/b (from IdentityAgent at cfg:6): No such file "
                          "or directory; nor at SSH_AUTH_SOCK (Connection refused, as "
                          "IdentityAgent at cfg:2, under Match exec, leaves it)");
}

/* The words are as long as the config makes them: several Match exec sockets with long paths.
 * Regression: a failed login built them in 1200 bytes and the host kept 512, so what came
 * after them ("and no identity file was accepted", "(denied)", the fix) was cut off. Now each
 * call returns the whole length, as snprintf does, and a caller sizes its buffer from it. */
Test(authwords, long_words_say_their_whole_length_and_end_whole_when_given_it)
{
    char paths[SSHCONFIG_AGENT_MAYBE][400];
    AuthAgent a = {.auth_sock = "", .n_maybe = SSHCONFIG_AGENT_MAYBE};
    for (size_t i = 0; i < SSHCONFIG_AGENT_MAYBE; i++) {
        snprintf(paths[i], sizeof paths[i], "/run/%0380zu.sock", i);
        a.maybe[i] =
            (AuthMaybe){.sock = paths[i], .where = "cfg:2", .connect_errno = i ? ENOENT : 0};
    }
    size_t n = authwords_none_accepted(&a, NULL, 0);
    cr_assert_gt(n, 1600, "%zu", n);
    char *out = malloc(n + 1);
    cr_assert_eq(authwords_none_accepted(&a, out, n + 1), n);
    cr_assert_eq(strlen(out), n);
    const char *tail = "else no socket (SSH_AUTH_SOCK empty) and no identity file was accepted";
    cr_assert(strlen(out) > strlen(tail) && strcmp(out + n - strlen(tail), tail) == 0, "%s", out);
    char small[100];
    cr_assert_eq(authwords_none_accepted(&a, small, sizeof small), n, "cut, but the length whole");
    cr_assert_eq(strlen(small), sizeof small - 1);
    free(out);
}
