/* Children are forked before any thread exists and die with the parent (PR_SET_PDEATHSIG);
 * listening sockets are bound by the parent first, so no child can race for a port. */
#include "tools/worker/sgd_local.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/linebuf.h"
#include "core/model/protocol.h"
#include "tools/worker/psnet.h"

typedef struct {
    pid_t pid;
    int fd;
    size_t machine;
    LineBuf buf;
    int status, reaped;
} Child;

typedef struct {
    const char *machine;
    uint64_t first_step;
} LineCtx;

static void print_iteration(void *ud, const SgdIteration *it)
{
    const LineCtx *lc = ud;
    char *line = sgd_iteration_format(it, lc->machine, (int)(it->step - lc->first_step - 1));
    printf("%s\n", line);
    fflush(stdout);
    free(line);
}

/* One machine in a forked child; its exit status. */
static int child_main(const SgdLocalConfig *cfg, size_t machine, int out_fd, int listen_fd,
                      char (*hosts)[256], const int *ports)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out_fd, 1);
    close(out_fd);
    const Machine *m = &cfg->base.schedule->cluster->machines[machine];
    LineCtx lc = {m->name, cfg->base.first_step};
    SgdMachineConfig mc = cfg->base;
    mc.machine = machine;
    mc.ps_listen_fd = listen_fd;
    mc.ps_host = hosts;
    mc.ps_port = ports;
    mc.slowdown = cfg->slowdown ? cfg->slowdown + m->first_device : NULL;
    mc.on_iteration = cfg->iteration_lines ? print_iteration : NULL;
    mc.userdata = &lc;
    Error err = {0};
    int rc = sgd_machine_run(&mc, &err);
    if (rc < 0) {
        TrialEvent ev = {.kind = EVENT_ERROR, .text = err.msg};
        char *line = protocol_format(&ev);
        printf("%s\n", line);
        free(line);
        fprintf(stderr, "tunedeck-worker: %s\n", err.msg);
    }
    fflush(stdout);
    fflush(stderr);
    return rc < 0 ? 1 : 0;
}

/* Per-iteration slowest time over machines: a synchronous iteration lasts that long. */
typedef struct {
    double *time_s;
    size_t n;
} IterTimes;

static void note_line(IterTimes *t, const char *line)
{
    TrialEvent ev;
    Error e;
    if (protocol_parse_line(line, &ev, &e) < 0)
        return;
    if (ev.kind == EVENT_ITERATION && ev.iter >= 0 && ev.iter < 1000000 && ev.time_s >= 0) {
        if ((size_t)ev.iter >= t->n) {
            size_t n = (size_t)ev.iter + 1;
            double *g = realloc(t->time_s, n * sizeof *g);
            if (g) {
                for (size_t i = t->n; i < n; i++)
                    g[i] = -1;
                t->time_s = g;
                t->n = n;
            }
        }
        if ((size_t)ev.iter < t->n && ev.time_s > t->time_s[ev.iter])
            t->time_s[ev.iter] = ev.time_s;
    }
    trial_event_clear(&ev);
}

/* -1 when a line met a closed pipe (EPIPE: SIGPIPE is ignored for the PS sockets): whoever
 * read us is gone. */
static int relay(Child *c, FILE *out, IterTimes *t, int at_end)
{
    char *line;
    int cut, gone = 0;
    while ((line = at_end ? linebuf_finish(&c->buf, &cut) : linebuf_pop(&c->buf, &cut))) {
        if ((fprintf(out, "%s\n", line) < 0 || fflush(out) != 0) && errno == EPIPE)
            gone = 1;
        note_line(t, line);
        free(line);
        if (at_end)
            break;
    }
    return gone ? -1 : 0;
}

