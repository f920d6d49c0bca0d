/* The worker speaks first, with a frame whose magic is not the PS message protocol's
 * ("TDPS"): a shard from before the handshake then refuses it by its magic, and a worker
 * from before it is refused here by its own, so a version mix fails at once with a reason
 * instead of waiting for a timeout. The shard's proof comes before the worker's: a worker
 * never proves anything to a peer that has not proven itself first. */
#include "tools/worker/psauth.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "tools/worker/lebytes.h"
#include "tools/worker/psmsg.h"
#include "tools/worker/psnet.h"
#include "tools/worker/sha256.h"

enum { WAIT_HELLO = 0, WAIT_PROOF = 1 };

static const char LABEL[] = "tunedeck-ps-auth"; /* sets these MACs apart from any other use */

void psauth_encode(const PsAuthFrame *f, unsigned char out[PSAUTH_FRAME_BYTES])
{
    memset(out, 0, PSAUTH_FRAME_BYTES);
    le_put32(out, PSAUTH_MAGIC);
    out[4] = PSAUTH_VERSION;
    out[5] = (unsigned char)f->type;
    le_put32(out + 8, f->sender);
    memcpy(out + 16, f->nonce, PSAUTH_NONCE_BYTES);
    memcpy(out + 48, f->mac, 32);
}

int psauth_decode(const unsigned char *buf, size_t len, PsAuthFrame *f, Error *err)
{
    if (len >= 4) {
        uint32_t magic = le_get32(buf);
        if (magic == PSMSG_MAGIC)
            return error_set(err, "it speaks the parameter-server protocol without the "
                                  "handshake (a tunedeck-worker from before it?)");
        if (magic != PSAUTH_MAGIC)
            return error_set(err,
                             "not a tunedeck-worker handshake: expected magic 0x%08x, found "
                             "0x%08x",
                             PSAUTH_MAGIC, magic);
    }
    if (len >= 5 && buf[4] != PSAUTH_VERSION)
        return error_set(err,
                         "handshake version %u, this tunedeck-worker speaks version %d (every "
                         "host of a job needs the same tunedeck-worker)",
                         buf[4], PSAUTH_VERSION);
    if (len >= 6 && (buf[5] < PSAUTH_HELLO || buf[5] > PSAUTH_PROOF))
        return error_set(err, "handshake: field 'type': expected 1 to 3, found %u", buf[5]);
    /* strict framing: the reserved bytes are zero, so a later version can give them a
     * meaning that this one refuses instead of ignoring */
    static const size_t reserved[] = {6, 7, 12, 13, 14, 15};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (len > reserved[i] && buf[reserved[i]] != 0)
            return error_set(err, "handshake: reserved byte %zu is 0x%02x, expected 0",
                             reserved[i], buf[reserved[i]]);
    if (len < PSAUTH_FRAME_BYTES)
        return 0;
    f->type = (PsAuthType)buf[5];
    f->sender = le_get32(buf + 8);
    memcpy(f->nonce, buf + 16, PSAUTH_NONCE_BYTES);
    memcpy(f->mac, buf + 48, 32);
    return 0;
}

void psauth_mac(const unsigned char secret[SECRET_BYTES], const char *role, uint32_t shard,
                uint32_t rank, const unsigned char nonce_w[PSAUTH_NONCE_BYTES],
                const unsigned char nonce_ps[PSAUTH_NONCE_BYTES], unsigned char out[32])
{
    unsigned char ids[9];
    ids[0] = PSAUTH_VERSION;
    le_put32(ids + 1, shard);
    le_put32(ids + 5, rank);
    HmacSha256 h;
    hmac_sha256_init(&h, secret, SECRET_BYTES);
    hmac_sha256_update(&h, LABEL, sizeof LABEL); /* with its NUL: the role cannot run into it */
    hmac_sha256_update(&h, role, strlen(role) + 1);
    hmac_sha256_update(&h, ids, sizeof ids);
    hmac_sha256_update(&h, nonce_w, PSAUTH_NONCE_BYTES);
    hmac_sha256_update(&h, nonce_ps, PSAUTH_NONCE_BYTES);
    hmac_sha256_final(&h, out);
}

static int send_frame(int fd, const PsAuthFrame *f, int flags, Error *err)
{
    unsigned char buf[PSAUTH_FRAME_BYTES];
    psauth_encode(f, buf);
    size_t off = 0;
    while (off < sizeof buf) {
        ssize_t w = send(fd, buf + off, sizeof buf - off, MSG_NOSIGNAL | flags);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int gone = w == 0 || errno == EPIPE || errno == ECONNRESET;
            error_set(err, "sending the handshake: %s", w < 0 ? strerror(errno) : "closed");
            return gone ? PSAUTH_CLOSED : -1;
        }
        off += (size_t)w;
    }
    return 0;
}

/* One whole frame before the deadline, refusing a wrong magic or version at its first bytes. */
static int recv_frame(int fd, int64_t deadline_ms, double timeout_s, PsAuthFrame *f, Error *err)
{
    unsigned char buf[PSAUTH_FRAME_BYTES];
    size_t fill = 0;
    while (fill < sizeof buf) {
        int64_t left = deadline_ms - clock_now_ms();
        if (left <= 0)
            return error_set(err, "no handshake answer within %g s", timeout_s);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno != EINTR)
            return error_set(err, "poll: %s", strerror(errno));
        if (rc <= 0)
            continue;
        ssize_t r = recv(fd, buf + fill, sizeof buf - fill, MSG_DONTWAIT);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            error_set(err, "the peer %s the connection during the handshake",
                      r == 0 ? "closed" : "reset");
            return PSAUTH_CLOSED;
        }
        if (r < 0)
            return error_set(err, "recv: %s", strerror(errno));
        fill += (size_t)r;
        if (psauth_decode(buf, fill, f, err) < 0)
            return -1;
    }
    return 0;
}

