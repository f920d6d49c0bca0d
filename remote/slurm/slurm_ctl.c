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

#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "remote/slurm/slurm_ctl_priv.h"
#include "remote/ssh/hostpool.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

enum { MAX_OUTPUT = 64 << 20 };


struct SlurmCtl {
    HostPool *pool; /* NULL: here */
    char where[256];
    char login_host[sizeof ((Machine *)0)->name]; /* the pool's one host */
    double timeout_s;
    long calls;
    long long bytes_read; /* standard output of every call */
    char *last_stderr;
    int last_cut; /* slurm_ctl_last_cut */
    int last_unusable; /* slurm_ctl_last_unusable */
};

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
    snprintf(m.name, sizeof m.name, "%s", o->login); /* trials' messages name it */
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
    snprintf(c->login_host, sizeof c->login_host, "%s", m.name);
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

int slurm_ctl_last_cut(const SlurmCtl *c)
{
    return c->last_cut;
}

int slurm_ctl_last_unusable(const SlurmCtl *c)
{
    return c->last_unusable;
}

const char *slurm_ctl_where(const SlurmCtl *c)
{
    return c->where;
}

HostPool *slurm_ctl_login_pool(SlurmCtl *c, const char **host)
{
    if (host)
        *host = c->login_host;
    return c->pool;
}

/* The line of t->buf that ends before `end` (newlines skipped): [*start, returned end). */
static size_t line_before(const Text *t, size_t end, size_t *start)
{
    while (end && (t->buf[end - 1] == '\n' || t->buf[end - 1] == '\r'))
        end--;
    size_t s = end;
    while (s && t->buf[s - 1] != '\n')
        s--;
    *start = s;
    return end;
}

/* The line before sbatch's "Batch job submission failed: WORDS" that says why in words of
 * slurmctld's own (the err_msg it sends with the error code, which sbatch prints first): the
 * limit's reason ("sbatch: error: QOSMaxSubmitJobPerUserLimit", job_reason_string's name), or a
 * job_submit plugin's ("sbatch: error: Reached jobs per hour limit", job_submit/throttle's,
 * captured on the harness: tests/fixtures/slurm/sbatch-22.05-throttled.err). */
static int reason_line(const char *p, size_t n, const char *last, size_t last_n)
{
    static const char failed[] = "Batch job submission failed: ", error[] = ": error: ";
    return memmem(last, last_n, failed, sizeof failed - 1) &&
           memmem(p, n, error, sizeof error - 1) != NULL;
}

/* The last line, with the one before it when that is a reason line: "Job violates
 * accounting/QOS policy" says only which error; the reason says which limit (a count of
 * jobs, which clears, or a size, which does not: liveslurm_sbatch_refusal). */
static void last_line(const Text *t, char *out, size_t cap)
{
    out[0] = 0;
    if (!t->buf)
        return;
    size_t start, end = line_before(t, t->len, &start);
    size_t rs, re = line_before(t, start, &rs);
    if (re > rs && reason_line(t->buf + rs, re - rs, t->buf + start, end - start))
        snprintf(out, cap, "%.*s; %.*s", (int)(re - rs), t->buf + rs, (int)(end - start),
                 t->buf + start);
    else
        snprintf(out, cap, "%.*s", (int)(end - start), t->buf + start);
}

enum { REAP_POLL_MS = 5 };

static int start_here(SlurmCall *k, const char *const *argv, Error *err)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0)
        return error_set(err, "%s: pipe: %s", argv[0], strerror(errno));
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return error_set(err, "%s: pipe: %s", argv[0], strerror(errno));
    }
    pid_t pid = childsig_fork(); /* the command starts with no handler of ours */
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
        execvp(argv[0], (char *const *)argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(po[1]);
    close(pe[1]);
    k->pid = pid;
    k->fds[0] = po[0];
    k->fds[1] = pe[0];
    return 0;
}

static void on_line(void *ud, RemoteExec *x, StreamKind stream, const char *line, int cut)
{
    (void)x;
    (void)cut;
    SlurmCall *k = ud;
    if (stream == STREAM_STDERR && slurm_loginstop_take_pid(k, line))
        return;
    Text *t = stream == STREAM_STDERR ? &k->errt : &k->out;
    text_add(t, line, strlen(line));
    text_add(t, "\n", 1);
}

static int start_login(SlurmCall *k, const char *const *argv, Error *err)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char script[160];
    const char **run = calloc(n + 5, sizeof *run);
    if (!run)
        return error_set(err, "slurm: out of memory");
    size_t m = 0;
    if (k->announce) {
        slurm_loginstop_begin(k, script, sizeof script);
        run[m++] = "sh";
        run[m++] = "-c";
        run[m++] = script;
        run[m++] = "sh";
    }
    for (size_t i = 0; i < n; i++)
        run[m++] = argv[i];
    char *cmd = shquote_argv(run, m);
    free(run);
    if (!cmd)
        return error_set(err, "slurm: out of memory");
    ExecOptions xo = {.on_line = on_line, .userdata = k};
    k->x = hostpool_exec(k->c->pool, 0, cmd, NULL, 0, &xo, err);
    free(cmd);
    if (!k->x)
        return error_prefix(err, "%s on %s", argv[0], k->c->where);
    return 0;
}

