/* One host's connection, a state machine (resolve, TCP connect, SSH handshake, host-key
 * check, key/agent authentication, ready, down): each step taken only when its socket is
 * ready, under deadlines we keep ourselves; a ready host's heartbeats and a kept host's
 * reconnects. The pool (hostpool.c) polls and steps every host through here. */
#include "remote/ssh/hostpool_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/server.h> /* ssh_send_keepalive, a client call declared there */

#include "core/base/clock.h"
#include "core/base/termsafe.h"
#include "remote/ssh/identities.h"
#include "remote/ssh/knownhosts.h"
#include "remote/ssh/lookup.h"
#include "remote/ssh/shquote.h"
#include "remote/ssh/sshalgos.h"
#include "remote/ssh/sshmatch.h"
#include "remote/ssh/sshpath.h"

void host_teardown(Host *h)
{
    /* A lookup still running is let go of, never waited for: glibc cannot stop it, and one
     * against a silent DNS server runs for its whole timeout (lookup.h). */
    lookup_drop(h->lookup);
    h->lookup = NULL;
    if (h->ai) {
        freeaddrinfo(h->ai);
        h->ai = NULL;
    }
    rexec_drop_channels(h);
    if (h->auth_key) {
        ssh_key_free(h->auth_key);
        h->auth_key = NULL;
    }
    if (h->ident_key) {
        ssh_key_free(h->ident_key);
        h->ident_key = NULL;
    }
    sshconfig_host_files_free(&h->cfg);
    if (h->ev) {
        if (h->s)
            ssh_event_remove_session(h->ev, h->s);
        ssh_event_free(h->ev);
        h->ev = NULL;
    }
    if (h->s) {
        ssh_disconnect(h->s);
        ssh_free(h->s); /* closes the socket we handed over */
        h->s = NULL;
        h->fd = -1;
    }
    if (h->fd >= 0) {
        close(h->fd);
        h->fd = -1;
    }
    if (h->handshake_view_fd >= 0) {
        close(h->handshake_view_fd);
        h->handshake_view_fd = -1;
    }
}

