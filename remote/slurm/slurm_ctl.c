/* Running Slurm commands here or on the login node (remote/slurm/slurm_ctl.h). */
#include "remote/slurm/slurm_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

enum { MAX_OUTPUT = 64 << 20 };

struct SlurmCtl {
    HostPool *pool; /* NULL: here */
    char where[256];
    double timeout_s;
    long calls;
    long long bytes_read; /* standard output of every call */
    char *last_stderr;
};

typedef struct {
    char *buf;
    size_t len, cap;
    int too_long;
} Text;

static void text_add(Text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > MAX_OUTPUT) {
        t->too_long = 1;
        return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = realloc(t->buf, cap);
        if (!grown)
            abort();
        t->buf = grown;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = 0;
}

SlurmCtl *slurm_ctl_new(const SlurmCtlOptions *o, Error *err)
{
    SlurmCtl *c = calloc(1, sizeof *c);
    if (!c) {
        error_set(err, "slurm: out of memory");
        return NULL;
    }
    c->timeout_s = o->timeout_s > 0 ? o->timeout_s : 30;
    snprintf(c->where, sizeof c->where, "here");
    if (!o->login || !o->login[0])
        return c;
    HostPoolOptions po = {.accept_new_host_keys = o->accept_new_host_keys,
                          .ssh_config = o->ssh_config};
    SshSettings none;
    memset(&none, 0, sizeof none);
    Machine m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "login");
    snprintf(m.host, sizeof m.host, "%s", o->login);
    HostConf hc;
    if (!(c->pool = hostpool_new(&po, err)) ||
        hostconf_from_machine(o->ssh ? o->ssh : &none, &m, &hc, err) < 0 ||
        hostpool_add(c->pool, &hc, err) < 0) {
        error_prefix(err, "slurm login '%s'", o->login);
        slurm_ctl_free(c);
        return NULL;
    }
    hostpool_connect(c->pool, 0, 1);
    snprintf(c->where, sizeof c->where, "%s", o->login);
    return c;
}

void slurm_ctl_free(SlurmCtl *c)
{
    if (!c)
        return;
    hostpool_free(c->pool);
    free(c->last_stderr);
    free(c);
}

long slurm_ctl_calls(const SlurmCtl *c)
{
    return c->calls;
}

long long slurm_ctl_bytes_read(const SlurmCtl *c)
{
    return c->bytes_read;
}

const char *slurm_ctl_last_stderr(const SlurmCtl *c)
{
    return c->last_stderr ? c->last_stderr : "";
}

const char *slurm_ctl_where(const SlurmCtl *c)
{
    return c->where;
}

