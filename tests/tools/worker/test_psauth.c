/* The parameter-server handshake (tools/worker/psauth.c) and a shard's door
 * (tools/worker/psgate.c) over loopback TCP: a worker holding the job's secret is admitted
 * and its messages flow; a wrong secret, garbage, an old-protocol hello, a forged proof, a
 * wrong version or a silent peer are each refused with the peer's address and why, while
 * the real worker beside them still gets in. No timing thresholds: the one timeout tested
 * is the silent peer's own, with nobody else to admit. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/worker/lebytes.h"
#include "tools/worker/psauth.h"
#include "tools/worker/psgate.h"
#include "tools/worker/psmsg.h"
#include "tools/worker/psnet.h"

static const unsigned char SECRET[SECRET_BYTES] = "the job's secret, 32 bytes long";
static const unsigned char OTHER[SECRET_BYTES] = "another job's secret, 32 bytes!";

typedef struct {
    PsGateConfig cfg;
    int conn[4];
    int rc;
    Error err;
    pthread_mutex_t mu;
    char log[16384];
    int close_first; /* accept one connection and close it unread before the door opens */
} Door;

static void collect(void *ud, const char *line)
{
    Door *d = ud;
    pthread_mutex_lock(&d->mu);
    strncat(d->log, line, sizeof d->log - strlen(d->log) - 2);
    strcat(d->log, "\n");
    pthread_mutex_unlock(&d->mu);
}

static void *door_main(void *arg)
{
    Door *d = arg;
    if (d->close_first) {
        struct pollfd p = {.fd = d->cfg.listen_fd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0)
            ;
        int c = accept(d->cfg.listen_fd, NULL, NULL);
        /* the worker's hello is waiting: closing with it unread resets the connection */
        struct pollfd q = {.fd = c, .events = POLLIN};
        while (poll(&q, 1, -1) < 0)
            ;
        close(c);
    }
    d->rc = psgate_admit(&d->cfg, d->conn, &d->err);
    return NULL;
}

static int open_door(Door *d, pthread_t *th, const unsigned char *secret, size_t n_workers,
                     double timeout_s, double handshake_s)
{
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->mu, NULL);
    int port = 0;
    Error e;
    int lfd = psnet_listen("127.0.0.1", 0, &port, &e);
    cr_assert_geq(lfd, 0, "%s", e.msg);
    d->cfg = (PsGateConfig){.listen_fd = lfd,
                            .secret = secret,
                            .shard = 1,
                            .n_workers = n_workers,
                            .timeout_s = timeout_s,
                            .handshake_timeout_s = handshake_s,
                            .log = collect,
                            .log_userdata = d};
    cr_assert_eq(pthread_create(th, NULL, door_main, d), 0);
    return port;
}

static int dial(int port)
{
    Error e;
    int fd = psnet_connect("127.0.0.1", port, 10, &e);
    cr_assert_geq(fd, 0, "%s", e.msg);
    return fd;
}

/* Sends raw bytes, then waits for the shard to close the connection (read returns 0): the
 * refusal has happened by then, so the log can be read without a race. */
static void send_and_wait_close(int fd, const void *bytes, size_t n)
{
    if (n)
        cr_assert_eq(send(fd, bytes, n, MSG_NOSIGNAL), (ssize_t)n);
    unsigned char sink[256];
    ssize_t r;
    while ((r = recv(fd, sink, sizeof sink, 0)) > 0)
        ;
    /* a close with our bytes unread arrives as a reset */
    cr_assert(r == 0 || errno == ECONNRESET, "expected the shard to close the connection: %s",
              strerror(errno));
    close(fd);
}

/* Waits (10 s at most, in steps) until the shard has logged `text`. */
static void wait_for_log(Door *d, const char *text)
{
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&d->mu);
        int seen = strstr(d->log, text) != NULL;
        pthread_mutex_unlock(&d->mu);
        if (seen)
            return;
        usleep(10000);
    }
    cr_assert_fail("the shard never logged '%s':\n%s", text, d->log);
}

