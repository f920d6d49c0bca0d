/* The host pool: its hosts, and one pollfds/step over all of them for the loop, each step
 * under a time budget. Each host's connection is driven by hostconn.c. */
#include "remote/ssh/hostpool_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/ssh/identities.h"
#include "remote/ssh/shquote.h"
#include "remote/ssh/sshconfig.h"
#include "remote/ssh/sshpath.h"

enum { STEP_BUDGET_MS = 8 };

const char *hostpool_state_name(HostState s)
{
    static const char *const NAMES[] = {"idle", "resolving", "connecting", "handshake",
                                        "auth", "ready",     "down"};
    return NAMES[s];
}

const char *hostpool_key_name(HostKeyStatus k)
{
    static const char *const NAMES[] = {"unchecked", "ok",      "accepted", "unknown",
                                        "changed",   "revoked", "error"};
    return NAMES[k];
}

/* What a file that is not a regular one is, for the message. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "it is a folder"
           : S_ISFIFO(m) ? "it is a FIFO, not a regular file"
           : S_ISSOCK(m) ? "it is a socket, not a regular file"
           : S_ISCHR(m)  ? "it is a character device, not a regular file"
           : S_ISBLK(m)  ? "it is a block device, not a regular file"
                         : "it is not a regular file";
}

/* /dev/null is the documented way to name an empty configuration. */
static int is_dev_null(const struct stat *st)
{
    struct stat null_st;
    return S_ISCHR(st->st_mode) && stat("/dev/null", &null_st) == 0 && S_ISCHR(null_st.st_mode) &&
           st->st_rdev == null_st.st_rdev;
}

/* libssh skips a config file it cannot open without a word, and every alias in it would
 * then fail far from the cause ("cannot resolve"): a named one must be readable. Only a
 * regular file (or /dev/null) is read: a FIFO or a terminal would block the console
 * forever, so the open does not wait (O_NONBLOCK) and anything else is refused. */
static int check_ssh_config(const char *path, const char *named, Error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = fd < 0                                    ? strerror(errno)
                      : fstat(fd, &st) < 0                      ? strerror(errno)
                      : S_ISREG(st.st_mode) || is_dev_null(&st) ? NULL
                                                                : file_kind(st.st_mode);
    if (fd >= 0)
        close(fd);
    if (!why)
        return 0;
    if (strcmp(path, named) == 0)
        error_set(err, "the ssh configuration %s (TUNEDECK_SSH_CONFIG): cannot read it: %s", path,
                  why);
    else
        error_set(err, "the ssh configuration %s (TUNEDECK_SSH_CONFIG %s, expanded as libssh "
                       "expands it): cannot read it: %s",
                  path, named, why);
    return error_mark(err, ERROR_INPUT);
}

/* The configuration files libssh will read (the named one, else ~/.ssh/config and
 * /etc/ssh/ssh_config), each with what it Includes, may be trusted (sshconfig.h). libssh
 * finds ~/.ssh through the password database, not $HOME: so does this. */
int hostpool_configs_trusted(const char *named, Error *err)
{
    char ssh_dir[1024], user_config[1100];
    identity_ssh_dir(ssh_dir, sizeof ssh_dir);
    if (named && named[0])
        return sshconfig_check_trusted(named, ssh_dir, err);
    snprintf(user_config, sizeof user_config, "%s/config", ssh_dir);
    if (strcmp(ssh_dir, "/.ssh") != 0 && sshconfig_check_trusted(user_config, ssh_dir, err) < 0)
        return -1;
    return sshconfig_check_trusted("/etc/ssh/ssh_config", ssh_dir, err);
}

int hostpool_config_files(const char *named, const SshpathHost *host, SshmatchHost *match,
                          SshconfigHostFiles *out, Error *err)
{
    char ssh_dir[1024], user_config[1100];
    identity_ssh_dir(ssh_dir, sizeof ssh_dir);
    if (named && named[0])
        return sshconfig_host_files(named, ssh_dir, host, match, out, err);
    snprintf(user_config, sizeof user_config, "%s/config", ssh_dir);
    if (strcmp(ssh_dir, "/.ssh") != 0 &&
        sshconfig_host_files(user_config, ssh_dir, host, match, out, err) < 0)
        return -1;
    return sshconfig_host_files("/etc/ssh/ssh_config", ssh_dir, host, match, out, err);
}