static void host_vdown(HostPool *p, Host *h, int64_t now_ms, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* The connection is over: say why, fail what ran on it, and plan the retry. */
void host_down(HostPool *p, Host *h, int64_t now_ms, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_vdown(p, h, now_ms, fmt, ap);
    va_end(ap);
}

void host_refused(HostPool *p, Host *h, int64_t now_ms, const char *fmt, ...)
{
    h->refused = 1;
    h->keep = 0; /* no retry: the same files would refuse it again */
    va_list ap;
    va_start(ap, fmt);
    host_vdown(p, h, now_ms, fmt, ap);
    va_end(ap);
}

/* A failed attempt's words when no memory was left for them: static, never freed. */
static char NO_MEMORY_TO_SAY[] = "failed, and no memory was left to say why";

void host_forget_error(Host *h)
{
    if (h->last_error != NO_MEMORY_TO_SAY)
        free(h->last_error);
    h->last_error = NULL;
}

static void host_vdown(HostPool *p, Host *h, int64_t now_ms, const char *fmt, va_list ap)
{
    /* Whole, however long: its last words (what was denied, a key that cannot be read, the
     * fix) come after the agent's, which a config may make long (authwords.h). Made harmless,
     * as it may hold the server's words. */
    host_forget_error(h);
    char *raw = NULL;
    if (vasprintf(&raw, fmt, ap) < 0)
        raw = NULL;
    h->last_error = raw ? termsafe_dup(raw) : NULL;
    free(raw);
    if (!h->last_error) /* out of memory: said so, never an abort (error_no_memory's rule) */
        h->last_error = NO_MEMORY_TO_SAY;
    if (h->state == HOST_READY)
        h->drops++;
    char *why = NULL;
    if (asprintf(&why, "ssh to %s failed: %s", h->conf.name, h->last_error) < 0)
        why = NULL;
    rexec_fail_host(h, why ? why : h->last_error);
    free(why);
    host_teardown(h);
    h->state = HOST_DOWN;
    Backoff b = {(int64_t)(p->opt.backoff_base_s * 1000), (int64_t)(p->opt.backoff_max_s * 1000)};
    h->retry_at_ms = now_ms + backoff_delay_ms(&b, h->attempt, backoff_uniform(&p->rng));
    h->attempt++;
}

/* The inventory's explicit settings. libssh 0.10 lets a config file parsed later overwrite
 * them (and StrictHostKeyChecking, UserKnownHostsFile), so they are set again after it. */
static void apply_explicit(Host *h)
{
    const HostConf *c = &h->conf;
    if (c->user[0])
        ssh_options_set(h->s, SSH_OPTIONS_USER, c->user);
    if (c->port > 0) {
        unsigned int port = (unsigned int)c->port;
        ssh_options_set(h->s, SSH_OPTIONS_PORT, &port);
    }
    /* Our own checking decides (host_check_key, hostkey.c); libssh must never add a key by itself,
     * and must read exactly the file our messages name. */
    int strict = 1;
    ssh_options_set(h->s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict);
    /* ssh_connect expands the names (%d, %h, ~...): escaped, they name the very file that
     * tunedeck reads, checks and appends to. After ssh_connect libssh expands nothing more,
     * so known_server sets its names as they are. */
    char known[sizeof h->known_file * 2 + 2];
    if (sshpath_for_libssh(h->known_file, known, sizeof known) < 0)
        snprintf(known, sizeof known, "%s", "/nonexistent/known_hosts"); /* cannot happen */
    ssh_options_set(h->s, SSH_OPTIONS_KNOWNHOSTS, known);
    ssh_options_set(h->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, known);
    /* A LogLevel line would make libssh write to stderr, the console's screen, and copy the
     * server's own text (its banner, its disconnect message) there raw, past termsafe. */
    int verbosity = SSH_LOG_NOLOG;
    ssh_options_set(h->s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
}

static int session_configure(HostPool *p, Host *h, Error *err)
{
    const HostConf *c = &h->conf;
    int off = 0;
    h->s = ssh_new();
    if (!h->s)
        return error_set(err, "ssh configuration: out of memory");
    ssh_options_set(h->s, SSH_OPTIONS_HOST, c->host);
    apply_explicit(h);
    if (hostpool_configs_trusted(p->config_path, err) < 0)
        return -1;
    /* What libssh matches the config's Host and Match lines against as it starts to parse. */
    char *alias = NULL, *user_before = NULL;
    if (ssh_options_get(h->s, SSH_OPTIONS_HOST, &alias) != SSH_OK)
        alias = NULL;
    if (ssh_options_get(h->s, SSH_OPTIONS_USER, &user_before) != SSH_OK)
        user_before = NULL;
    char alias_kept[sizeof h->target];
    snprintf(alias_kept, sizeof alias_kept, "%s", alias ? alias : c->host);
    SshmatchHost match;
    sshmatch_begin(&match, alias_kept, NULL, user_before);
    ssh_string_free_char(alias);
    ssh_string_free_char(user_before);
    if (ssh_options_parse_config(h->s, p->config_path[0] ? p->config_for_libssh : NULL) < 0)
        return error_set(err, "ssh configuration: %s", ssh_get_error(h->s));
    ssh_options_set(h->s, SSH_OPTIONS_PROCESS_CONFIG, &off);
    apply_explicit(h);
    host_load_identity(h);
    /* We hand libssh a socket we connected ourselves: a proxy would be bypassed silently.
     * libssh 0.10 turns ProxyJump into a ProxyCommand, so this sees both. */
    char *proxy = NULL;
    h->proxy[0] = 0;
    if (ssh_options_get(h->s, SSH_OPTIONS_PROXYCOMMAND, &proxy) == SSH_OK && proxy) {
        if (strcmp(proxy, "none") != 0)
            snprintf(h->proxy, sizeof h->proxy, "%s", proxy);
        ssh_string_free_char(proxy);
    }
    char *target = NULL;
    if (ssh_options_get(h->s, SSH_OPTIONS_HOST, &target) == SSH_OK && target) {
        snprintf(h->target, sizeof h->target, "%s", target);
        ssh_string_free_char(target);
    } else {
        snprintf(h->target, sizeof h->target, "%s", c->host);
    }
    unsigned int port = 22;
    ssh_options_get_port(h->s, &port);
    h->port = (int)port;
    /* The IdentityFile files libssh will read for this very host: its %h, %r and %p are
     * what ssh_connect expands them with (HostName, the user and port set last). */
    char *user = NULL;
    if (ssh_options_get(h->s, SSH_OPTIONS_USER, &user) != SSH_OK)
        user = NULL;
    const struct passwd *me = user ? NULL : getpwuid(getuid());
    SshpathHost for_host = {h->target, user ? user : me ? me->pw_name : NULL, port};
    match.target = h->target;
    int ids_rc = hostpool_config_files(p->config_path, &for_host, &match, &h->cfg, err);
    ssh_string_free_char(user);
    if (ids_rc < 0)
        return -1;
    ssh_callbacks_init(&h->scb);
    h->scb.userdata = h;
    h->scb.auth_function = host_refuse_passphrase;
    ssh_set_callbacks(h->s, &h->scb);
    ssh_set_blocking(h->s, 0);
    return 0;
}

static void begin_connect(HostPool *p, Host *h, int64_t now_ms);

int host_retry_planned(const Host *h)
{
    return h->state == HOST_DOWN && h->retry_at_ms > 0 && (h->keep || rexec_waiting(h));
}

void host_start_attempt(HostPool *p, Host *h, int64_t now_ms)
{
    host_teardown(h);
    h->key = HOSTKEY_UNCHECKED;
    h->fingerprint[0] = 0;
    h->passphrase_needed = 0;
    h->auth_stage = 0;
    h->started_ms = now_ms;
    h->deadline_ms = now_ms + (int64_t)(h->conf.connect_timeout_s * 1000);
    h->retry_at_ms = 0;
    h->refused = 0;
    h->attempts++;
    /* Before session_configure, which reads it (host_load_identity). */
    const char *blocks = file_would_block(h->conf.identity);
    if (blocks) {
        host_refused(p, h, now_ms,
                     "the identity %s (the inventory's ssh.identity) is %s: libssh would wait "
                     "forever to read it; refused",
                     h->conf.identity, blocks);
        return;
    }
    Error err;
    if (session_configure(p, h, &err) < 0) {
        host_refused(p, h, now_ms, "%s", err.msg);
        return;
    }
    host_check_default_identities(h);
    unsigned open_mode = identity_too_open(h->conf.identity);
    if (open_mode) {
        host_refused(p, h, now_ms,
                     "the identity %s (the inventory's ssh.identity) may be read by others "
                     "(mode %03o): refused, as ssh refuses it; chmod 600 it",
                     h->conf.identity, open_mode);
        return;
    }
    if (h->proxy[0]) {
        host_refused(p, h, now_ms,
                     "the ssh configuration gives %s a ProxyCommand or ProxyJump (%s): tunedeck "
                     "connects directly and does not use proxies; give the host an address it can "
                     "reach, or remove the proxy for it",
                     h->conf.host, h->proxy);
        return;
    }
    /* Before any connection: the handshake reads known_hosts before the key check does
     * (knownhosts_view, then libssh choosing the key types), and a FIFO named there blocked
     * that read, and with it the whole loop, forever. The rest (its owner, mode, a folder)
     * is the key check's (knownhosts_check_private). */
    const char *kh_blocks = file_would_block(h->known_file);
    if (kh_blocks) {
        h->key = HOSTKEY_ERROR;
        host_refused(p, h, now_ms,
                     "cannot check the host key: known_hosts file %s is %s: the read would wait "
                     "forever; refused",
                     h->known_file, kh_blocks);
        return;
    }
    if (host_name_valid(h->target, &err) < 0) {
        host_down(p, h, now_ms, "%s (from the ssh configuration)", err.msg);
        return;
    }
    snprintf(h->port_text, sizeof h->port_text, "%d", h->port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    /* A literal address needs no lookup; a name goes to the resolver threads. */
    const char *name = h->target;
    char bare[256];
    size_t tl = strlen(name);
    if (name[0] == '[' && tl > 2 && name[tl - 1] == ']') {
        snprintf(bare, sizeof bare, "%.*s", (int)(tl - 2), name + 1);
        name = bare;
    }
    if (getaddrinfo(name, h->port_text, &hints, &h->ai) == 0) {
        begin_connect(p, h, now_ms);
        return;
    }
    h->ai = NULL;
    /* name may be bare itself: lookup_start copies it. */
    if (!(h->lookup = lookup_start(name, h->port_text))) {
        host_down(p, h, now_ms, "cannot start resolving %s", h->target);
        return;
    }
    h->state = HOST_RESOLVING;
}

static void begin_connect(HostPool *p, Host *h, int64_t now_ms)
{
    int socket_errno = 0;
    for (struct addrinfo *a = h->ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            socket_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
            h->fd = fd;
            h->state = HOST_CONNECTING;
            return;
        }
        int e = errno;
        close(fd);
        if (!a->ai_next) {
            host_down(p, h, now_ms, "connect to %s port %d: %s", h->target, h->port, strerror(e));
            return;
        }
    }
    if (socket_errno == EMFILE || socket_errno == ENFILE) {
        /* Many hosts at once: the descriptor limit, not the host, is the problem. */
        struct rlimit rl = {0, 0};
        getrlimit(RLIMIT_NOFILE, &rl);
        host_down(p, h, now_ms,
                  "connect to %s port %d: cannot open a socket: %s (this process may open "
                  "%llu files; raise it with ulimit -n)",
                  h->target, h->port, strerror(socket_errno), (unsigned long long)rl.rlim_cur);
    } else if (socket_errno) {
        host_down(p, h, now_ms, "connect to %s port %d: cannot open a socket: %s", h->target,
                  h->port, strerror(socket_errno));
    } else {
        host_down(p, h, now_ms, "connect to %s port %d: no usable address", h->target, h->port);
    }
}

static void poll_resolver(HostPool *p, Host *h, int64_t now_ms)
{
    int rc = lookup_result(h->lookup, &h->ai);
    if (rc == EAI_INPROGRESS)
        return;
    lookup_drop(h->lookup);
    h->lookup = NULL;
    if (rc != 0) {
        host_down(p, h, now_ms, "cannot resolve %s: %s", h->target, gai_strerror(rc));
        return;
    }
    begin_connect(p, h, now_ms);
}

/* Why the session failed, into out: during the handshake, and after login alike. libssh 0.10
 * records a server's SSH_MSG_DISCONNECT as its error ("Received SSH_MSG_DISCONNECT: 11:text"),
 * but later events overwrite that. When the message comes right after the version line, the
 * socket event it handles next in the same round makes it "Socket error: Operation now in
 * progress" (or "...: Success": an errno read where no call failed), 8 of 20 tries against
 * tests/fixtures/ssh_disconnect.py's "early" mode; after login a channel's own failure or the
 * next call on the dead session does. The text itself stays in the session (its
 * peer_discon_msg), which ssh_get_disconnect_message gives once the session is disconnected:
 * so it is disconnected here, as host_teardown would do next. ssh_disconnect frees the
 * session's channels: the execs let go of theirs first (their callbacks go with them), and
 * the session leaves its event, as in host_teardown. Per session, no global state: nothing
 * for a log callback to sort out. */
static void session_failure(Host *h, char *out, size_t cap)
{
    static const char RECEIVED[] = "Received SSH_MSG_DISCONNECT: ";
    const char *said = ssh_get_error(h->s);
    const char *text = strncmp(said, RECEIVED, sizeof RECEIVED - 1) == 0
                           ? strchr(said + sizeof RECEIVED - 1, ':')
                           : NULL;
    int reason;
    if (text && sscanf(said + sizeof RECEIVED - 1, "%d", &reason) == 1) {
        snprintf(out, cap, "the server disconnected (reason %d): %s", reason, text + 1);
        return;
    }
    char libssh[512];
    snprintf(libssh, sizeof libssh, "%s", said);
    if (h->ev) {
        ssh_event_remove_session(h->ev, h->s);
        ssh_event_free(h->ev);
        h->ev = NULL;
    }
    rexec_drop_channels(h);
    ssh_disconnect(h->s);
    const char *message = ssh_get_disconnect_message(h->s);
    if (message)
        snprintf(out, cap, "the server disconnected: %s", message);
    else if (strcmp(libssh, "Socket error: disconnected") == 0)
        snprintf(out, cap, "the server closed the connection with no message");
    else
        snprintf(out, cap, "%s", libssh);
}

/* A logged-in session died (the server's DISCONNECT, a reset, a close): the host goes down
 * with the server's own words when it sent any. Every exec on it fails with that reason
 * (rexec.c leaves an exec whose session died to this), after the lines it had delivered. */
static void session_lost(HostPool *p, Host *h, int64_t now_ms)
{
    char why[1024];
    session_failure(h, why, sizeof why);
    host_down(p, h, now_ms, "connection closed: %s", why);
}

static void drive_handshake(HostPool *p, Host *h, int64_t now_ms)
{
    int rc = ssh_connect(h->s);
    if (rc == SSH_AGAIN)
        return;
    if (rc != SSH_OK) {
        char why[1024];
        session_failure(h, why, sizeof why);
        const char *method = strstr(why, "no match for method ");
        /* libssh 0.10: "no match for method M: server [a,b], client [c,d]" */
        char server_list[1024] = "";
        const char *server = method ? strstr(method, ": server [") : NULL;
        if (server) {
            server += strlen(": server [");
            snprintf(server_list, sizeof server_list, "%.*s", (int)strcspn(server, "]"), server);
        }
        if (method)
            method += strlen("no match for method ");
        if (method && sshalgos_server_only_weak(method, server_list)) {
            /* libssh's words list both sides' algorithms; the server's say what to change. */
            const char *client = strstr(method, ", client [");
            host_down(p, h, now_ms,
                      "ssh handshake with %s port %d: the server offers only algorithms "
                      "tunedeck never uses (SHA-1 kex or signatures, DSA, CBC, MD5): %.*s",
                      h->target, h->port, client ? (int)(client - method) : (int)strlen(method),
                      method);
        } else if (method) {
            /* Two lists that do not meet, at least one of the server's names allowed: the
             * ssh config (or the server) can change, both lists say how. */
            host_down(p, h, now_ms, "ssh handshake with %s port %d: no algorithm in common for %s",
                      h->target, h->port, method);
        } else {
            host_down(p, h, now_ms, "ssh handshake with %s port %d: %s", h->target, h->port, why);
        }
        return;
    }
    /* The lines were checked, but libssh's own defaults (CBC in FIPS mode) or another
     * build's global config are not: what was agreed is checked too. No server sshd here
     * offers a weak algorithm that this libssh would also offer unasked, so only the unit
     * tests (test_sshalgos.c) reach the refusal. */
    Error err;
    SshNegotiated used = {ssh_get_kex_algo(h->s), ssh_get_cipher_in(h->s), ssh_get_cipher_out(h->s),
                          ssh_get_hmac_in(h->s), ssh_get_hmac_out(h->s)};
    if (sshalgos_check_negotiated(&used, &err) < 0) {
        host_refused(p, h, now_ms, "ssh handshake with %s port %d: %s", h->target, h->port,
                     err.msg);
        return;
    }
    if (h->handshake_view_fd >= 0) { /* the check reads the file afresh (known_server) */
        ssh_options_set(h->s, SSH_OPTIONS_KNOWNHOSTS, h->known_file);
        ssh_options_set(h->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, h->known_file);
        close(h->handshake_view_fd);
        h->handshake_view_fd = -1;
    }
    host_check_key(p, h, now_ms);
    if (h->state == HOST_AUTH)
        host_auth_step(p, h, now_ms);
}

static void tcp_connected(HostPool *p, Host *h, int64_t now_ms)
{
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
        e = errno;
    if (e == EINPROGRESS)
        return;
    if (e) {
        host_down(p, h, now_ms, "connect to %s port %d: %s", h->target, h->port, strerror(e));
        return;
    }
    ssh_options_set(h->s, SSH_OPTIONS_FD, &h->fd);
    h->fd = -1; /* libssh owns it now */
    Error err;
    if (host_use_handshake_view(h, &err) < 0) {
        host_down(p, h, now_ms, "%s", err.msg);
        return;
    }
    h->state = HOST_HANDSHAKE;
    drive_handshake(p, h, now_ms);
}

int host_fd(const Host *h)
{
    if (h->state == HOST_CONNECTING)
        return h->fd;
    if (h->s && h->state >= HOST_HANDSHAKE && h->state <= HOST_READY)
        return ssh_get_fd(h->s);
    return -1;
}
void host_io(HostPool *p, Host *h, short revents, int64_t now_ms)
{
    switch (h->state) {
    case HOST_CONNECTING:
        tcp_connected(p, h, now_ms);
        break;
    case HOST_HANDSHAKE:
        drive_handshake(p, h, now_ms);
        break;
    case HOST_AUTH:
        host_auth_step(p, h, now_ms);
        break;
    case HOST_READY:
        if (revents & (POLLIN | POLLHUP | POLLERR))
            h->last_rx_ms = now_ms;
        ssh_event_dopoll(h->ev, 0);
        h->dirty = 1;
        if (!ssh_is_connected(h->s))
            session_lost(p, h, now_ms); /* before a keep-alive or a channel call overwrites why */
        break;
    default:
        break;
    }
}

/* libssh may read a keep-alive reply inside one of its own calls (waiting on the pending
 * global request), so our poll() never sees those bytes arrive and a quiet but live host
 * looked "silent". The kernel knows when data last came in on the socket: a stopped or
 * unreachable peer sends none, a live sshd answers every keep-alive. */
static void last_rx_from_kernel(Host *h, int64_t now_ms)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    int fd = host_fd(h);
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
        len < offsetof(struct tcp_info, tcpi_last_data_recv) + sizeof ti.tcpi_last_data_recv)
        return;
    int64_t kernel_rx_ms = now_ms - (int64_t)ti.tcpi_last_data_recv;
    if (kernel_rx_ms > h->last_rx_ms)
        h->last_rx_ms = kernel_rx_ms;
}
void host_timers(HostPool *p, Host *h, int64_t now_ms)
{
    switch (h->state) {
    case HOST_RESOLVING:
        poll_resolver(p, h, now_ms);
        if (h->state == HOST_RESOLVING && now_ms >= h->deadline_ms)
            host_down(p, h, now_ms, "resolving %s took longer than %.1f s", h->target,
                      h->conf.connect_timeout_s);
        break;
    case HOST_CONNECTING:
    case HOST_HANDSHAKE:
    case HOST_AUTH:
        if (now_ms >= h->deadline_ms)
            host_down(p, h, now_ms, "no answer within %.1f s (%s)", h->conf.connect_timeout_s,
                      h->state == HOST_CONNECTING  ? "TCP connect"
                      : h->state == HOST_HANDSHAKE ? "SSH handshake"
                                                   : "authentication");
        break;
    case HOST_READY: {
        if (!ssh_is_connected(h->s)) {
            session_lost(p, h, now_ms);
            break;
        }
        int64_t period = (int64_t)(p->opt.heartbeat_s * 1000);
        if (now_ms - h->last_rx_ms > period * p->opt.heartbeat_misses)
            last_rx_from_kernel(h, now_ms);
        if (now_ms - h->last_rx_ms > period * p->opt.heartbeat_misses) {
            host_down(p, h, now_ms, "silent for %.1f s (no answer to keep-alives)",
                      (double)(now_ms - h->last_rx_ms) / 1000);
            break;
        }
        if (now_ms >= h->next_ka_ms) {
            ssh_send_keepalive(h->s);
            h->next_ka_ms = now_ms + period;
        }
        if (h->dirty) {
            h->dirty = 0;
            rexec_pump_host(p, h);
        }
        if (h->s && !ssh_is_connected(h->s))
            session_lost(p, h, now_ms); /* died in a keep-alive or a channel call */
        break;
    }
    case HOST_DOWN:
        if (host_retry_planned(h) && now_ms >= h->retry_at_ms)
            host_start_attempt(p, h, now_ms);
        break;
    default:
        break;
    }
}
