/* What a failed login says of the agent: whether one was asked at all, so that an operator
 * with no agent is not sent looking for an agent problem. */
#ifndef TUNEDECK_AUTHWORDS_H
#define TUNEDECK_AUTHWORDS_H

#include <stddef.h>

/* The agent libssh 0.10.6 asked for keys (agent.c: the ssh config's IdentityAgent socket,
 * else $SSH_AUTH_SOCK's, connected at the first ask; none when that is unset or empty, or the
 * connect fails). */
typedef struct {
    int config_agent;      /* an IdentityAgent line may apply: its socket is the one asked,
                            * which tunedeck does not look at (the agent counts as asked) */
    const char *auth_sock; /* $SSH_AUTH_SOCK, NULL when unset */
    int connect_errno;     /* the connect to auth_sock: 0 when it took one, else why not */
} AuthAgent;

/* The agent's part alone: "no agent key was accepted" when one was asked; else why none
 * was: "no agent is running (SSH_AUTH_SOCK unset)" (or "empty"), "no agent answers at
 * SSH_AUTH_SOCK (PATH: WHY)". */
void authwords_agent(const AuthAgent *a, char *out, size_t cap);

/* The agent and the key files together: "no agent key or identity file was accepted" when an
 * agent was asked, else authwords_agent's words and "and no identity file was accepted". */
void authwords_none_accepted(const AuthAgent *a, char *out, size_t cap);

#endif