HostPool *hostpool_new(const HostPoolOptions *o, Error *err)
{
    char ssh_dir[1024], path[sizeof((HostPool *)0)->config_path] = "",
                        for_libssh[sizeof((HostPool *)0)->config_for_libssh] = "";
    identity_ssh_dir(ssh_dir, sizeof ssh_dir);
    if (o && o->ssh_config && o->ssh_config[0] &&
        (sshpath_config_name(o->ssh_config, ssh_dir, path, sizeof path, for_libssh,
                             sizeof for_libssh, err) < 0 ||
         check_ssh_config(path, o->ssh_config, err) < 0))
        return NULL;
    if (hostpool_configs_trusted(path, err) < 0)
        return NULL;
    if (!ssh_version(SSH_VERSION_INT(0, 10, 6))) {
        error_set(err, "libssh %s found: expected 0.10.6 or newer", ssh_version(0));
        return NULL;
    }
    if (ssh_init() < 0) {
        error_set(err, "libssh: initialisation failed");
        return NULL;
    }
    /* A peer closing under a write must be an error code, never a signal. */
    struct sigaction old;
    if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
    HostPool *p = calloc(1, sizeof *p);
    if (!p) {
        ssh_finalize();
        error_set(err, "host pool: out of memory");
        return NULL;
    }
    if (o)
        p->opt = *o;
    snprintf(p->config_path, sizeof p->config_path, "%s", path);
    snprintf(p->config_for_libssh, sizeof p->config_for_libssh, "%s", for_libssh);
    if (p->opt.heartbeat_s <= 0)
        p->opt.heartbeat_s = 5;
    if (p->opt.heartbeat_misses <= 0)
        p->opt.heartbeat_misses = 3;
    if (p->opt.backoff_base_s <= 0)
        p->opt.backoff_base_s = 0.5;
    if (p->opt.backoff_max_s <= 0)
        p->opt.backoff_max_s = 30;
    p->rng = p->opt.seed ? p->opt.seed : (uint64_t)clock_now_ms() ^ (uint64_t)getpid() << 32;
    return p;
}

void hostpool_free(HostPool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        Host *h = p->hosts[i];
        rexec_fail_host(h, "the host pool was closed");
        rexec_release_host(h);
        host_teardown(h);
        host_forget_error(h);
        free(h);
    }
    free(p->hosts);
    free(p->slot_host);
    free(p);
    ssh_finalize();
}

long hostpool_add(HostPool *p, const HostConf *c, Error *err)
{
    if (host_name_valid(c->host, err) < 0 || user_name_valid(c->user, err) < 0)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        Host **g = realloc(p->hosts, cap * sizeof *g);
        if (!g)
            return error_set(err, "host pool: out of memory");
        p->hosts = g;
        p->cap = cap;
    }
    Host *h = calloc(1, sizeof *h);
    if (!h)
        return error_set(err, "host pool: out of memory");
    p->hosts[p->n] = h;
    h->conf = *c;
    const char *home = getenv("HOME");
    if (!home || !home[0]) { /* our own checks read the file too: no literal "~" */
        const struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    hostconf_expand_home(c->known_hosts[0] ? c->known_hosts : "~/.ssh/known_hosts", home,
                         h->known_file, sizeof h->known_file);
    hostconf_expand_home("~/.ssh/known_hosts", home, h->user_known[0], sizeof h->user_known[0]);
    hostconf_expand_home("~/.ssh/known_hosts2", home, h->user_known[1], sizeof h->user_known[1]);
    h->fd = -1;
    h->handshake_view_fd = -1;
    h->handshake_ms = -1;
    return (long)p->n++;
}

int hostpool_add_cluster(HostPool *p, const Cluster *c, Error *err)
{
    for (size_t i = 0; i < c->n_machines; i++) {
        HostConf hc;
        if (hostconf_from_machine(&c->ssh, &c->machines[i], &hc, err) < 0 ||
            hostpool_add(p, &hc, err) < 0)
            return -1;
    }
    return 0;
}

size_t hostpool_size(const HostPool *p)
{
    return p->n;
}

long hostpool_find(const HostPool *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->hosts[i]->conf.name, name) == 0)
            return (long)i;
    return -1;
}

void hostpool_info(const HostPool *p, size_t i, HostInfo *out)
{
    const Host *h = p->hosts[i];
    *out = (HostInfo){.name = h->conf.name,
                      .host = h->conf.host,
                      .user = h->conf.user,
                      .state = h->state,
                      .key = h->key,
                      .fingerprint = h->fingerprint,
                      .offered_fp = h->offered_fp,
                      .known_hosts = h->known_file,
                      .target = h->target[0] ? h->target : h->conf.host,
                      .port = h->port > 0        ? h->port
                              : h->conf.port > 0 ? h->conf.port
                                                 : 22,
                      .last_error = h->last_error ? h->last_error : "",
                      .refused = h->state == HOST_DOWN && h->refused,
                      .warning = h->warning,
                      .handshake_ms = h->handshake_ms,
                      .connects = h->connects,
                      .drops = h->drops,
                      .attempts = h->attempts,
                      .connect_timeout_s = h->conf.connect_timeout_s,
                      .retry_at_ms = host_retry_planned(h) ? h->retry_at_ms : 0};
}

void hostpool_connect(HostPool *p, size_t i, int keep)
{
    Host *h = p->hosts[i];
    h->keep = h->keep || keep;
    if (h->state == HOST_IDLE || h->state == HOST_DOWN) {
        h->attempt = h->state == HOST_DOWN ? h->attempt : 0;
        host_start_attempt(p, h, clock_now_ms());
    }
}

/* Work for a host is not an operator's ask to try again: a trial after a trial that failed on an
 * unreachable host would otherwise start an attempt each time, and the back-off would never
 * hold. Its exec waits for the next planned attempt (host_timers starts it). A refused host
 * (key, login, configuration) is tried at once: the pool never retries it by itself, so the
 * exec would wait out the back-off only to fail with the same words, while a known_hosts or
 * config fixed meanwhile is read by this attempt. */