SlurmCall *slurm_call_begin(SlurmCtl *c, const char *const *argv, int announce, Error *err)
{
    SlurmCall *k = calloc(1, sizeof *k);
    if (!k) {
        error_set(err, "slurm: out of memory");
        return NULL;
    }
    k->c = c;
    k->announce = announce && c->pool;
    k->fds[0] = k->fds[1] = -1;
    snprintf(k->cmd, sizeof k->cmd, "%s", argv[0]);
    k->deadline_ms = clock_now_ms() + (int64_t)(c->timeout_s * 1000);
    c->calls++;
    if ((c->pool ? start_login(k, argv, err) : start_here(k, argv, err)) < 0) {
        free(k);
        return NULL;
    }
    return k;
}

SlurmCall *slurm_call_start(SlurmCtl *c, const char *const *argv, Error *err)
{
    return slurm_call_begin(c, argv, 0, err);
}

/* A command cut by the timeout. What it said before is kept: sinfo with no slurm.conf at
 * SLURM_CONF retries for 60 s, saying so on its first line ("s_p_parse_file: cannot stat
 * file ..."), and "is slurmctld up?" alone sent the operator to the wrong place. */
static int no_answer(const SlurmCall *k, const char *where, const char *guess, const char *cut,
                     Error *err)
{
    char line[300];
    last_line(&k->errt, line, sizeof line);
    const char *conf = strstr(line, "s_p_parse_file") ? " (the slurm.conf it was given cannot be "
                                                        "read: check SLURM_CONF)"
                                                      : "";
    return error_set(err, "%s%s%s: no answer within %g s%s%s%s%s", k->cmd, where[0] ? " on " : "",
                     where, k->c->timeout_s, cut, line[0] ? "; it said: " : guess, line, conf);
}

/* The exit status, or -1 with err, once the command has ended here. */
static int outcome_here(SlurmCall *k, Error *err)
{
    if (k->timed_out)
        return no_answer(k, "", " (is slurmctld up?)", "", err);
    if (WIFSIGNALED(k->status))
        return error_set(err, "%s: killed by signal %d", k->cmd, WTERMSIG(k->status));
    if (WEXITSTATUS(k->status) == 127 && strstr(k->errt.buf ? k->errt.buf : "", "cannot run")) {
        k->unusable = 1;
        return error_set(err,
                         "%s: not found here (is Slurm installed? or name a \"login\" "
                         "node in the inventory)",
                         k->cmd);
    }
    return WEXITSTATUS(k->status);
}

static int outcome_login(SlurmCall *k, Error *err)
{
    const SlurmCtl *c = k->c;
    if (k->timed_out) {
        char cut[128];
        slurm_loginstop_cut_words(k, cut, sizeof cut);
        return no_answer(k, c->where, "", cut, err);
    }
    int rc;
    switch (rexec_outcome(k->x)) {
    case EXEC_EXITED:
        rc = rexec_exit_status(k->x);
        if (rc == 127) {
            k->unusable = 1;
            rc =
                error_set(err, "%s: not found on %s (is Slurm installed there?)", k->cmd, c->where);
        }
        break;
    case EXEC_SIGNALED:
        rc = error_set(err, "%s on %s: killed by %s", k->cmd, c->where, rexec_error(k->x));
        break;
    default:
        rc = error_set(err, "%s on %s: ssh failed: %s", k->cmd, c->where, rexec_error(k->x));
        break;
    }
    return rc;
}

/* What slurm_ctl_run returns: a non-zero exit quotes the last standard-error line (and a
 * reason line before it). */
static void settle(SlurmCall *k)
{
    int rc = k->c->pool ? outcome_login(k, &k->err) : outcome_here(k, &k->err);
    if (rc > 0) {
        char line[300];
        last_line(&k->errt, line, sizeof line);
        /* Slurm's words for "no slurm.conf and no configless slurmctld found" name neither */
        k->unusable = strstr(line, "Could not establish a configuration source") != NULL;
        const char *hint = !k->unusable ? ""
                           : k->c->pool ? " (the login node's Slurm commands find no "
                                          "configuration: SLURM_CONF there, or another login node)"
                                        : " (no Slurm configuration here: set SLURM_CONF to the "
                                          "cluster's slurm.conf, or give the inventory a \"login\" "
                                          "node where Slurm's commands work)";
        error_set(&k->err, "%s exited with status %d%s%s%s", k->cmd, rc, line[0] ? ": " : "", line,
                  hint);
    } else if (rc == 0 && k->out.too_long) {
        rc = error_set(&k->err, "%s: more than %d MiB of output", k->cmd, MAX_OUTPUT >> 20);
    }
    k->rc = slurm_loginstop_check_pid(k, rc);
    k->done = 1;
}

