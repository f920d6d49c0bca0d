/* Internals shared by the host pool, its connections (hostconn.c) and its exec channels
 * (rexec.c). Only rexec.c knows an exec's fields, so this header needs no rexec.h. */
#ifndef TUNEDECK_HOSTPOOL_PRIV_H
#define TUNEDECK_HOSTPOOL_PRIV_H

#include <netdb.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "remote/ssh/backoff.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/lookup.h"
#include "remote/ssh/sshconfig.h"

/* An exec channel (rexec.c owns its fields): a host keeps the list of its own. */
typedef struct RemoteExec RemoteExec;

typedef struct {
    HostConf conf;
    HostState state;
    HostKeyStatus key;
    char fingerprint[128];
    /* HostInfo.last_error, NULL none: allocated to its whole length (host_vdown), since a
     * failed login may name many agent sockets and key files before its last words. */
    char *last_error;
    int keep, attempt, attempts, connects, drops, dirty; /* attempts: started, all told */
    /* The last attempt was refused (host key, login, configuration): the pool never retries
     * it by itself (keep is cleared), and an exec tries it at once (host_wanted), since
     * waiting changes nothing and a fixed file is read by the next attempt anyway. */
    int refused;
    int fd;
    int handshake_view_fd; /* the known_hosts view libssh reads during the handshake, or -1 */
    ssh_session s;
    ssh_event ev;
    struct ssh_callbacks_struct scb;
    int passphrase_needed;
    char accept_fp[128];    /* the operator accepted this unknown key, for one attempt */
    char offered_fp[128];   /* the unknown key last offered (HostInfo.offered_fp) */
    char known_file[512];   /* the known_hosts file: the inventory's, else ~/.ssh/known_hosts */
    /* ~/.ssh/known_hosts and known_hosts2: read for @revoked lines only, as ssh reads them
     * whatever file the inventory names (hostrevoke.c) */
    char user_known[2][512];
    char proxy[256];        /* the ssh config asks for a proxy we do not support */
    ssh_key ident_key;      /* the inventory's identity, loaded: the only key offered */
    unsigned open_defaults; /* bit i: ~/.ssh/IDENTITY_DEFAULT_NAMES[i] others may read */
    /* The config's IdentityFile and RevokedHostKeys files for this host (sshconfig_host_files),
     * in file order. */
    SshconfigHostFiles cfg;
    /* Without libssh's auto: 0 the agent, then 1 + index into the keys it would offer (the
     * inventory's unloaded identity, the config's, last line first, the defaults). */
    int auth_stage;
    ssh_key auth_key;       /* the default key being offered */
    char warning[300];      /* HostInfo.warning */
    char target[256];    /* after ~/.ssh/config: HostName */
    int port;
    Lookup *lookup; /* the name's lookup while HOST_RESOLVING (lookup.h) */
    char port_text[8];
    struct addrinfo *ai;
    int64_t started_ms, deadline_ms, retry_at_ms, last_rx_ms, next_ka_ms;
    double handshake_ms;
    RemoteExec *execs;
    /* Channels let go of while their open was unanswered (chanlinger.c) */
    ssh_channel *linger;
    size_t n_linger, cap_linger;
} Host;

struct HostPool {
    HostPoolOptions opt;
    /* TUNEDECK_SSH_CONFIG as libssh expands it (sshpath.h): the file checked, and a name
     * libssh expands to exactly that file; "" for the default files. */
    char config_path[2048], config_for_libssh[4096];
    Host **hosts; /* each its own allocation: libssh keeps pointers into a Host */
    size_t n, cap;
    size_t *slot_host; /* pollfds slot -> host, from the last pollfds call */
    size_t n_slots, cap_slots;
    uint64_t rng;
    size_t io_rotor, timer_rotor;
    int behind; /* the last step ran out of budget */
};

