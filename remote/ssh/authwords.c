/* What a failed login says of the agent (remote/ssh/authwords.h). */
#include "remote/ssh/authwords.h"

#include <stdio.h>
#include <string.h>

const char *authwords_socket(const AuthAgent *a)
{
    return a->config_sock ? a->config_sock : a->auth_sock;
}

static int agent_asked(const AuthAgent *a)
{
    const char *sock = authwords_socket(a);
    return a->config_unknown || (sock && sock[0] && a->connect_errno == 0);
}

void authwords_agent(const AuthAgent *a, char *out, size_t cap)
{
    if (agent_asked(a))
        snprintf(out, cap, "no agent key was accepted");
    else if (a->config_sock && strcmp(a->config_sock, "none") == 0)
        snprintf(out, cap, "the agent is turned off (IdentityAgent none at %s)", a->config_where);
    else if (a->config_sock)
        /* ssh reads the value SSH_AUTH_SOCK as that variable; libssh 0.10.6 does not */
        snprintf(out, cap, "no agent answers at %s (from IdentityAgent at %s): %s%s",
                 a->config_sock, a->config_where, strerror(a->connect_errno),
                 strcmp(a->config_sock, "SSH_AUTH_SOCK") == 0
                     ? " (libssh reads it as a file name, not as the variable)"
                     : "");
    else if (!a->auth_sock || !a->auth_sock[0])
        snprintf(out, cap, "no agent is running (SSH_AUTH_SOCK %s)",
                 a->auth_sock ? "empty" : "unset");
    else
        snprintf(out, cap, "no agent answers at SSH_AUTH_SOCK (%s: %s)", a->auth_sock,
                 strerror(a->connect_errno));
}

void authwords_none_accepted(const AuthAgent *a, char *out, size_t cap)
{
    if (agent_asked(a)) {
        snprintf(out, cap, "no agent key or identity file was accepted");
        return;
    }
    char agent[600];
    authwords_agent(a, agent, sizeof agent);
    snprintf(out, cap, "%s and no identity file was accepted", agent);
}
