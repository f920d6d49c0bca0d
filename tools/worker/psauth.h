/* The parameter-server handshake: before any gradient or weight moves on a PS connection,
 * the worker and the shard prove to each other that they hold the job's secret, each with an
 * HMAC-SHA256 over a fresh nonce from both sides, so the secret itself never crosses the
 * wire and an old exchange cannot be replayed. Authentication only: what follows is not
 * encrypted (docs/worker.md, "Who may talk to a shard"). */
#ifndef TUNEDECK_PSAUTH_H
#define TUNEDECK_PSAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/base/secret.h"

enum { PSAUTH_VERSION = 1, PSAUTH_FRAME_BYTES = 80, PSAUTH_NONCE_BYTES = 32 };
#define PSAUTH_MAGIC 0x41504454u /* "TDPA" on the wire */

typedef enum {
    PSAUTH_HELLO = 1,     /* worker -> shard: its rank and nonce */
    PSAUTH_CHALLENGE = 2, /* shard -> worker: its nonce and its proof */
    PSAUTH_PROOF = 3      /* worker -> shard: the worker's proof */
} PsAuthType;

typedef struct {
    PsAuthType type;
    uint32_t sender; /* worker rank or shard index */
    unsigned char nonce[PSAUTH_NONCE_BYTES];
    unsigned char mac[32];
} PsAuthFrame;

/* Layout: magic u32, version u8, type u8, 2 bytes zero, sender u32, 4 bytes zero, nonce,
 * mac; little-endian. */
void psauth_encode(const PsAuthFrame *f, unsigned char out[PSAUTH_FRAME_BYTES]);
/* Checks magic, version, type and that the reserved bytes are zero, of what has arrived so
 * far (len bytes, len may be short of a frame, so a peer speaking something else is refused
 * at its first bytes); fills f once len is a whole frame. Returns 0 or -1 with the reason. */
int psauth_decode(const unsigned char *buf, size_t len, PsAuthFrame *f, Error *err);

/* The proof of `role` ("worker" or "ps") for one connection: HMAC-SHA256 keyed with the
 * secret over the protocol's name, the role, the version, shard, rank and both nonces. */
void psauth_mac(const unsigned char secret[SECRET_BYTES], const char *role, uint32_t shard,
                uint32_t rank, const unsigned char nonce_w[PSAUTH_NONCE_BYTES],
                const unsigned char nonce_ps[PSAUTH_NONCE_BYTES], unsigned char out[32]);

/* Worker side, right after connecting to shard `shard`: fails when the peer is not that
 * shard holding the same secret, closes, or stays silent past timeout_s. Blocking. Returns
 * PSAUTH_CLOSED (with the reason) when the peer closed or reset the connection before its
 * proof came: no proof was wrong, so a new connection may be tried (psauth_dial). */
enum { PSAUTH_CLOSED = -2 };
int psauth_client(int fd, const unsigned char secret[SECRET_BYTES], uint32_t rank,
                  uint32_t shard, double timeout_s, Error *err);

/* Connects to host:port and runs psauth_client, again and again while the shard closes or
 * resets the connection mid-handshake (a full door evicts), until timeout_s runs out in all;
 * a wrong proof, a wrong protocol or a silent shard fail at once. The fd, or -1. */
int psauth_dial(const char *host, int port, const unsigned char secret[SECRET_BYTES],
                uint32_t rank, uint32_t shard, double timeout_s, Error *err);

/* Shard side, one peer's handshake driven by its bytes as they come (tools/worker/psgate.c
 * polls many peers at once, so a slow or silent one delays no other). */
typedef struct {
    int state; /* waiting for the hello, for the proof */
    unsigned char buf[PSAUTH_FRAME_BYTES];
    size_t fill;
    uint32_t rank; /* the rank the peer claims; proven once psauth_server_step returns 1 */
    unsigned char nonce_w[PSAUTH_NONCE_BYTES], nonce_ps[PSAUTH_NONCE_BYTES];
} PsAuthServer;

void psauth_server_init(PsAuthServer *s);
/* Reads what fd has now (never waits) and answers a hello with the challenge. Returns 1 when
 * the peer has proven it holds the secret (its rank in s->rank), 0 while more is to come,
 * -1 with the reason when the peer failed (the caller drops it). */
int psauth_server_step(PsAuthServer *s, int fd, const unsigned char secret[SECRET_BYTES],
                       uint32_t shard, size_t n_workers, Error *err);

#endif
