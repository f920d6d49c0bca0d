/* One poll loop over the listening socket and every handshake in progress. Deadlines are
 * checked before the wait for the next worker, so a silent peer is dropped for its own
 * timeout even when the whole admission then runs out too. */
#include "tools/worker/psgate.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "tools/worker/psauth.h"
#include "tools/worker/psnet.h"

typedef struct {
    int fd;
    int64_t deadline_ms;
    char peer[80];
    PsAuthServer auth;
} Pending;

typedef struct {
    const PsGateConfig *cfg;
    Pending pend[PSGATE_MAX_PENDING];
    size_t n_pend;
    size_t refused;
    char last_refused[ERROR_MSG_MAX];
} Gate;

static void drop(Gate *g, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Closes pending i with a log line and a note for the final error. */
static void drop(Gate *g, size_t i, const char *fmt, ...)
{
    char why[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    Pending *p = &g->pend[i];
    snprintf(g->last_refused, sizeof g->last_refused, "%s: %s", p->peer, why);
    g->refused++;
    if (g->cfg->log) {
        char line[ERROR_MSG_MAX + 160];
        snprintf(line, sizeof line, "shard %u: refused %s: %s", g->cfg->shard, p->peer, why);
        g->cfg->log(g->cfg->log_userdata, line);
    }
    close(p->fd);
    g->pend[i] = g->pend[--g->n_pend];
}

static void drop_all(Gate *g, const char *why)
{
    while (g->n_pend > 0)
        drop(g, g->n_pend - 1, "%s", why);
}

/* How far a pending peer has come, for the choice of whom a full door drops: 0 has sent
 * nothing (or closed), 1 part of a hello, 2 a whole hello and waits for nothing but its own
 * proof. A real worker sends its hello the moment it connects and its proof one round trip
 * after the challenge, so a flood of silent connects only ever evicts its own kind; to push
 * out a worker waiting for its proof, 64 newer peers must each send a whole hello (none
 * needs the secret) within that round trip, and even then the worker only retries
 * (psauth_dial). The newcomer is never the one refused: refusing it would let 64 held
 * connections lock the door until their handshake time ran out, again and again. Bytes in
 * the socket not yet read count as sent (MSG_PEEK), so a hello that came with a burst of
 * accepts is not taken for silence. */
static int progress(const Pending *p)
{
    if (p->auth.state != 0)
        return 2;
    if (p->auth.fill > 0)
        return 1;
    unsigned char c;
    return recv(p->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0 ? 1 : 0;
}

static void accept_peers(Gate *g)
{
    const PsGateConfig *cfg = g->cfg;
    for (;;) {
        char peer[80];
        Error err;
        int fd = psnet_accept_now(cfg->listen_fd, peer, sizeof peer, &err);
        if (fd == -2)
            return;
        if (fd < 0) { /* EMFILE and the like: say so, keep serving who is already in */
            if (cfg->log) {
                char line[ERROR_MSG_MAX + 40];
                snprintf(line, sizeof line, "shard %u: %s", cfg->shard, err.msg);
                cfg->log(cfg->log_userdata, line);
            }
            return;
        }
        if (g->n_pend == PSGATE_MAX_PENDING) {
            size_t victim = 0;
            int victim_progress = progress(&g->pend[0]);
            for (size_t i = 1; i < g->n_pend; i++) {
                int pr = progress(&g->pend[i]);
                if (pr < victim_progress ||
                    (pr == victim_progress && g->pend[i].deadline_ms < g->pend[victim].deadline_ms)) {
                    victim = i;
                    victim_progress = pr;
                }
            }
            drop(g, victim, "%d handshakes at once: the oldest of the least advanced goes",
                 PSGATE_MAX_PENDING);
        }
        Pending *p = &g->pend[g->n_pend++];
        p->fd = fd;
        p->deadline_ms = clock_now_ms() + (int64_t)(cfg->handshake_timeout_s * 1000);
        snprintf(p->peer, sizeof p->peer, "%s", peer);
        psauth_server_init(&p->auth);
    }
}

int psgate_admit(const PsGateConfig *cfg, int *conn, Error *err)
{
    static Gate zero;
    Gate *g = malloc(sizeof *g); /* 64 handshakes' buffers: not on a thread's stack */
    if (!g)
        return error_set(err, "shard %u: out of memory", cfg->shard);
    *g = zero;
    g->cfg = cfg;
    for (size_t r = 0; r < cfg->n_workers; r++)
        conn[r] = -1;
    size_t joined = 0;
    int rc = -1;
    int64_t join_deadline = clock_now_ms() + (int64_t)(cfg->timeout_s * 1000);
    while (joined < cfg->n_workers) {
        int64_t now = clock_now_ms();
        for (size_t i = g->n_pend; i-- > 0;)
            if (now >= g->pend[i].deadline_ms)
                drop(g, i, "no complete handshake within %g s", cfg->handshake_timeout_s);
        if (now >= join_deadline) {
            char more[ERROR_MSG_MAX + 100] = "";
            if (g->refused)
                snprintf(more, sizeof more, "; refused %zu peers that failed the handshake, the "
                         "last %s", g->refused, g->last_refused);
            error_set(err, "shard %u: %zu of %zu workers connected: no %sworker connected within "
                           "%g s%s",
                      cfg->shard, joined, cfg->n_workers, joined ? "further " : "",
                      cfg->timeout_s, more);
            goto out;
        }
        struct pollfd pfd[PSGATE_MAX_PENDING + 1];
        pfd[0] = (struct pollfd){.fd = cfg->listen_fd, .events = POLLIN};
        int64_t wake = join_deadline;
        for (size_t i = 0; i < g->n_pend; i++) {
            pfd[i + 1] = (struct pollfd){.fd = g->pend[i].fd, .events = POLLIN};
            if (g->pend[i].deadline_ms < wake)
                wake = g->pend[i].deadline_ms;
        }
        int64_t left = wake - now;
        int n = poll(pfd, g->n_pend + 1, (int)(left < 0 ? 0 : left > 1000 ? 1000 : left));
        if (n < 0 && errno != EINTR) {
            error_set(err, "shard %u: poll: %s", cfg->shard, strerror(errno));
            goto out;
        }
        if (n <= 0)
            continue;
        /* Pending peers first, from the back, so that a drop (which moves the last entry into
         * its place) never skips one; new peers join after. */
        for (size_t i = g->n_pend; i-- > 0;) {
            if (!pfd[i + 1].revents)
                continue;
            Error why;
            int st = psauth_server_step(&g->pend[i].auth, g->pend[i].fd, cfg->secret, cfg->shard,
                                        cfg->n_workers, &why);
            if (st < 0) {
                drop(g, i, "%s", why.msg);
            } else if (st > 0) {
                uint32_t rank = g->pend[i].auth.rank;
                if (conn[rank] >= 0) {
                    /* Only a holder of the secret gets here: two hosts playing one machine. */
                    error_set(err, "shard %u: worker rank %u proved the handshake twice (again "
                                   "from %s): two processes play the same machine",
                              cfg->shard, rank, g->pend[i].peer);
                    goto out;
                }
                conn[rank] = g->pend[i].fd;
                g->pend[i] = g->pend[--g->n_pend];
                joined++;
                join_deadline = clock_now_ms() + (int64_t)(cfg->timeout_s * 1000);
            }
        }
        if (pfd[0].revents)
            accept_peers(g);
    }
    rc = 0;
out:
    drop_all(g, rc == 0 ? "every worker had joined before its handshake ended"
                        : "the shard gave up waiting for its workers");
    if (rc < 0)
        for (size_t r = 0; r < cfg->n_workers; r++)
            if (conn[r] >= 0) {
                close(conn[r]);
                conn[r] = -1;
            }
    free(g);
    return rc;
}