int sgd_local_run(const SgdLocalConfig *cfg, FILE *out, Error *err)
{
    const SgdPlan *plan = cfg->base.plan;
    const Cluster *c = cfg->base.schedule->cluster;
    size_t ns = plan->n_shards, nm = c->n_machines;
    char(*hosts)[256] = calloc(ns, sizeof *hosts);
    int *ports = calloc(ns, sizeof *ports), *listen_fd = calloc(ns, sizeof *listen_fd);
    Child *kids = calloc(nm, sizeof *kids);
    IterTimes times = {0};
    size_t n_kids = 0;
    int rc = -1;
    if (!hosts || !ports || !listen_fd || !kids) {
        error_set(err, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        listen_fd[k] = -1;
    for (size_t k = 0; k < ns; k++) {
        snprintf(hosts[k], sizeof hosts[k], "127.0.0.1");
        listen_fd[k] = psnet_listen("127.0.0.1", 0, &ports[k], err);
        if (listen_fd[k] < 0)
            goto out;
    }
    fflush(out);
    fflush(stderr);
    for (size_t m = 0; m < nm; m++) {
        long shard = plan->machine_shard[m];
        if (shard < 0 && plan->machine_rank[m] < 0)
            continue;
        int p[2];
        if (pipe(p) < 0) {
            error_set(err, "pipe: %s", strerror(errno));
            goto stop_all;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]);
            close(p[1]);
            error_set(err, "fork: %s", strerror(errno));
            goto stop_all;
        }
        if (pid == 0) {
            close(p[0]);
            for (size_t k = 0; k < ns; k++)
                if ((long)k != shard)
                    close(listen_fd[k]);
            for (size_t i = 0; i < n_kids; i++)
                close(kids[i].fd);
            int status = child_main(cfg, m, p[1], shard >= 0 ? listen_fd[shard] : -1, hosts, ports);
            /* What the child inherited of the parent's bookkeeping goes with it: none of it
             * is the child's to keep, and valgrind counts it lost at _exit otherwise. */
            for (size_t i = 0; i < n_kids; i++)
                linebuf_clear(&kids[i].buf);
            free(hosts);
            free(ports);
            free(listen_fd);
            free(kids);
            _exit(status);
        }
        close(p[1]);
        Child *k = &kids[n_kids++];
        k->pid = pid;
        k->fd = p[0];
        k->machine = m;
        linebuf_init(&k->buf, 4 << 20);
    }
    for (size_t k = 0; k < ns; k++) {
        close(listen_fd[k]);
        listen_fd[k] = -1;
    }
    int forwarded = 0, failed = 0, unread = 0;
    for (;;) {
        struct pollfd pfd[512];
        size_t idx[512], n = 0;
        for (size_t i = 0; i < n_kids && n < 512; i++)
            if (kids[i].fd >= 0) {
                pfd[n] = (struct pollfd){.fd = kids[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        if (n == 0)
            break;
        /* No one reads us any more (the live scheduler or tune that ran us was killed, its
         * SSH channel or pipe closed): the stop that will never be asked is taken now, the
         * same as on SIGTERM (a job writes its checkpoint), rather than train on for ever
         * on GPUs no one counts, holding the job's folder against its next run. */
        if (((cfg->stop && *cfg->stop) || unread) && !forwarded) {
            for (size_t i = 0; i < n_kids; i++)
                if (plan->machine_shard[kids[i].machine] >= 0)
                    kill(kids[i].pid, SIGTERM);
            forwarded = 1;
        }
        int r = poll(pfd, n, 200);
        if (r < 0 && errno != EINTR) {
            error_set(err, "poll: %s", strerror(errno));
            goto stop_all;
        }
        for (size_t j = 0; r > 0 && j < n; j++) {
            if (!pfd[j].revents)
                continue;
            Child *k = &kids[idx[j]];
            char buf[65536];
            ssize_t got = read(k->fd, buf, sizeof buf);
            if (got > 0) {
                linebuf_append(&k->buf, buf, (size_t)got);
                if (relay(k, out, &times, 0) < 0 && !unread) {
                    unread = 1;
                    fprintf(stderr, "tunedeck-worker: its output is closed (whoever read it "
                                    "is gone): stopping\n");
                }
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                if (relay(k, out, &times, 1) < 0)
                    unread = 1;
                close(k->fd);
                k->fd = -1;
                waitpid(k->pid, &k->status, 0);
                k->reaped = 1;
                if (!(WIFEXITED(k->status) && WEXITSTATUS(k->status) == 0) && !failed) {
                    failed = 1;
                    const char *name = c->machines[k->machine].name;
                    if (WIFSIGNALED(k->status))
                        error_set(err, "machine %s: killed by signal %d", name,
                                  WTERMSIG(k->status));
                    else
                        error_set(err, "machine %s: exited with status %d", name,
                                  WEXITSTATUS(k->status));
                    /* Its peers would wait for it until their timeouts: stop them now. */
                    for (size_t i = 0; i < n_kids; i++)
                        if (!kids[i].reaped)
                            kill(kids[i].pid, SIGKILL);
                }
            }
        }
    }
    if (failed)
        goto stop_all;
    if (cfg->print_done) {
        int warmup = cfg->base.schedule->job.warmup;
        double sum = 0;
        int count = 0;
        for (size_t i = (size_t)warmup; i < times.n; i++)
            if (times.time_s[i] >= 0) {
                sum += times.time_s[i];
                count++;
            }
        if (count == 0) {
            error_set(err, "no iteration after the %d warm-up iterations was reported", warmup);
            goto stop_all;
        }
        TrialEvent done = {.kind = EVENT_DONE, .time_s = sum / count};
        char *line = protocol_format(&done);
        fprintf(out, "%s\n", line);
        fflush(out);
        free(line);
    }
    rc = 0;
stop_all:
    for (size_t i = 0; i < n_kids; i++) {
        if (!kids[i].reaped) {
            kill(kids[i].pid, SIGKILL);
            waitpid(kids[i].pid, &kids[i].status, 0);
        }
        if (kids[i].fd >= 0)
            close(kids[i].fd);
        linebuf_clear(&kids[i].buf);
    }
out:
    if (listen_fd)
        for (size_t k = 0; k < ns; k++)
            if (listen_fd[k] >= 0)
                close(listen_fd[k]);
    free(hosts);
    free(ports);
    free(listen_fd);
    free(kids);
    free(times.time_s);
    return rc;
}