void host_wanted(HostPool *p, Host *h, int64_t now_ms)
{
    if (h->state == HOST_IDLE) {
        h->attempt = 0;
        host_start_attempt(p, h, now_ms);
    } else if (h->state == HOST_DOWN && (h->refused || now_ms >= h->retry_at_ms)) {
        host_start_attempt(p, h, now_ms);
    }
}

int hostpool_accept_host_key(HostPool *p, size_t i, const char *fingerprint, Error *err)
{
    Host *h = p->hosts[i];
    if (strncmp(fingerprint, "SHA256:", 7) != 0)
        return error_set(err, "host %s: expected a SHA256:... fingerprint, found '%s'",
                         h->conf.name, fingerprint);
    snprintf(h->accept_fp, sizeof h->accept_fp, "%s", fingerprint);
    if (h->state == HOST_DOWN)
        host_start_attempt(p, h, clock_now_ms());
    return 0;
}

int hostpool_settled(const HostPool *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->hosts[i]->state != HOST_READY && p->hosts[i]->state != HOST_DOWN &&
            p->hosts[i]->state != HOST_IDLE)
            return 0;
    return 1;
}

static void min_deadline(int64_t *deadline, int64_t t)
{
    if (t > 0 && (*deadline < 0 || t < *deadline))
        *deadline = t;
}

size_t hostpool_pollfds(HostPool *p, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (p->cap_slots < p->n) {
        free(p->slot_host);
        p->slot_host = malloc(p->n * sizeof *p->slot_host);
        p->cap_slots = p->n;
    }
    size_t n = 0;
    int64_t now = clock_now_ms();
    if (p->behind) /* the last step stopped at its budget: come back at once */
        min_deadline(deadline_ms, now);
    for (size_t i = 0; i < p->n; i++) {
        Host *h = p->hosts[i];
        switch (h->state) {
        case HOST_IDLE:
            continue;
        case HOST_DOWN:
            if (host_retry_planned(h))
                min_deadline(deadline_ms, h->retry_at_ms);
            continue;
        case HOST_RESOLVING:
            min_deadline(deadline_ms, now + RESOLVE_POLL_MS);
            min_deadline(deadline_ms, h->deadline_ms);
            continue;
        case HOST_READY:
            min_deadline(deadline_ms, h->next_ka_ms);
            if (h->dirty)
                min_deadline(deadline_ms, now);
            break;
        default:
            min_deadline(deadline_ms, h->deadline_ms);
            break;
        }
        int fd = host_fd(h);
        if (fd < 0 || n >= cap)
            continue;
        short ev = POLLIN;
        if (h->state == HOST_CONNECTING)
            ev = POLLOUT;
        else if (ssh_get_poll_flags(h->s) & SSH_WRITE_PENDING)
            ev |= POLLOUT;
        p->slot_host[n] = i;
        fds[n++] = (struct pollfd){.fd = fd, .events = ev};
    }
    p->n_slots = n;
    return n;
}

/* One step does at most STEP_BUDGET_MS of work, so that the console's loop stays
 * responsive while hundreds of handshakes complete at once: what is left stays ready
 * (poll is level-triggered) and is served next time, starting where this step stopped. */
void hostpool_step(HostPool *p, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    double t0 = clock_now_s();
    size_t m = n < p->n_slots ? n : p->n_slots;
    for (size_t k = 0; k < m; k++) {
        size_t i = (p->io_rotor + k) % m;
        if (!fds[i].revents)
            continue;
        Host *h = p->hosts[p->slot_host[i]];
        if (host_fd(h) == fds[i].fd)
            host_io(p, h, fds[i].revents, now_ms);
        if ((clock_now_s() - t0) * 1000 > STEP_BUDGET_MS) {
            p->io_rotor = (i + 1) % m;
            p->behind = 1;
            return;
        }
    }
    for (size_t k = 0; k < p->n; k++) {
        size_t i = (p->timer_rotor + k) % p->n;
        host_timers(p, p->hosts[i], now_ms);
        if ((clock_now_s() - t0) * 1000 > STEP_BUDGET_MS) {
            p->timer_rotor = (i + 1) % p->n;
            p->behind = 1;
            return;
        }
    }
    p->behind = 0;
}

static size_t source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return hostpool_pollfds(ctx, fds, cap, deadline_ms);
}

static void source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hostpool_step(ctx, fds, n, now_ms);
}

long hostpool_attach(HostPool *p, EvLoop *l)
{
    return evloop_add(l, source_pollfds, source_step, p);
}

static int settled(void *ctx)
{
    return hostpool_settled(ctx);
}

int hostpool_run_until(HostPool *p, EvDoneFn done, void *done_ctx, int64_t deadline_ms)
{
    return evloop_run_source(source_pollfds, source_step, p, done, done_ctx, deadline_ms);
}

void hostpool_run_until_settled(HostPool *p, int64_t deadline_ms)
{
    hostpool_run_until(p, settled, p, deadline_ms);
}
