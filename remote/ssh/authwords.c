/* What a failed login says of the agent (remote/ssh/authwords.h). */
#include "remote/ssh/authwords.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *authwords_socket(const AuthAgent *a)
{
    return a->config_sock ? a->config_sock : a->auth_sock;
}

int authwords_connect_errno(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    /* libssh's snprintf: cut to fit. Refusing it here (ENAMETOOLONG) said no agent answered
     * where libssh had connected to the cut path and asked that agent. */
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int why = 0;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EAGAIN &&
        errno != EINPROGRESS)
        why = errno;
    close(fd);
    return why;
}

/* " (libssh connects to its first N bytes, CUT)" for a path libssh cuts, else "". */
static const char *cut_words(const char *path, char *out, size_t cap)
{
    out[0] = 0;
    if (path && strlen(path) >= AUTHWORDS_SUN_PATH)
        snprintf(out, cap, " (libssh connects to its first %zu bytes, %.*s)",
                 AUTHWORDS_SUN_PATH - 1, (int)(AUTHWORDS_SUN_PATH - 1), path);
    return out;
}

static int agent_asked(const AuthAgent *a)
{
    const char *sock = authwords_socket(a);
    return a->config_unknown || (sock && sock[0] && a->connect_errno == 0);
}

void authwords_agent(const AuthAgent *a, char *out, size_t cap)
{
    char cut[AUTHWORDS_SUN_PATH + 64];
    if (agent_asked(a))
        snprintf(out, cap, "no agent key was accepted");
    else if (a->config_sock && strcmp(a->config_sock, "none") == 0)
        snprintf(out, cap, "the agent is turned off (IdentityAgent none at %s)", a->config_where);
    else if (a->config_sock)
        /* ssh reads the value SSH_AUTH_SOCK as that variable; libssh 0.10.6 does not */
        snprintf(out, cap, "no agent answers at %s%s (from IdentityAgent at %s): %s%s",
                 a->config_sock, cut_words(a->config_sock, cut, sizeof cut), a->config_where,
                 strerror(a->connect_errno),
                 strcmp(a->config_sock, "SSH_AUTH_SOCK") == 0
                     ? " (libssh reads it as a file name, not as the variable)"
                     : "");
    else if (!a->auth_sock || !a->auth_sock[0])
        snprintf(out, cap, "no agent is running (SSH_AUTH_SOCK %s)",
                 a->auth_sock ? "empty" : "unset");
    else
        snprintf(out, cap, "no agent answers at SSH_AUTH_SOCK (%s%s: %s)", a->auth_sock,
                 cut_words(a->auth_sock, cut, sizeof cut), strerror(a->connect_errno));
}

void authwords_none_accepted(const AuthAgent *a, char *out, size_t cap)
{
    if (agent_asked(a)) {
        snprintf(out, cap, "no agent key or identity file was accepted");
        return;
    }
    char agent[1200];
    authwords_agent(a, agent, sizeof agent);
    snprintf(out, cap, "%s and no identity file was accepted", agent);
}
