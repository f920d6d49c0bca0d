/* The console's side of the SSH sessions: drives the host pool (through the live
 * scheduler when one runs on it) and the operator's acceptance of an unknown host key, so
 * that the hosts view only draws and forwards keys (DESIGN §4: no pane talks to the
 * network). Acceptance is exact: the fingerprint on screen is the key the pool was offered,
 * and the pool stores that key only if the host still offers it. */
#ifndef TUNEDECK_HOSTDESK_H
#define TUNEDECK_HOSTDESK_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "remote/live/schedlive.h"
#include "remote/ssh/hostpool.h"

typedef struct HostDesk HostDesk;

/* The pool stays the caller's. */
HostDesk *hostdesk_new(HostPool *pool);
void hostdesk_free(HostDesk *d);

/* The loop's interface; live (NULL when none) is the scheduler that polls the pool. */
size_t hostdesk_pollfds(HostDesk *d, SchedLive *live, struct pollfd *fds, size_t cap,
                        int64_t *deadline_ms);
void hostdesk_step(HostDesk *d, SchedLive *live, const struct pollfd *fds, size_t n,
                   int64_t now_ms);

/* The unknown key host `host` offered, for the operator to compare ("SHA256:..."), or -1
 * with err saying why there is none (its key is known, changed, revoked, not seen yet). */
int hostdesk_offered(const HostDesk *d, size_t host, char *fp, size_t cap, Error *err);
/* The operator said yes to exactly `fp`: reconnects the host, adding that key and no other. */
int hostdesk_accept(HostDesk *d, size_t host, const char *fp, Error *err);
/* The operator asks to reconnect a host (kept from then on); -1 when there is no such host. */
int hostdesk_reconnect(HostDesk *d, size_t host);
/* Once an acceptance has its answer: 1 with the message for the operator (bad: refused). */
int hostdesk_take_outcome(HostDesk *d, char *msg, size_t cap, int *bad);
/* 1 when anything the hosts view shows changed since the last call. */
int hostdesk_changed(HostDesk *d);

#endif