size_t slurm_call_pollfds(SlurmCall *k, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (k->done)
        return 0;
    if (k->c->pool) {
        size_t n = hostpool_pollfds(k->c->pool, fds, cap, deadline_ms);
        int64_t next = k->deadline_ms + (k->timed_out ? SLURM_CALL_INTERRUPT_WAIT_MS : 0);
        if (*deadline_ms < 0 || next < *deadline_ms)
            *deadline_ms = next;
        return n;
    }
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        if (k->fds[i] >= 0 && n < cap)
            fds[n++] = (struct pollfd){.fd = k->fds[i], .events = POLLIN};
    int64_t next = k->deadline_ms;
    if (k->fds[0] < 0 && k->fds[1] < 0) {
        int64_t reap = clock_now_ms() + REAP_POLL_MS; /* output closed: waiting for the exit */
        next = next < reap ? next : reap;
    }
    if (*deadline_ms < 0 || next < *deadline_ms)
        *deadline_ms = next;
    return n;
}

static void step_here(SlurmCall *k, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    Text *texts[2] = {&k->out, &k->errt};
    for (size_t j = 0; j < n; j++) {
        if (!fds[j].revents)
            continue;
        int i = fds[j].fd == k->fds[0] ? 0 : fds[j].fd == k->fds[1] ? 1 : -1;
        if (i < 0)
            continue;
        char buf[65536];
        ssize_t got = read(k->fds[i], buf, sizeof buf);
        if (got > 0) {
            text_add(texts[i], buf, (size_t)got);
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            close(k->fds[i]);
            k->fds[i] = -1;
        }
    }
    if (now_ms >= k->deadline_ms && !k->exited) {
        k->timed_out = 1;
        kill(-k->pid, SIGKILL);
        for (int i = 0; i < 2; i++)
            if (k->fds[i] >= 0) {
                close(k->fds[i]);
                k->fds[i] = -1;
            }
        while (waitpid(k->pid, &k->status, 0) < 0 && errno == EINTR)
            ;
        k->exited = 1;
    }
    if (!k->exited && k->fds[0] < 0 && k->fds[1] < 0 &&
        waitpid(k->pid, &k->status, WNOHANG) == k->pid)
        k->exited = 1;
    if (k->exited)
        settle(k);
}

/* On the login node a command cut here runs on there (salloc until its own --immediate ends,
 * its job queued meanwhile): one that said its pid is interrupted there as a stop does. */
static void step_login(SlurmCall *k, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hostpool_step(k->c->pool, fds, n, now_ms);
    if (!k->timed_out && !rexec_done(k->x) && now_ms >= k->deadline_ms) {
        k->timed_out = 1;
        if (now_ms < k->deadline_ms + SLURM_CALL_INTERRUPT_WAIT_MS) /* not a final step */
            slurm_loginstop_send(k);
    }
    if (k->timed_out ? slurm_loginstop_cut_settled(k, now_ms) : rexec_done(k->x))
        settle(k);
}

void slurm_call_step(SlurmCall *k, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (k->done)
        return;
    if (k->c->pool)
        step_login(k, fds, n, now_ms);
    else
        step_here(k, fds, n, now_ms);
}

int slurm_call_done(const SlurmCall *k)
{
    return k->done;
}

int slurm_call_finish(SlurmCall *k, char **out, Error *err)
{
    int rc = k->done ? k->rc : error_set(err, "%s: not finished", k->cmd);
    if (k->done && rc != 0)
        *err = k->err;
    SlurmCtl *c = k->c;
    c->last_cut = k->timed_out ? 1 + slurm_loginstop_reached(k) : 0;
    c->last_unusable = k->done && k->unusable;
    c->bytes_read += (long long)k->out.len;
    free(c->last_stderr);
    c->last_stderr = k->errt.buf;
    k->errt.buf = NULL;
    if (out && rc == 0) {
        *out = k->out.buf ? k->out.buf : strdup("");
        if (!*out)
            abort();
        k->out.buf = NULL;
    } else if (out) {
        *out = NULL;
    }
    slurm_call_free(k);
    return rc;
}

void slurm_call_free(SlurmCall *k)
{
    if (!k)
        return;
    if (k->pid > 0 && !k->exited) {
        kill(-k->pid, SIGKILL);
        while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    for (int i = 0; i < 2; i++)
        if (k->fds[i] >= 0)
            close(k->fds[i]);
    rexec_free(k->interrupt);
    rexec_free(k->x);
    free(k->out.buf);
    free(k->errt.buf);
    free(k);
}

int slurm_ctl_run(SlurmCtl *c, const char *const *argv, char **out, Error *err)
{
    return slurm_ctl_run_stoppable(c, argv, out, NULL, NULL, NULL, err);
}