/* hostconn.c: one host's connection. */
enum { RESOLVE_POLL_MS = 5 }; /* how often a lookup in flight is asked about */
void host_teardown(Host *h);
/* Frees the last attempt's words (HostInfo.last_error), NULL after. */
void host_forget_error(Host *h);
void host_start_attempt(HostPool *p, Host *h, int64_t now_ms);
/* Down, and tried again at retry_at_ms: it is kept, or an exec waits for it. */
int host_retry_planned(const Host *h);
/* hostpool.c: an exec wants the host. An idle one connects now; a refused one too (one
 * attempt, the exec's); an unreachable one at its next planned attempt, never before (the
 * back-off holds); hostpool_connect is the ask to try now. */
void host_wanted(HostPool *p, Host *h, int64_t now_ms);
int host_fd(const Host *h); /* the socket to poll now, or -1 */
/* The ssh configuration files libssh will read (named, already expanded as libssh expands
 * it, else ~/.ssh/config and the global one), and what they Include, may be trusted (sshconfig.h): at the pool's start, and again
 * before every parse, since libssh reads them again at every connection attempt. */
int hostpool_configs_trusted(const char *named, Error *err);
/* The same files' IdentityFile and RevokedHostKeys lines that apply to one host
 * (sshconfig_host_files): `match` starts as the session stood before libssh parsed them
 * (sshmatch_begin). */
int hostpool_config_files(const char *named, const SshpathHost *host, SshmatchHost *match,
                          SshconfigHostFiles *out, Error *err);
/* 1 when the key the host offers (b64: its base64) is revoked, by an `@revoked` line in its
 * known_hosts or a RevokedHostKeys file of its config (err says which), 0 when not, -1 when
 * one cannot be read or parsed (err says why: the host is refused, as ssh refuses it). */
int host_key_revoked(const Host *h, ssh_key key, const char *b64, Error *err);
/* hostkey.c: once TCP is up, the known_hosts view libssh's handshake reads (-1: err says
 * why); after the handshake, the server's key checked, and the host's state set from it
 * (HOST_AUTH when trusted, else down saying why). */
int host_use_handshake_view(Host *h, Error *err);
void host_check_key(HostPool *p, Host *h, int64_t now_ms);
void host_io(HostPool *p, Host *h, short revents, int64_t now_ms);
/* The connection is over: say why, fail what ran on it, and plan the retry. */
void host_down(HostPool *p, Host *h, int64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* host_down for a refusal for good (a host key, a login, a file, a configuration): the host
 * is marked refused (HostInfo.refused) and not retried until an operator acts. */
void host_refused(HostPool *p, Host *h, int64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* hostauth.c: logging in. */
/* libssh's passphrase callback (userdata: the Host): never prompts, notes that one was asked. */
int host_refuse_passphrase(const char *prompt, char *buf, size_t len, int echo, int verify,
                           void *userdata);
void host_load_identity(Host *h);             /* the inventory's, when it needs no passphrase */
void host_check_default_identities(Host *h);  /* h->open_defaults and h->warning */
void host_auth_step(HostPool *p, Host *h, int64_t now_ms); /* one step; ready when it logs in */
void host_timers(HostPool *p, Host *h, int64_t now_ms);

/* rexec.c: advance every exec of a ready host (and its lingering channels); fail them all
 * when the host drops. */
void rexec_pump_host(HostPool *p, Host *h);
void rexec_fail_host(Host *h, const char *why);
/* 1 when an exec on the host has not ended: it waits for the host to connect. */
int rexec_waiting(const Host *h);
/* The host's session is freed: its channels go with it (libssh frees them), the lingering
 * ones too. */
void rexec_drop_channels(Host *h);
/* The pool is freed: the execs the caller still holds no longer point to it. */
void rexec_release_host(Host *h);

/* chanlinger.c: a channel let go of while its open is unanswered. keep: the host takes it (its
 * callbacks already removed); step: each answered one is closed if it opened, and freed; drop:
 * the session is freed, and its channels with it. */
void chanlinger_keep(Host *h, ssh_channel ch);
void chanlinger_step(Host *h);
void chanlinger_drop(Host *h);

#endif
