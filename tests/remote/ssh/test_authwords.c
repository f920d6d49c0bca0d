/* What a failed login says of the agent. Regression: with no agent at all (SSH_AUTH_SOCK
 * unset, or a socket nothing listens on) it said "no agent key was accepted", and the operator
 * went looking for an agent problem that did not exist. */
#include <criterion/criterion.h>
#include <errno.h>

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

/* The ssh config's IdentityAgent replaces SSH_AUTH_SOCK for libssh: an agent may have been
 * asked whatever the environment says. */
Test(authwords, an_identity_agent_line_counts_as_an_agent_asked)
{
    AuthAgent a = {.config_agent = 1};
    char out[700];
    authwords_none_accepted(&a, out, sizeof out);
    cr_assert_str_eq(out, "no agent key or identity file was accepted");
}
