/* What a failed login says of the agent: whether one was asked at all, so that an operator
 * with no agent is not sent looking for an agent problem. */
#ifndef TUNEDECK_AUTHWORDS_H
#define TUNEDECK_AUTHWORDS_H

#include <stddef.h>
#include <sys/un.h>

#include "remote/ssh/sshconfig.h"

/* sun_path's size: a longer socket path is cut by libssh (authwords_connect_errno). */
#define AUTHWORDS_SUN_PATH (sizeof((struct sockaddr_un *)0)->sun_path)

/* The agent libssh 0.10.6 asked for keys (agent.c: the ssh config's IdentityAgent socket,
 * else $SSH_AUTH_SOCK's, connected at the first ask; none when that is unset or empty, or the
 * connect fails). libssh reads every IdentityAgent value as a socket path: "none" turns the
 * agent off only because no socket is named so (a connect to ./none that fails). */
/* An IdentityAgent line under a block that may or may not apply (sshmatch.h's MAYBE): a
 * `Match exec` block, whose command libssh ran while it parsed (tunedeck does not run it
 * again), or a Host or Match block that hangs on a HostName or User line under such a block. */
typedef struct {
    const char *sock;           /* the socket it names, NULL when it leaves $SSH_AUTH_SOCK's */
    const char *where;          /* its config:line */
    int connect_errno;          /* the connect to sock (auth_sock when NULL): 0 when it took one */
    const SshconfigMaybe *cond; /* what its block hangs on; NULL: its Match exec command */
} AuthMaybe;

typedef struct {
    int config_unknown; /* which socket libssh asked cannot be told (the agent counts as
                         * asked) */
    /* The Match exec lines before config_sock's, in order: libssh asked the first whose
     * command succeeded, else authwords_socket's. The agent counts as asked when every one
     * of these sockets answers, as not asked when none does; else the words say which
     * answers and which does not. */
    AuthMaybe maybe[SSHCONFIG_AGENT_MAYBE]; /* sshconfig keeps no more (agent_unknown then) */
    size_t n_maybe;
    const char *config_sock;  /* the IdentityAgent socket asked instead of auth_sock, NULL none */
    const char *config_where; /* its config:line */
    const char *auth_sock;    /* $SSH_AUTH_SOCK, NULL when unset */
    int connect_errno;        /* the connect to the socket asked: 0 when it took one, else why
                               * not */
} AuthAgent;

/* The socket libssh asked: the IdentityAgent one, else $SSH_AUTH_SOCK (NULL when neither). */
const char *authwords_socket(const AuthAgent *a);

/* Why a connect to the agent socket `path` fails now, 0 when it takes one, as libssh's
 * connect at the first ask did (socket.c's ssh_socket_unix; a listener with a full backlog is
 * there: taken as answering). libssh copies the path into sun_path with snprintf: a path of
 * AUTHWORDS_SUN_PATH bytes or more is cut to its first AUTHWORDS_SUN_PATH - 1, and that cut
 * path is the one it connects to, so it is the one probed here. */
int authwords_connect_errno(const char *path);

/* The agent's part alone: "no agent key was accepted" when one was asked; else why none
 * was: "no agent is running (SSH_AUTH_SOCK unset)" (or "empty"), "no agent answers at
 * SSH_AUTH_SOCK (PATH: WHY)", "the agent is turned off (IdentityAgent none at CONFIG:LINE)",
 * "no agent answers at PATH (from IdentityAgent at CONFIG:LINE): WHY". A PATH that libssh
 * cuts is followed by "(libssh connects to its first 107 bytes, CUT)". With IdentityAgent lines
 * under Match exec whose sockets do not answer either, "; nor at PATH (IdentityAgent at
 * CONFIG:LINE, under Match exec): WHY" follows, one each; when some answer and some do not,
 * "no agent key was accepted, if an agent was asked: libssh asked PATH (answers) if the Match
 * exec command of IdentityAgent at CONFIG:LINE succeeded, else ... (does not answer: WHY)".
 * A line whose block hangs on something else says that instead of "under Match exec" ("whose
 * Host line at CONFIG:LINE hangs on whether the HostName at CONFIG:LINE took effect") and of
 * the exec words ("if IdentityAgent at CONFIG:LINE applied (its Match line at CONFIG:LINE
 * hangs on which user the User line at CONFIG:LINE left)").
 * Like snprintf: writes at most cap bytes, always ended, and returns the length of the whole
 * words, which may be more (a config names many sockets, each with a long path): a caller
 * that must show them whole asks with cap 0 (out may be NULL) and gives that length + 1. */
size_t authwords_agent(const AuthAgent *a, char *out, size_t cap);

/* The agent and the key files together: "no agent key or identity file was accepted" when an
 * agent was asked, else authwords_agent's words and "and no identity file was accepted".
 * Returns the whole length, as authwords_agent. */
size_t authwords_none_accepted(const AuthAgent *a, char *out, size_t cap);

#endif
