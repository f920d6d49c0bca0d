/* What a failed login says of the agent (remote/ssh/authwords.h). */
#include "remote/ssh/authwords.h"

#include <errno.h>
#include <stdarg.h>
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

/* The words being written: cut to cap, but `used` counts them all, so that a caller given
 * too little room learns how much the whole message needs (authwords.h). */
typedef struct {
    char *out;
    size_t cap, used;
} Words;

__attribute__((format(printf, 2, 3))) static void say(Words *w, const char *fmt, ...)
{
    char *at = w->used < w->cap ? w->out + w->used : NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(at, at ? w->cap - w->used : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        w->used += (size_t)n;
}

/* " (libssh connects to its first N bytes, CUT)" for a path libssh cuts. */
static void say_cut(Words *w, const char *path)
{
    if (path && strlen(path) >= AUTHWORDS_SUN_PATH)
        say(w, " (libssh connects to its first %zu bytes, %.*s)", AUTHWORDS_SUN_PATH - 1,
            (int)(AUTHWORDS_SUN_PATH - 1), path);
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
static void say_socket(Words *w, const char *sock, int connect_errno)
{
    if (!sock || !sock[0])
        say(w, "no socket (SSH_AUTH_SOCK %s)", sock ? "empty" : "unset");
    else if (connect_errno == 0)
        say(w, "%s (answers)", sock);
    else
        say(w, "%s (does not answer: %s)", sock, strerror(connect_errno));
}

/* A block made uncertain by a Match exec command alone (or one whose reason is not known). */
static int by_exec_alone(const AuthMaybe *m)
{
    return !m->cond || m->cond->why == SSHMATCH_BY_EXEC;
}

/* What the block of a maybe line hangs on (sshconfig.h's SshconfigMaybe), after `its`: "its
 * Host line at B hangs on whether the HostName at Y took effect", "its Match line at B hangs on its
 * exec command and on which user the User line at Y left". */
static void say_hangs_on(Words *w, const char *its, const SshconfigMaybe *c)
{
    say(w, "%s %s line at %s hangs on ", its, c->match ? "Match" : "Host", c->block);
    const char *sep = "";
    if (c->why & SSHMATCH_BY_EXEC) {
        say(w, "its exec command");
        sep = " and on ";
    }
    if (c->why & SSHMATCH_BY_HOST) {
        say(w, "%swhether the HostName at %s took effect", sep, c->hostname);
        sep = " and on ";
    }
    if (c->why & SSHMATCH_BY_USER)
        say(w, "%swhich user the User line at %s left", sep, c->user);
}

/* Some of the sockets libssh may have asked answer, some do not: which was asked hangs on
 * what tunedeck cannot tell (a command it did not run again, a host or user that hangs on
 * one), and the words say so. */
static void say_uncertain(const AuthAgent *a, Words *w)
{
    say(w, "no agent key was accepted, if an agent was asked: libssh asked ");
    for (size_t i = 0; i < a->n_maybe; i++) {
        const AuthMaybe *m = &a->maybe[i];
        say_socket(w, maybe_socket(a, m), m->connect_errno);
        if (by_exec_alone(m))
            say(w, " if the Match exec command of IdentityAgent at %s succeeded, else ", m->where);
        else {
            say(w, " if IdentityAgent at %s applied (", m->where);
            say_hangs_on(w, "its", m->cond);
            say(w, "), else ");
        }
    }
    say_socket(w, authwords_socket(a), a->connect_errno);
}

/* Why a maybe line may not apply, inside parentheses after its place: "under Match exec", or
 * "whose Host line at B hangs on ...". */
static void say_under(Words *w, const AuthMaybe *m)
{
    if (by_exec_alone(m)) {
        say(w, "under Match exec");
        return;
    }
    say_hangs_on(w, "whose", m->cond);
}

/* The Match exec lines' sockets, none of which answers either: "; nor at ..." each. */
static void say_nor(const AuthAgent *a, Words *w)
{
    for (size_t i = 0; i < a->n_maybe; i++) {
        const AuthMaybe *m = &a->maybe[i];
        const char *sock = maybe_socket(a, m);
        if (!m->sock && !a->config_sock)
            continue; /* the same socket as the one already said */
        if (!m->sock) {
            say(w, "; nor at SSH_AUTH_SOCK (%s, as IdentityAgent at %s, ",
                sock ? (sock[0] ? strerror(m->connect_errno) : "empty") : "unset", m->where);
            say_under(w, m);
            say(w, ", leaves it)");
        } else {
            say(w, "; nor at %s (IdentityAgent at %s, ", sock, m->where);
            say_under(w, m);
            say(w, "): %s", strerror(m->connect_errno));
        }
    }
}

static void agent_words(const AuthAgent *a, Words *w)
{
    size_t of, k = answering(a, &of);
    if (agent_asked(a))
        say(w, "no agent key was accepted");
    else if (k)
        say_uncertain(a, w);
    else if (a->config_sock && strcmp(a->config_sock, "none") == 0)
        say(w, "the agent is turned off (IdentityAgent none at %s)", a->config_where);
    else if (a->config_sock) {
        /* ssh reads the value SSH_AUTH_SOCK as that variable; libssh 0.10.6 does not */
        say(w, "no agent answers at %s", a->config_sock);
        say_cut(w, a->config_sock);
        say(w, " (from IdentityAgent at %s): %s%s", a->config_where, strerror(a->connect_errno),
            strcmp(a->config_sock, "SSH_AUTH_SOCK") == 0
                ? " (libssh reads it as a file name, not as the variable)"
                : "");
    } else if (!a->auth_sock || !a->auth_sock[0])
        say(w, "no agent is running (SSH_AUTH_SOCK %s)", a->auth_sock ? "empty" : "unset");
    else {
        say(w, "no agent answers at SSH_AUTH_SOCK (%s", a->auth_sock);
        say_cut(w, a->auth_sock);
        say(w, ": %s)", strerror(a->connect_errno));
    }
    if (!agent_asked(a) && !k)
        say_nor(a, w);
}

size_t authwords_agent(const AuthAgent *a, char *out, size_t cap)
{
    Words w = {out, cap, 0};
    if (cap)
        out[0] = 0;
    agent_words(a, &w);
    return w.used;
}

size_t authwords_none_accepted(const AuthAgent *a, char *out, size_t cap)
{
    Words w = {out, cap, 0};
    if (cap)
        out[0] = 0;
    if (agent_asked(a))
        say(&w, "no agent key or identity file was accepted");
    else {
        agent_words(a, &w);
        say(&w, " and no identity file was accepted");
    }
    return w.used;
}
