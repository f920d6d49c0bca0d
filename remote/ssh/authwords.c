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

static int answers(const char *sock, int connect_errno)
{
    return sock && sock[0] && connect_errno == 0;
}

/* The socket a Match exec line leaves asked when its command succeeded. */
static const char *maybe_socket(const AuthAgent *a, const AuthMaybe *m)
{
    return m->sock ? m->sock : a->auth_sock;
}

/* How many of the sockets libssh may have asked answer, of how many (*of). */
static size_t answering(const AuthAgent *a, size_t *of)
{
    size_t k = answers(authwords_socket(a), a->connect_errno);
    for (size_t i = 0; i < a->n_maybe; i++)
        k += answers(maybe_socket(a, &a->maybe[i]), a->maybe[i].connect_errno);
    *of = a->n_maybe + 1;
    return k;
}

/* Every socket libssh may have asked answers (or which one cannot be told). */
static int agent_asked(const AuthAgent *a)
{
    size_t of, k = answering(a, &of);
    return a->config_unknown || k == of;
}

/* One socket libssh may have asked, and whether it answers: "PATH (answers)", "PATH (does not
 * answer: WHY)", "no socket (SSH_AUTH_SOCK unset)". */
static size_t say_socket(char *out, size_t cap, const char *sock, int connect_errno)
{
    if (!sock || !sock[0])
        return (size_t)snprintf(out, cap, "no socket (SSH_AUTH_SOCK %s)", sock ? "empty" : "unset");
    if (connect_errno == 0)
        return (size_t)snprintf(out, cap, "%s (answers)", sock);
    return (size_t)snprintf(out, cap, "%s (does not answer: %s)", sock, strerror(connect_errno));
}

/* Some of the sockets libssh may have asked answer, some do not: which was asked hangs on
 * commands tunedeck did not run again, and the words say so. */
static void say_uncertain(const AuthAgent *a, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(
        out, cap, "no agent key was accepted, if an agent was asked: libssh asked ");
    for (size_t i = 0; i < a->n_maybe && used < cap; i++) {
        const AuthMaybe *m = &a->maybe[i];
        used += say_socket(out + used, cap - used, maybe_socket(a, m), m->connect_errno);
        if (used < cap)
            used += (size_t)snprintf(out + used, cap - used,
                                     " if the Match exec command of IdentityAgent at %s "
                                     "succeeded, else ",
                                     m->where);
    }
    if (used < cap)
        say_socket(out + used, cap - used, authwords_socket(a), a->connect_errno);
}

/* The Match exec lines' sockets, none of which answers either: "; nor at ..." each. */
static void say_nor(const AuthAgent *a, char *out, size_t cap)
{
    size_t used = strlen(out);
    for (size_t i = 0; i < a->n_maybe && used < cap; i++) {
        const AuthMaybe *m = &a->maybe[i];
        const char *sock = maybe_socket(a, m);
        if (!m->sock && !a->config_sock)
            continue; /* the same socket as the one already said */
        if (!m->sock)
            used += (size_t)snprintf(
                out + used, cap - used,
                "; nor at SSH_AUTH_SOCK (%s, as IdentityAgent at %s, "
                "under Match exec, leaves it)",
                sock ? (sock[0] ? strerror(m->connect_errno) : "empty") : "unset", m->where);
        else
            used += (size_t)snprintf(out + used, cap - used,
                                     "; nor at %s (IdentityAgent at %s, under Match exec): %s",
                                     sock, m->where, strerror(m->connect_errno));
    }
}

void authwords_agent(const AuthAgent *a, char *out, size_t cap)
{
    char cut[AUTHWORDS_SUN_PATH + 64];
    size_t of, k = answering(a, &of);
    if (agent_asked(a))
        snprintf(out, cap, "no agent key was accepted");
    else if (k)
        say_uncertain(a, out, cap);
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
    if (!agent_asked(a) && !k)
        say_nor(a, out, cap);
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