int psauth_client(int fd, const unsigned char secret[SECRET_BYTES], uint32_t rank,
                  uint32_t shard, double timeout_s, Error *err)
{
    int64_t deadline = clock_now_ms() + (int64_t)(timeout_s * 1000);
    PsAuthFrame hello = {.type = PSAUTH_HELLO, .sender = rank}, ch;
    if (secret_random(hello.nonce, sizeof hello.nonce, err) < 0)
        return -1;
    int rc = send_frame(fd, &hello, 0, err);
    if (rc == 0)
        rc = recv_frame(fd, deadline, timeout_s, &ch, err);
    if (rc < 0)
        return rc;
    if (ch.type != PSAUTH_CHALLENGE || ch.sender != shard)
        return error_set(err, "handshake: expected the challenge of shard %u, found type %d from "
                              "%u",
                         shard, (int)ch.type, ch.sender);
    unsigned char want[32];
    psauth_mac(secret, "ps", shard, rank, hello.nonce, ch.nonce, want);
    if (!secret_equal(want, ch.mac, sizeof want))
        return error_set(err, "handshake: the parameter server's proof does not match this "
                              "job's secret (another job's shard on this port, or hosts given "
                              "different schedules?)");
    PsAuthFrame proof = {.type = PSAUTH_PROOF, .sender = rank};
    psauth_mac(secret, "worker", shard, rank, hello.nonce, ch.nonce, proof.mac);
    return send_frame(fd, &proof, 0, err);
}

int psauth_dial(const char *host, int port, const unsigned char secret[SECRET_BYTES],
                uint32_t rank, uint32_t shard, double timeout_s, Error *err)
{
    int64_t deadline = clock_now_ms() + (int64_t)(timeout_s * 1000);
    for (unsigned tries = 1;; tries++) {
        double left = (double)(deadline - clock_now_ms()) / 1000;
        int fd = psnet_connect(host, port, left > 0 ? left : 0, err);
        if (fd < 0)
            return -1;
        left = (double)(deadline - clock_now_ms()) / 1000;
        int rc = psauth_client(fd, secret, rank, shard, left > 0 ? left : 0, err);
        if (rc == 0)
            return fd;
        close(fd);
        if (rc != PSAUTH_CLOSED || clock_now_ms() >= deadline) {
            if (tries > 1)
                error_prefix(err, "after %u tries", tries);
            return -1;
        }
        /* The shard dropped us before we could prove anything: its door was full (a flood
         * of connections, tools/worker/psgate.c) or it is restarting. Only a delay. */
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void psauth_server_init(PsAuthServer *s)
{
    memset(s, 0, sizeof *s);
    s->state = WAIT_HELLO;
}

int psauth_server_step(PsAuthServer *s, int fd, const unsigned char secret[SECRET_BYTES],
                       uint32_t shard, size_t n_workers, Error *err)
{
    for (;;) {
        ssize_t r = recv(fd, s->buf + s->fill, sizeof s->buf - s->fill, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r == 0)
            return error_set(err, "closed the connection during the handshake");
        if (r < 0)
            return error_set(err, "recv: %s", strerror(errno));
        s->fill += (size_t)r;
        PsAuthFrame f;
        if (psauth_decode(s->buf, s->fill, &f, err) < 0)
            return -1;
        if (s->fill < sizeof s->buf)
            continue;
        s->fill = 0;
        if (s->state == WAIT_HELLO) {
            if (f.type != PSAUTH_HELLO)
                return error_set(err, "handshake: expected a hello, found type %d", (int)f.type);
            if (f.sender >= n_workers)
                return error_set(err, "handshake: claims worker rank %u, the job has %zu workers",
                                 f.sender, n_workers);
            s->rank = f.sender;
            memcpy(s->nonce_w, f.nonce, sizeof s->nonce_w);
            PsAuthFrame ch = {.type = PSAUTH_CHALLENGE, .sender = shard};
            if (secret_random(s->nonce_ps, sizeof s->nonce_ps, err) < 0)
                return -1;
            memcpy(ch.nonce, s->nonce_ps, sizeof ch.nonce);
            psauth_mac(secret, "ps", shard, s->rank, s->nonce_w, s->nonce_ps, ch.mac);
            /* 80 bytes into a fresh socket's empty buffer: never short, never waits */
            if (send_frame(fd, &ch, MSG_DONTWAIT, err) < 0)
                return -1;
            s->state = WAIT_PROOF;
            continue;
        }
        if (f.type != PSAUTH_PROOF || f.sender != s->rank)
            return error_set(err, "handshake: expected the proof of worker %u, found type %d from "
                                  "%u",
                             s->rank, (int)f.type, f.sender);
        unsigned char want[32];
        psauth_mac(secret, "worker", shard, s->rank, s->nonce_w, s->nonce_ps, want);
        if (!secret_equal(want, f.mac, sizeof want))
            return error_set(err, "handshake: wrong proof (the peer does not hold this job's "
                                  "secret)");
        return 1;
    }
}
