/* The bridge to a Python peer answering JSON lines (bench/optbench/pypeer.h). */
#include "bench/optbench/pypeer.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "core/base/jdupkey.h"
#include "core/opt/flatsched.h"

static const double PEER_TIMEOUT_S = 120; /* one answer from the Python peer */

static int read_line(PyPeer *p, char **line, Error *err)
{
    double deadline = clock_now_s() + PEER_TIMEOUT_S;
    for (;;) {
        int trunc;
        if ((*line = linebuf_pop(&p->buf, &trunc)))
            return 0;
        double left = deadline - clock_now_s();
        if (left <= 0)
            return error_set(err, "generic peer: no answer within %.0f s", PEER_TIMEOUT_S);
        struct pollfd pfd = {.fd = p->from_fd, .events = POLLIN};
        int rc = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        char chunk[4096];
        ssize_t n = read(p->from_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error_set(err, "generic peer: the Python process ended (see its stderr)");
        linebuf_append(&p->buf, chunk, (size_t)n);
    }
}

cJSON *pypeer_call(PyPeer *p, const char *request, Error *err)
{
    if (request) {
        size_t len = strlen(request), sent = 0;
        while (sent < len) {
            ssize_t n = write(p->to_fd, request + sent, len - sent);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                error_set(err, "generic peer: write: %s", strerror(errno));
                return NULL;
            }
            sent += (size_t)n;
        }
    }
    char *line;
    if (read_line(p, &line, err) < 0)
        return NULL;
    cJSON *j = cJSON_Parse(line);
    if (!j || !cJSON_IsObject(j)) {
        error_set(err, "generic peer: expected a JSON object, found '%.80s'", line);
        cJSON_Delete(j);
        free(line);
        return NULL;
    }
    free(line);
    if (jdupkey_check(j, err) < 0) {
        error_prefix(err, "generic peer");
        cJSON_Delete(j);
        return NULL;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(e)) {
        error_set(err, "generic peer: %s", e->valuestring);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

void pypeer_stop(PyPeer *p)
{
    if (p->pid <= 0)
        return;
    close(p->to_fd); /* end of input: the script exits */
    for (int i = 0; i < 100; i++) {
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
            p->pid = 0;
            break;
        }
        usleep(20000);
    }
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
    close(p->from_fd);
    linebuf_clear(&p->buf);
}

cJSON *pypeer_start(PyPeer *p, const char *python, const char *script, Error *err)
{
    memset(p, 0, sizeof *p);
    if (access(python, X_OK) != 0)
        return error_set(err, "%s: not an executable (%s)", python, strerror(errno)), NULL;
    if (access(script, R_OK) != 0)
        return error_set(err, "%s: cannot read the peer script (%s)", script, strerror(errno)), NULL;
    int in[2], out[2];
    if (pipe(in) < 0)
        return error_set(err, "pipe: %s", strerror(errno)), NULL;
    if (pipe(out) < 0) {
        error_set(err, "pipe: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return NULL;
    }
    pid_t pid = childsig_fork(); /* the peer starts with no handler of ours */
    if (pid < 0) {
        error_set(err, "fork: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            close(in[i]);
            close(out[i]);
        }
        return NULL;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        /* One BLAS thread: numpy's spinning workers would steal the core the C side uses. */
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        execl(python, python, script, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->pid = pid;
    p->to_fd = in[1];
    p->from_fd = out[0];
    linebuf_init(&p->buf, 1 << 20);
    cJSON *hello = pypeer_call(p, NULL, err);
    if (!hello)
        pypeer_stop(p);
    return hello;
}

Schedule *pypeer_ask(PyPeer *p, const Cluster *c, const JobSpec *job, int *undecodable,
                     Error *err)
{
    if (undecodable)
        *undecodable = 0;
    cJSON *a = pypeer_call(p, "{\"op\":\"ask\"}\n", err);
    if (!a)
        return NULL;
    const cJSON *roles = cJSON_GetObjectItemCaseSensitive(a, "roles");
    const cJSON *weights = cJSON_GetObjectItemCaseSensitive(a, "weights");
    if (cJSON_GetArraySize(roles) != (int)c->n_machines ||
        cJSON_GetArraySize(weights) != (int)c->n_devices) {
        error_set(err, "generic peer: ask: expected %zu roles and %zu weights", c->n_machines,
                  c->n_devices);
        cJSON_Delete(a);
        return NULL;
    }
    int *r = calloc(c->n_machines ? c->n_machines : 1, sizeof *r);
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    Schedule *s = schedule_new(c, job);
    if (!r || !w || !s) {
        error_no_memory(err, "generic peer: ask");
        schedule_free(s);
        s = NULL;
    } else {
        for (size_t m = 0; m < c->n_machines; m++)
            r[m] = cJSON_GetArrayItem(roles, (int)m)->valueint;
        for (size_t d = 0; d < c->n_devices; d++)
            w[d] = cJSON_GetArrayItem(weights, (int)d)->valuedouble;
        if (flatsched_decode(r, w, s, err) < 0) {
            schedule_free(s);
            s = NULL;
            if (undecodable)
                *undecodable = 1;
        }
    }
    cJSON_Delete(a);
    free(r);
    free(w);
    return s;
}
