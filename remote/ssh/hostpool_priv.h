/* Internals shared by the host pool (connections) and its exec channels. */
#ifndef TUNEDECK_HOSTPOOL_PRIV_H
#define TUNEDECK_HOSTPOOL_PRIV_H

#include <netdb.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "core/base/linebuf.h"
#include "remote/ssh/backoff.h"
#include "remote/ssh/hostpool.h"

typedef enum { X_QUEUED, X_OPENING, X_EXECING, X_RUNNING, X_DONE } ExecPhase;

struct RemoteExec {
    HostPool *pool;
    size_t host;
    RemoteExec *next; /* the host's list */
    char *command;
    char *input;
    size_t input_len, input_sent;
    ExecOptions opt;
    ExecPhase phase;
    ssh_channel ch;
    struct ssh_channel_callbacks_struct cb;
    LineBuf out, err;
    int eof_sent, closed_by_peer;
    int exit_status;
    char exit_signal[32];
    ExecOutcome outcome;
    char error[256];
};

typedef struct {
    HostConf conf;
    HostState state;
    HostKeyStatus key;
    char fingerprint[128];
    char last_error[256];
    int keep, attempt, connects, drops, dirty;
    int fd;
    ssh_session s;
    ssh_event ev;
    struct ssh_callbacks_struct scb;
    int passphrase_needed;
    char accept_fp[128];    /* the operator accepted this unknown key, for one attempt */
    char offered_fp[128];   /* the unknown key last offered (HostInfo.offered_fp) */
    char known_file[512];   /* the known_hosts file: the inventory's, else ~/.ssh/known_hosts */
    char proxy[256];        /* the ssh config asks for a proxy we do not support */
    ssh_key ident_key;      /* the inventory's identity, loaded: the only key offered */
    char target[256];    /* after ~/.ssh/config: HostName */
    int port;
    struct gaicb gai;
    struct gaicb *gaip;
    char port_text[8];
    struct addrinfo *ai;
    int ai_async; /* ai from getaddrinfo_a (freed the same way) */
    int64_t started_ms, deadline_ms, retry_at_ms, last_rx_ms, next_ka_ms;
    double handshake_ms;
    RemoteExec *execs;
} Host;

struct HostPool {
    HostPoolOptions opt;
    Host **hosts; /* each its own allocation: libssh keeps pointers into a Host */
    size_t n, cap;
    size_t *slot_host; /* pollfds slot -> host, from the last pollfds call */
    size_t n_slots, cap_slots;
    uint64_t rng;
    size_t io_rotor, timer_rotor;
    int behind; /* the last step ran out of budget */
};

/* rexec.c: advance every exec of a ready host; fail them all when the host drops. */
void rexec_pump_host(HostPool *p, Host *h);
void rexec_fail_host(Host *h, const char *why);

#endif
