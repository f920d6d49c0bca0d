/* A pool of SSH sessions, one per host, driven by the caller's poll loop: name resolution,
 * connect(), handshake, host-key check and authentication all proceed without blocking,
 * many hosts at once, each under its own deadline. Ready sessions carry exec channels;
 * heartbeats notice a silent host and kept hosts reconnect with capped backoff + jitter.
 * The commands run on those sessions are in rexec.h. */
#ifndef TUNEDECK_HOSTPOOL_H
#define TUNEDECK_HOSTPOOL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/evloop.h"
#include "core/model/cluster.h"
#include "remote/ssh/hostconf.h"

typedef struct HostPool HostPool;

typedef struct {
    const char *ssh_config;   /* NULL: ~/.ssh/config (and /etc/ssh/ssh_config) */
    int accept_new_host_keys; /* an unknown key is added to known_hosts; never a changed one */
    double heartbeat_s;       /* keep-alive period on ready sessions; default 5 */
    int heartbeat_misses;     /* silent this many periods: the host is down; default 3 */
    double backoff_base_s;    /* first reconnect delay; default 0.5 */
    double backoff_max_s;     /* reconnect delay cap; default 30 */
    uint64_t seed;            /* jitter */
} HostPoolOptions;

typedef enum {
    HOST_IDLE, /* never asked to connect */
    HOST_RESOLVING,
    HOST_CONNECTING, /* TCP */
    HOST_HANDSHAKE,  /* SSH banner, key exchange, host key */
    HOST_AUTH,
    HOST_READY,
    HOST_DOWN /* last_error says why; retried at retry_at when kept or an exec waits for it */
} HostState;

typedef enum {
    HOSTKEY_UNCHECKED,
    HOSTKEY_OK,       /* matches known_hosts */
    HOSTKEY_ACCEPTED, /* was unknown; added because the operator said so */
    HOSTKEY_UNKNOWN,  /* refused: not in known_hosts */
    HOSTKEY_CHANGED,  /* refused, always: known_hosts has another key for this host */
    HOSTKEY_REVOKED,  /* refused, always: known_hosts marks this key @revoked */
    HOSTKEY_ERROR
} HostKeyStatus;

typedef struct {
    const char *name, *host;
    const char *user; /* the inventory's login; "" when ~/.ssh/config (or the local user)
                       * decides */
    HostState state;
    HostKeyStatus key;
    const char *fingerprint; /* "SHA256:..." once the server key was seen, else "" */
    const char *offered_fp;  /* the unknown key the host last offered, kept across retries
                              * until it is known or accepted ("" none): what an operator may
                              * accept */
    const char *known_hosts; /* the one known_hosts file checked and written for this host */
    const char *target;      /* the address connected to (the ssh config's HostName, else
                              * host) and its port: known_hosts records a key for these */
    int port;
    const char *last_error;  /* "" when none */
    int refused;             /* down, and the last attempt refused (host key, login,
                              * identity, configuration, algorithms): refused again until a
                              * file is fixed, so never retried by itself; 0 for a transient
                              * failure (connection refused, timeout, lost) */
    const char *warning;     /* "" when none: a default identity left unused, and why */
    double handshake_ms;     /* connect() to authenticated, last success; < 0 never */
    int connects, drops;     /* successful connections; ready sessions lost */
    int attempts;            /* connection attempts started, failed ones too */
    double connect_timeout_s; /* one connection attempt's deadline */
    int64_t retry_at_ms;     /* down and retried (kept, or an exec waits): next attempt; 0
                              * when no attempt is planned */
} HostInfo;

/* Fails when the libssh at run time is older than 0.10.6. */
HostPool *hostpool_new(const HostPoolOptions *o, Error *err);
void hostpool_free(HostPool *p);
/* Adds a host (copied); returns its index. */
long hostpool_add(HostPool *p, const HostConf *h, Error *err);
/* Adds every machine of an inventory in order (index = machine index). */
int hostpool_add_cluster(HostPool *p, const Cluster *c, Error *err);
size_t hostpool_size(const HostPool *p);
long hostpool_find(const HostPool *p, const char *name);
void hostpool_info(const HostPool *p, size_t host, HostInfo *out);
const char *hostpool_state_name(HostState s);
const char *hostpool_key_name(HostKeyStatus k);

/* Starts connecting now (no-op when connecting or ready), a down host too, whatever its
 * back-off: an explicit ask (a start, the operator's reconnect). An exec is not one: it waits
 * for a down host's next planned attempt (rexec.h). keep: reconnect whenever it drops. */
void hostpool_connect(HostPool *p, size_t host, int keep);
/* The operator accepts an unknown host key after seeing its fingerprint (the console,
 * rexec --accept-fingerprint): on the next attempt the key is added to known_hosts only if
 * the host presents exactly this one; any other key is refused and nothing is written. The
 * acceptance is used by one attempt. A changed or revoked key is never accepted. Retries a
 * host that is down. */
int hostpool_accept_host_key(HostPool *p, size_t host, const char *fingerprint, Error *err);
/* 0 while a host has a connection attempt in flight (neither idle, ready nor down). It says
 * nothing of execs: a ready host's may still run, and a down host's may wait for its next
 * planned attempt; step until rexec_done for them. */
int hostpool_settled(const HostPool *p);

/* The poll interface (like launchers): one fd per host at most. step() also runs
 * deadlines, heartbeats and reconnects; call it after every poll, fds or not. */
size_t hostpool_pollfds(HostPool *p, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void hostpool_step(HostPool *p, const struct pollfd *fds, size_t n, int64_t now_ms);
/* Registers the pool on a loop (its pollfds/step); returns the source id or -1. */
long hostpool_attach(HostPool *p, EvLoop *l);
/* Polls the pool alone until done(done_ctx) (NULL: never) or deadline_ms passes: a blocking
 * wait for one of its execs (a scancel) while nothing else steps it. evloop_run_source's
 * returns. */
int hostpool_run_until(HostPool *p, EvDoneFn done, void *done_ctx, int64_t deadline_ms);
/* Polls until every host settled or the deadline passes (tools, tests): for connects, not
 * for execs (hostpool_settled). */
void hostpool_run_until_settled(HostPool *p, int64_t deadline_ms);

#endif