/* Waits (30 s at most, in steps) until the shard has logged `text` n times. */
static void wait_for_logs(Door *d, const char *text, int n)
{
    int seen = 0;
    for (int i = 0; i < 3000; i++) {
        pthread_mutex_lock(&d->mu);
        seen = 0;
        for (const char *at = d->log; (at = strstr(at, text)); at++)
            seen++;
        pthread_mutex_unlock(&d->mu);
        if (seen >= n)
            return;
        usleep(10000);
    }
    cr_assert_fail("the shard logged '%s' %d times, not %d:\n%s", text, seen, n, d->log);
}

static void recv_all(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, 0);
        cr_assert_gt(r, 0, "recv: %s", r < 0 ? strerror(errno) : "closed");
        got += (size_t)r;
    }
}

static int admit_real_worker(int port, uint32_t rank, const unsigned char *secret, Error *e)
{
    int fd = dial(port);
    if (psauth_client(fd, secret, rank, 1, 10, e) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void close_door(Door *d, pthread_t th)
{
    pthread_join(th, NULL);
    close(d->cfg.listen_fd);
    for (size_t r = 0; r < d->cfg.n_workers; r++)
        if (d->rc == 0 && d->conn[r] >= 0)
            close(d->conn[r]);
    pthread_mutex_destroy(&d->mu);
}

Test(psauth, a_worker_with_the_secret_is_admitted_and_its_messages_flow)
{
    Door d;
    pthread_t th;
    int port = open_door(&d, &th, SECRET, 2, 10, 10);
    Error e;
    int w1 = admit_real_worker(port, 1, SECRET, &e);
    cr_assert_geq(w1, 0, "%s", e.msg);
    int w0 = admit_real_worker(port, 0, SECRET, &e);
    cr_assert_geq(w0, 0, "%s", e.msg);
    pthread_join(th, NULL);
    cr_assert_eq(d.rc, 0, "%s", d.err.msg);
    cr_assert_str_empty(d.log, "%s", d.log);
    /* conn[] is by rank whatever the order they came in */
    PsMsg m = {.type = PSMSG_PUSH, .sender = 1, .iter = 1, .count = 1}, got;
    double v = 2.5, back = 0;
    cr_assert_eq(psnet_send(w1, &m, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(psnet_recv(d.conn[1], &got, &back, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(got.sender, 1);
    cr_assert_eq(back, 2.5);
    close(w0);
    close(w1);
    close(d.cfg.listen_fd);
    close(d.conn[0]);
    close(d.conn[1]);
    pthread_mutex_destroy(&d.mu);
}

Test(psauth, peers_without_the_secret_are_refused_by_address_and_reason_and_the_worker_still_joins)
{
    Door d;
    pthread_t th;
    int port = open_door(&d, &th, SECRET, 1, 30, 30);
    Error e;

    /* another job's worker: the shard's proof does not match its secret; it hangs up */
    int fd = dial(port);
    cr_assert_eq(psauth_client(fd, OTHER, 0, 1, 10, &e), -1);
    cr_assert(strstr(e.msg, "proof does not match this job's secret"), "%s", e.msg);
    close(fd);
    wait_for_log(&d, "closed the connection during the handshake");

    /* garbage */
    unsigned char junk[PSAUTH_FRAME_BYTES];
    memset(junk, 'x', sizeof junk);
    send_and_wait_close(dial(port), junk, sizeof junk);

    /* a worker from before the handshake: its first message is the PS protocol's hello */
    unsigned char old[PSMSG_HEADER_BYTES];
    PsMsg hello = {.type = PSMSG_HELLO, .sender = 0};
    psmsg_encode_header(&hello, old);
    send_and_wait_close(dial(port), old, sizeof old);

    /* another version of the handshake */
    PsAuthFrame f = {.type = PSAUTH_HELLO, .sender = 0};
    unsigned char frame[PSAUTH_FRAME_BYTES];
    psauth_encode(&f, frame);
    frame[4] = PSAUTH_VERSION + 1;
    send_and_wait_close(dial(port), frame, sizeof frame);

    /* a rank the job does not have */
    f.sender = 7;
    psauth_encode(&f, frame);
    send_and_wait_close(dial(port), frame, sizeof frame);

    /* a well-formed hello, then a proof made without the secret */
    fd = dial(port);
    f.sender = 0;
    psauth_encode(&f, frame);
    cr_assert_eq(send(fd, frame, sizeof frame, MSG_NOSIGNAL), (ssize_t)sizeof frame);
    size_t got = 0;
    while (got < sizeof frame) {
        ssize_t r = recv(fd, frame + got, sizeof frame - got, 0);
        cr_assert_gt(r, 0, "expected the shard's challenge");
        got += (size_t)r;
    }
    PsAuthFrame ch;
    cr_assert_eq(psauth_decode(frame, sizeof frame, &ch, &e), 0, "%s", e.msg);
    cr_assert_eq(ch.type, PSAUTH_CHALLENGE);
    PsAuthFrame forged = {.type = PSAUTH_PROOF, .sender = 0};
    psauth_mac(OTHER, "worker", 1, 0, f.nonce, ch.nonce, forged.mac);
    psauth_encode(&forged, frame);
    send_and_wait_close(fd, frame, sizeof frame);

    /* the real worker still joins */
    int w = admit_real_worker(port, 0, SECRET, &e);
    cr_assert_geq(w, 0, "%s", e.msg);
    pthread_join(th, NULL);
    cr_assert_eq(d.rc, 0, "%s", d.err.msg);
    const char *want[] = {"closed the connection during the handshake",
                          "not a tunedeck-worker handshake",
                          "speaks the parameter-server protocol without the handshake",
                          "handshake version 2, this tunedeck-worker speaks version 1",
                          "claims worker rank 7, the job has 1 workers",
                          "wrong proof (the peer does not hold this job's secret)"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(d.log, want[i]), "expected '%s' in the log:\n%s", want[i], d.log);
    /* each line names the shard and the peer's address */
    int lines = 0;
    for (const char *p = d.log; (p = strstr(p, "shard 1: refused 127.0.0.1:")); p++)
        lines++;
    cr_assert_eq(lines, 6, "%s", d.log);
    close(w);
    close(d.conn[0]);
    close(d.cfg.listen_fd);
    pthread_mutex_destroy(&d.mu);
}

Test(psauth, a_silent_peer_is_dropped_when_its_own_handshake_time_runs_out)
{
    Door d;
    pthread_t th;
    /* its handshake time (0.1 s) is shorter than the wait for workers (2 s): whenever the
     * shard looks, the silent peer's deadline comes first */
    int port = open_door(&d, &th, SECRET, 1, 2, 0.1);
    int fd = dial(port);
    send_and_wait_close(fd, NULL, 0);
    close_door(&d, th);
    cr_assert_eq(d.rc, -1);
    cr_assert(strstr(d.log, "no complete handshake within 0.1 s"), "%s", d.log);
    cr_assert(strstr(d.err.msg, "0 of 1 workers connected"), "%s", d.err.msg);
    cr_assert(strstr(d.err.msg, "refused 1 peers that failed the handshake, the last 127.0.0.1:"),
              "%s", d.err.msg);
}

Test(psauth, a_worker_refuses_a_shard_that_does_not_hold_the_secret)
{
    Door d;
    pthread_t th;
    int port = open_door(&d, &th, OTHER, 1, 0.5, 0.5);
    Error e;
    cr_assert_eq(admit_real_worker(port, 0, SECRET, &e), -1);
    cr_assert(strstr(e.msg, "the parameter server's proof does not match"), "%s", e.msg);
    close_door(&d, th);
    cr_assert_eq(d.rc, -1);
}

Test(psauth, a_worker_refuses_a_peer_that_never_answers)
{
    int port = 0;
    Error e;
    int lfd = psnet_listen("127.0.0.1", 0, &port, &e); /* listens, never accepts */
    cr_assert_geq(lfd, 0, "%s", e.msg);
    int fd = dial(port);
    cr_assert_eq(psauth_client(fd, SECRET, 0, 0, 0.2, &e), -1);
    cr_assert(strstr(e.msg, "no handshake answer within 0.2 s"), "%s", e.msg);
    close(fd);
    close(lfd);
}

Test(psauth, proofs_are_bound_to_role_shard_rank_and_both_nonces)
{
    unsigned char nw[32] = {1}, nps[32] = {2}, base[32], other[32];
    psauth_mac(SECRET, "worker", 0, 1, nw, nps, base);
    psauth_mac(SECRET, "ps", 0, 1, nw, nps, other);
    cr_assert_neq(memcmp(base, other, 32), 0, "role");
    psauth_mac(SECRET, "worker", 1, 1, nw, nps, other);
    cr_assert_neq(memcmp(base, other, 32), 0, "shard");
    psauth_mac(SECRET, "worker", 0, 2, nw, nps, other);
    cr_assert_neq(memcmp(base, other, 32), 0, "rank");
    psauth_mac(SECRET, "worker", 0, 1, nps, nw, other);
    cr_assert_neq(memcmp(base, other, 32), 0, "nonces swapped");
    psauth_mac(OTHER, "worker", 0, 1, nw, nps, other);
    cr_assert_neq(memcmp(base, other, 32), 0, "secret");
    psauth_mac(SECRET, "worker", 0, 1, nw, nps, other);
    cr_assert_eq(memcmp(base, other, 32), 0, "deterministic");
}

Test(psauth, a_frame_round_trips_and_a_wrong_magic_is_refused_at_its_first_bytes)
{
    PsAuthFrame f = {.type = PSAUTH_CHALLENGE, .sender = 3}, g;
    memset(f.nonce, 0xab, sizeof f.nonce);
    memset(f.mac, 0xcd, sizeof f.mac);
    unsigned char b[PSAUTH_FRAME_BYTES];
    psauth_encode(&f, b);
    Error e;
    cr_assert_eq(psauth_decode(b, sizeof b, &g, &e), 0, "%s", e.msg);
    cr_assert_eq(g.type, PSAUTH_CHALLENGE);
    cr_assert_eq(g.sender, 3);
    cr_assert_eq(memcmp(f.nonce, g.nonce, 32), 0);
    cr_assert_eq(memcmp(f.mac, g.mac, 32), 0);
    cr_assert_eq(psauth_decode((const unsigned char *)"GET / HTTP/1.1", 4, &g, &e), -1);
    cr_assert(strstr(e.msg, "not a tunedeck-worker handshake"), "%s", e.msg);
    cr_assert_eq(psauth_decode(b, 3, &g, &e), 0, "three bytes: too early to tell");
}

Test(psauth, a_flood_of_silent_connects_does_not_push_out_a_worker_in_its_handshake)
{
    Door d;
    pthread_t th;
    int port = open_door(&d, &th, SECRET, 1, 30, 30);
    /* the worker's half of the handshake by hand, so that it can pause before its proof */
    int w = dial(port);
    PsAuthFrame hello = {.type = PSAUTH_HELLO, .sender = 0}, ch;
    memset(hello.nonce, 7, sizeof hello.nonce);
    unsigned char b[PSAUTH_FRAME_BYTES];
    psauth_encode(&hello, b);
    cr_assert_eq(send(w, b, sizeof b, MSG_NOSIGNAL), (ssize_t)sizeof b);
    recv_all(w, b, sizeof b);
    Error e;
    cr_assert_eq(psauth_decode(b, sizeof b, &ch, &e), 0, "%s", e.msg);
    /* the door now waits for this worker's proof; 8 more silent peers than it holds come */
    enum { FLOOD = PSGATE_MAX_PENDING + 8 };
    int flood[FLOOD];
    for (int i = 0; i < FLOOD; i++)
        flood[i] = dial(port);
    wait_for_logs(&d, "handshakes at once", 9);
    PsAuthFrame proof = {.type = PSAUTH_PROOF, .sender = 0};
    psauth_mac(SECRET, "worker", 1, 0, hello.nonce, ch.nonce, proof.mac);
    psauth_encode(&proof, b);
    send(w, b, sizeof b, MSG_NOSIGNAL); /* fails on a door that dropped the worker */
    pthread_join(th, NULL);
    cr_assert_eq(d.rc, 0, "%s\n%s", d.err.msg, d.log);
    cr_assert_geq(d.conn[0], 0);
    for (int i = 0; i < FLOOD; i++)
        close(flood[i]);
    close(w);
    close(d.cfg.listen_fd);
    close(d.conn[0]);
    pthread_mutex_destroy(&d.mu);
}

Test(psauth, a_worker_dropped_mid_handshake_tries_again_and_is_admitted)
{
    Door d;
    pthread_t th;
    memset(&d, 0, sizeof d);
    int port = 0;
    Error e;
    int lfd = psnet_listen("127.0.0.1", 0, &port, &e);
    cr_assert_geq(lfd, 0, "%s", e.msg);
    pthread_mutex_init(&d.mu, NULL);
    d.close_first = 1;
    d.cfg = (PsGateConfig){.listen_fd = lfd,
                           .secret = SECRET,
                           .shard = 1,
                           .n_workers = 1,
                           .timeout_s = 30,
                           .handshake_timeout_s = 30,
                           .log = collect,
                           .log_userdata = &d};
    cr_assert_eq(pthread_create(&th, NULL, door_main, &d), 0);
    int w = psauth_dial("127.0.0.1", port, SECRET, 0, 1, 30, &e);
    cr_assert_geq(w, 0, "%s", e.msg);
    close_door(&d, th);
    cr_assert_eq(d.rc, 0, "%s", d.err.msg);
    close(w);
}

Test(psauth, a_worker_does_not_try_again_after_a_wrong_proof_from_the_shard)
{
    Door d;
    pthread_t th;
    int port = open_door(&d, &th, OTHER, 1, 30, 30);
    Error e;
    cr_assert_eq(psauth_dial("127.0.0.1", port, SECRET, 0, 1, 30, &e), -1);
    cr_assert(strstr(e.msg, "the parameter server's proof does not match"), "%s", e.msg);
    cr_assert_null(strstr(e.msg, "tries"), "%s", e.msg);
    /* the door still waits: a worker of its own job closes it */
    int w = admit_real_worker(port, 0, OTHER, &e);
    cr_assert_geq(w, 0, "%s", e.msg);
    close_door(&d, th);
    cr_assert_eq(d.rc, 0, "%s", d.err.msg);
    close(w);
}

Test(psauth, a_frame_with_a_reserved_byte_set_is_refused)
{
    PsAuthFrame f = {.type = PSAUTH_HELLO, .sender = 2}, g;
    unsigned char b[PSAUTH_FRAME_BYTES];
    static const size_t reserved[] = {6, 7, 12, 13, 14, 15};
    Error e;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        psauth_encode(&f, b);
        cr_assert_eq(psauth_decode(b, sizeof b, &g, &e), 0, "%s", e.msg);
        b[reserved[i]] = 1;
        cr_assert_eq(psauth_decode(b, sizeof b, &g, &e), -1, "byte %zu", reserved[i]);
        cr_assert(strstr(e.msg, "reserved byte"), "%s", e.msg);
        /* refused as soon as the byte has arrived */
        cr_assert_eq(psauth_decode(b, reserved[i] + 1, &g, &e), -1, "byte %zu", reserved[i]);
    }
}