static void last_line(const Text *t, char *out, size_t cap)
{
    out[0] = 0;
    if (!t->buf)
        return;
    size_t end = t->len;
    while (end && (t->buf[end - 1] == '\n' || t->buf[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start && t->buf[start - 1] != '\n')
        start--;
    snprintf(out, cap, "%.*s", (int)(end - start), t->buf + start);
}

static int run_here(SlurmCtl *c, const char *const *argv, Text *out, Text *errt, Error *err)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0)
        return error_set(err, "%s: pipe: %s", argv[0], strerror(errno));
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return error_set(err, "%s: pipe: %s", argv[0], strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        for (int i = 0; i < 2; i++)
            close(po[i]), close(pe[i]);
        return error_set(err, "%s: fork: %s", argv[0], strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(po[1]);
    close(pe[1]);
    int fds[2] = {po[0], pe[0]};
    Text *texts[2] = {out, errt};
    int64_t deadline = clock_now_ms() + (int64_t)(c->timeout_s * 1000);
    int timed_out = 0;
    while (fds[0] >= 0 || fds[1] >= 0) {
        struct pollfd pfd[2];
        nfds_t n = 0;
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                pfd[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        int64_t left = deadline - clock_now_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        if (poll(pfd, n, (int)left) < 0 && errno != EINTR)
            break;
        for (nfds_t k = 0; k < n; k++) {
            if (!pfd[k].revents)
                continue;
            int i = pfd[k].fd == fds[0] ? 0 : 1;
            char buf[65536];
            ssize_t got = read(fds[i], buf, sizeof buf);
            if (got > 0) {
                text_add(texts[i], buf, (size_t)got);
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (timed_out)
        kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return error_set(err, "%s: no answer within %.0f s (is slurmctld up?)", argv[0],
                         c->timeout_s);
    if (WIFSIGNALED(status))
        return error_set(err, "%s: killed by signal %d", argv[0], WTERMSIG(status));
    if (WEXITSTATUS(status) == 127 && strstr(errt->buf ? errt->buf : "", "cannot run"))
        return error_set(err, "%s: not found here (is Slurm installed? or name a \"login\" "
                              "node in the inventory)",
                         argv[0]);
    return WEXITSTATUS(status);
}

typedef struct {
    Text *out, *errt;
} LoginLines;

static void on_line(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    (void)x;
    (void)cut;
    LoginLines *l = ud;
    Text *t = stream == STREAM_STDERR ? l->errt : l->out;
    text_add(t, line, strlen(line));
    text_add(t, "\n", 1);
}

static size_t pool_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return hostpool_pollfds(ctx, fds, cap, deadline_ms);
}

static void pool_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hostpool_step(ctx, fds, n, now_ms);
}

static int exec_done(void *ctx)
{
    return rexec_done(ctx);
}

static int run_login(SlurmCtl *c, const char *const *argv, Text *out, Text *errt, Error *err)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char *cmd = shquote_argv(argv, n);
    if (!cmd)
        return error_set(err, "slurm: out of memory");
    LoginLines ll = {out, errt};
    ExecOptions xo = {.on_line = on_line, .userdata = &ll};
    RemoteExec *x = hostpool_exec(c->pool, 0, cmd, NULL, 0, &xo, err);
    free(cmd);
    if (!x)
        return error_prefix(err, "%s on %s", argv[0], c->where);
    evloop_run_source(pool_pollfds, pool_step, c->pool, exec_done, x, clock_now_ms() + (int64_t)(c->timeout_s * 1000));
    int rc;
    switch (rexec_outcome(x)) {
    case EXEC_EXITED:
        rc = rexec_exit_status(x);
        if (rc == 127)
            rc = error_set(err, "%s: not found on %s (is Slurm installed there?)", argv[0],
                           c->where);
        break;
    case EXEC_RUNNING:
        rc = error_set(err, "%s on %s: no answer within %.0f s", argv[0], c->where, c->timeout_s);
        break;
    case EXEC_SIGNALED:
        rc = error_set(err, "%s on %s: killed by %s", argv[0], c->where, rexec_error(x));
        break;
    default:
        rc = error_set(err, "%s on %s: ssh failed: %s", argv[0], c->where, rexec_error(x));
        break;
    }
    rexec_free(x);
    return rc;
}

int slurm_ctl_run(SlurmCtl *c, const char *const *argv, char **out, Error *err)
{
    Text o = {0}, e = {0};
    c->calls++;
    int rc = c->pool ? run_login(c, argv, &o, &e, err) : run_here(c, argv, &o, &e, err);
    c->bytes_read += (long long)o.len;
    if (rc > 0) {
        char line[300];
        last_line(&e, line, sizeof line);
        error_set(err, "%s exited with status %d%s%s", argv[0], rc, line[0] ? ": " : "", line);
    } else if (rc == 0 && o.too_long) {
        rc = error_set(err, "%s: more than %d MiB of output", argv[0], MAX_OUTPUT >> 20);
    }
    free(c->last_stderr);
    c->last_stderr = e.buf;
    if (out && rc == 0) {
        *out = o.buf ? o.buf : strdup("");
        if (!*out)
            abort();
    } else {
        if (out)
            *out = NULL;
        free(o.buf);
    }
    return rc;
}
