/* Parameter-server sockets: plain blocking TCP with SO_RCVTIMEO/SO_SNDTIMEO so that a dead
 * peer turns into an error instead of a hang, and TCP_NODELAY for small headers. */
#include "tools/worker/psnet.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"

enum { IO_TIMEOUT_S = 120, SOCK_BUF_BYTES = 4 << 20 };

static void tune_socket(int fd)
{
    int one = 1, buf = SOCK_BUF_BYTES;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static struct addrinfo *resolve(const char *host, int port, int passive, Error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = passive ? AI_PASSIVE : 0},
                    *res = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host && host[0] ? host : NULL, service, &hints, &res);
    if (rc != 0) {
        error_set(err, "%s:%d: cannot resolve: %s", host && host[0] ? host : "*", port,
                  gai_strerror(rc));
        return NULL;
    }
    return res;
}

int psnet_listen(const char *host, int port, int *bound_port, Error *err)
{
    struct addrinfo *res = resolve(host, port, 1, err);
    if (!res)
        return -1;
    int fd = -1, last = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0)
            break;
        last = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return error_set(err, "%s:%d: cannot listen: %s", host && host[0] ? host : "*", port,
                         strerror(last));
    if (bound_port) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &len);
        *bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                               : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return fd;
}

int psnet_accept(int listen_fd, double timeout_s, Error *err)
{
    int64_t deadline = clock_now_ms() + (int64_t)(timeout_s * 1000);
    for (;;) {
        int64_t left = deadline - clock_now_ms();
        if (left <= 0)
            return error_set(err, "no worker connected within %g s", timeout_s);
        struct pollfd p = {.fd = listen_fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno != EINTR)
            return error_set(err, "poll: %s", strerror(errno));
        if (rc <= 0)
            continue;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            return error_set(err, "accept: %s", strerror(errno));
        }
        tune_socket(fd);
        return fd;
    }
}

int psnet_accept_now(int listen_fd, char *peer, size_t peer_cap, Error *err)
{
    int fl = fcntl(listen_fd, F_GETFL);
    if (fl >= 0 && !(fl & O_NONBLOCK))
        fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK); /* a peer reset before accept: no wait */
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(listen_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED)
            return -2;
        return error_set(err, "accept: %s", strerror(errno));
    }
    char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
    getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(peer, peer_cap, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
    tune_socket(fd);
    return fd;
}

int psnet_connect(const char *host, int port, double timeout_s, Error *err)
{
    int64_t deadline = clock_now_ms() + (int64_t)(timeout_s * 1000);
    int last = 0;
    for (;;) {
        struct addrinfo *res = resolve(host, port, 0, err);
        if (!res)
            return -1;
        for (struct addrinfo *a = res; a; a = a->ai_next) {
            int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                last = errno;
                continue;
            }
            tune_socket(fd);
            if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            last = errno;
            close(fd);
        }
        freeaddrinfo(res);
        if (clock_now_ms() >= deadline)
            return error_set(err,
                             "%s:%d: cannot connect to the parameter server within %g s: "
                             "%s",
                             host, port, timeout_s, strerror(last));
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL); /* the PS process may not be listening yet */
    }
}

static int write_all(int fd, const unsigned char *p, size_t n, Error *err)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return error_set(err, "send: %s", w < 0 ? strerror(errno) : "closed");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, unsigned char *p, size_t n, Error *err)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return error_set(err, "the peer closed the connection");
        if (r < 0)
            return error_set(err, "recv: %s", errno == EAGAIN ? "timed out" : strerror(errno));
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int psnet_send(int fd, const PsMsg *m, const double *values, Error *err)
{
    size_t total = PSMSG_HEADER_BYTES + 8 * (size_t)m->count;
    unsigned char *buf = malloc(total);
    if (!buf)
        return error_set(err, "out of memory for a %zu-byte message", total);
    psmsg_encode_header(m, buf);
    psmsg_encode_values(values, (size_t)m->count, buf + PSMSG_HEADER_BYTES);
    int rc = write_all(fd, buf, total, err);
    free(buf);
    return rc;
}

int psnet_recv(int fd, PsMsg *m, double *values, size_t cap, Error *err)
{
    unsigned char head[PSMSG_HEADER_BYTES];
    if (read_all(fd, head, sizeof head, err) < 0 ||
        psmsg_decode_header(head, sizeof head, cap, m, err) < 0)
        return -1;
    size_t bytes = 8 * (size_t)m->count;
    if (bytes == 0)
        return 0;
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return error_set(err, "out of memory for a %zu-byte message", bytes);
    int rc = read_all(fd, buf, bytes, err);
    if (rc == 0)
        psmsg_decode_values(buf, (size_t)m->count, values);
    free(buf);
    return rc;
}
