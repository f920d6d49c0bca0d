/* The generic peers: Optuna's samplers (and a numpy GP-EI) in a Python process,
 * bench/generic_peer.py, answering ask/tell/report over JSON lines. */
#include <cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/optbench/optbench.h"
#include "core/base/clock.h"
#include "core/opt/flatsched.h"

static const double PEER_TIMEOUT_S = 120; /* one answer from the Python peer */

const char *const PEER_SAMPLERS[N_PEER_SAMPLERS] = {"tpe", "cmaes", "gp-ei", "tpe-median"};
const char *const PEER_NAMES[N_PEER_SAMPLERS] = {"optuna-tpe", "optuna-cmaes", "generic-gp-ei",
                                                 "optuna-tpe-median"};

static int peer_read_line(Peer *p, char **line, Error *err)
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

cJSON *peer_call(Peer *p, const char *request, Error *err)
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
    if (peer_read_line(p, &line, err) < 0)
        return NULL;
    cJSON *j = cJSON_Parse(line);
    if (!j || !cJSON_IsObject(j)) {
        error_set(err, "generic peer: expected a JSON object, found '%.80s'", line);
        cJSON_Delete(j);
        free(line);
        return NULL;
    }
    free(line);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(e)) {
        error_set(err, "generic peer: %s", e->valuestring);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

void peer_stop(Peer *p)
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

int peer_start(Peer *p, const char *python, const char *script, Error *err)
{
    memset(p, 0, sizeof *p);
    if (access(python, X_OK) != 0)
        return error_set(err, "%s: not an executable (%s)", python, strerror(errno));
    if (access(script, R_OK) != 0)
        return error_set(err, "%s: cannot read the peer script (%s)", script, strerror(errno));
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0)
        return error_set(err, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return error_set(err, "fork: %s", strerror(errno));
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
    cJSON *hello = peer_call(p, NULL, err);
    if (!hello) {
        peer_stop(p);
        return -1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hello, "optuna");
    snprintf(p->version, sizeof p->version, "%s",
             cJSON_IsString(v) ? v->valuestring : "not importable");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(hello, "samplers");
    for (int i = 0; i < N_PEER_SAMPLERS; i++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, PEER_SAMPLERS[i]);
        snprintf(p->sampler_note[i], sizeof p->sampler_note[i], "%s",
                 cJSON_IsString(n) ? n->valuestring : "not offered by the peer script");
    }
    cJSON_Delete(hello);
    return 0;
}
int peer_new_study(Bench *b, const Contender *k, const Cell *cell, uint64_t seed, Error *err)
{
    const Cluster *c = simcluster_cluster(cell->sim);
    char req[256];
    snprintf(req, sizeof req,
             "{\"op\":\"new\",\"sampler\":\"%s\",\"seed\":%llu,\"roles\":%zu,\"weights\":%zu}\n",
             PEER_SAMPLERS[k->peer_sampler], (unsigned long long)seed, c->n_machines, c->n_devices);
    cJSON *a = peer_call(&b->peer, req, err);
    b->peer_pruning = a && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "pruner"));
    cJSON_Delete(a);
    return a ? 0 : -1;
}

Schedule *peer_ask(Bench *b, const Cell *cell, Error *err)
{
    const Cluster *c = simcluster_cluster(cell->sim);
    cJSON *a = peer_call(&b->peer, "{\"op\":\"ask\"}\n", err);
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
    int *r = calloc(c->n_machines, sizeof *r);
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    for (size_t m = 0; m < c->n_machines; m++)
        r[m] = cJSON_GetArrayItem(roles, (int)m)->valueint;
    for (size_t d = 0; d < c->n_devices; d++)
        w[d] = cJSON_GetArrayItem(weights, (int)d)->valuedouble;
    cJSON_Delete(a);
    Schedule *s = schedule_new(c, simcluster_job(cell->sim));
    if (flatsched_decode(r, w, s, err) < 0) {
        schedule_free(s);
        s = NULL;
    }
    free(r);
    free(w);
    return s;
}

int peer_tell(Bench *b, double value, int pruned, Error *err)
{
    char req[160];
    snprintf(req, sizeof req, "{\"op\":\"tell\",\"value\":%.17g,\"pruned\":%s}\n", value,
             pruned ? "true" : "false");
    cJSON *a = peer_call(&b->peer, req, err);
    cJSON_Delete(a);
    return a ? 0 : -1;
}

int peer_report(Bench *b, int step, double value, Error *err)
{
    char req[160];
    snprintf(req, sizeof req, "{\"op\":\"report\",\"step\":%d,\"value\":%.17g}\n", step, value);
    cJSON *a = peer_call(&b->peer, req, err);
    if (!a)
        return -1;
    int prune = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "prune"));
    cJSON_Delete(a);
    return prune;
}
