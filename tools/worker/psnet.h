/* TCP transport for parameter-server messages (core/psmsg): listen, connect with retries
 * until a deadline, and whole-message send/receive with an I/O timeout. Blocking: it serves
 * the worker and PS processes, never the console's event loop. */
#ifndef TUNEDECK_PSNET_H
#define TUNEDECK_PSNET_H

#include <stddef.h>

#include "core/base/error.h"
#include "tools/worker/psmsg.h"

/* Listens on host:port (host NULL or "" = every address; port 0 = any free port, reported in
 * *bound_port). Returns the socket or -1. */
int psnet_listen(const char *host, int port, int *bound_port, Error *err);
/* Accepts one peer within timeout_s; sets TCP_NODELAY and the I/O timeout on it. */
int psnet_accept(int listen_fd, double timeout_s, Error *err);
/* Accepts one peer that poll said is waiting, without waiting itself (the listening socket
 * is made non-blocking): the fd, -2 when the peer went away meanwhile, -1 on an error. The
 * peer's address ("127.0.0.1:40312", "[::1]:40312") goes to peer. Sets TCP_NODELAY and the
 * I/O timeout like psnet_accept. */
int psnet_accept_now(int listen_fd, char *peer, size_t peer_cap, Error *err);
/* Connects, retrying while the peer is not yet listening, until timeout_s has passed. */
int psnet_connect(const char *host, int port, double timeout_s, Error *err);
/* Sends the header and m->count values. */
int psnet_send(int fd, const PsMsg *m, const double *values, Error *err);
/* Receives one message; its values (at most cap) go into values. */
int psnet_recv(int fd, PsMsg *m, double *values, size_t cap, Error *err);

#endif
