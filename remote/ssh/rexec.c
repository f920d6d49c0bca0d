/* Exec channels on the host pool's sessions: open, exec, feed standard input, split
 * stdout/stderr into bounded lines, and take the exit status from libssh's callbacks. */
#include "remote/ssh/rexec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/linebuf.h"
#include "core/base/termsafe.h"
#include "remote/ssh/hostpool_priv.h"

enum { DEFAULT_MAX_LINE = 4 << 20 };

typedef enum { X_QUEUED, X_OPENING, X_EXECING, X_RUNNING, X_DONE } ExecPhase;

struct RemoteExec {
    HostPool *pool;
    size_t host;
    RemoteExec *next; /* the host's list */
    char *command;
    char *input;
    size_t input_len, input_sent;
    ExecOptions opt;
    ExecPhase phase;
    ssh_channel ch;
    struct ssh_channel_callbacks_struct cb;
    LineBuf out, err;
    int eof_sent, closed_by_peer;
    int opened;          /* the server confirmed the channel's open: it has a number there */
    int open_unanswered; /* its open was sent, its answer not read yet (SSH_AGAIN) */
    int exec_sent;       /* ssh_channel_request_exec was called: the command may run on the host */
    int exit_status;
    char exit_signal[32];
    int64_t exited_ms; /* when the exit status or signal arrived; 0 before */
    size_t line_len;   /* the line on_line is given, in bytes: a NUL in it ends the string */
    ExecOutcome outcome;
    char *error; /* rexec_error's, NULL none: whole, as a failed login's words may be long */
};


static void deliver(RemoteExec *x, LineBuf *b, StreamKind stream, int at_end)
{
    int cut;
    char *line;
    while ((line = linebuf_pop(b, &cut))) {
        x->line_len = b->last_len;
        if (x->opt.on_line)
            x->opt.on_line(x->opt.userdata, x, stream, line, cut);
        free(line);
    }
    if (at_end && (line = linebuf_finish(b, &cut))) {
        x->line_len = b->last_len;
        if (x->opt.on_line)
            x->opt.on_line(x->opt.userdata, x, stream, line, cut);
        free(line);
    }
}

static int on_data(ssh_session s, ssh_channel ch, void *data, uint32_t len, int is_stderr,
                   void *userdata)
{
    (void)s, (void)ch;
    RemoteExec *x = userdata;
    LineBuf *b = is_stderr ? &x->err : &x->out;
    linebuf_append(b, data, len);
    deliver(x, b, is_stderr ? STREAM_STDERR : STREAM_STDOUT, 0);
    return (int)len;
}

static void on_exit_status(ssh_session s, ssh_channel ch, int status, void *userdata)
{
    (void)s, (void)ch;
    RemoteExec *x = userdata;
    x->exit_status = status;
    if (!x->exited_ms)
        x->exited_ms = clock_now_ms();
}

static void on_exit_signal(ssh_session s, ssh_channel ch, const char *signal, int core,
                           const char *errmsg, const char *lang, void *userdata)
{
    (void)s, (void)ch, (void)core, (void)errmsg, (void)lang;
    RemoteExec *x = userdata;
    /* The name is the server's own string (RFC 4254 6.10), not one of a known few: it goes
     * into every failure built from it ("killed by SIG..."), some printed as they are (a
     * stop's result on tune's stderr, schedule --live's log), so it is made visible here. */
    char raw[sizeof x->exit_signal];
    snprintf(raw, sizeof raw, "SIG%s", signal ? signal : "?");
    termsafe(x->exit_signal, sizeof x->exit_signal, raw);
    if (!x->exited_ms)
        x->exited_ms = clock_now_ms();
}

static void on_close(ssh_session s, ssh_channel ch, void *userdata)
{
    (void)s, (void)ch;
    RemoteExec *x = userdata;
    x->closed_by_peer = 1;
}

static void finish(RemoteExec *x, ExecOutcome outcome, const char *why)
{
    if (x->phase == X_DONE)
        return;
    deliver(x, &x->out, STREAM_STDOUT, 1);
    deliver(x, &x->err, STREAM_STDERR, 1);
    x->phase = X_DONE;
    x->outcome = outcome;
    if (why) {
        free(x->error);
        x->error = strdup(why); /* NULL when memory runs out: "" then */
    }
}

static void release_channel(RemoteExec *x)
{
    if (!x->ch)
        return;
    ssh_remove_channel_callbacks(x->ch, &x->cb);
    /* Freed now, it would leave its session open on the server once the server confirms it:
     * the host keeps it until the answer comes, and closes it then (chanlinger.c). */
    if (x->open_unanswered) {
        chanlinger_keep(x->pool->hosts[x->host], x->ch);
        x->ch = NULL;
        return;
    }
    /* EOF and CLOSE only for a channel the server opened: libssh 0.10 sends them for any, to
     * the remote number a refused open never got, 0, which sshd takes
     * for another channel's (MaxSessions 1: the running one's) or, where none is 0, for a
     * protocol error that drops the whole connection. One the server closed first still gets
     * its CLOSE (ssh_channel_is_open is false for it): sshd holds its session until then. */
    if (x->opened)
        ssh_channel_close(x->ch);
    ssh_channel_free(x->ch);
    x->ch = NULL;
}

static void pump_input(RemoteExec *x)
{
    while (x->input_sent < x->input_len) {
        uint32_t window = ssh_channel_window_size(x->ch);
        if (window == 0)
            return;
        size_t left = x->input_len - x->input_sent;
        uint32_t n = left < window ? (uint32_t)left : window;
        int w = ssh_channel_write(x->ch, x->input + x->input_sent, n);
        if (w == SSH_ERROR)
            return; /* the command does not read its input: its choice */
        if (w <= 0)
            return;
        x->input_sent += (size_t)w;
    }
    if (!x->eof_sent) {
        if (ssh_channel_send_eof(x->ch) == SSH_OK)
            x->eof_sent = 1;
    }
}

/* The session itself died under a channel call (the server's DISCONNECT, a reset): the
 * exec is left running for the host to fail it with the session's reason (hostconn.c's
 * session_lost), which libssh's error for the channel call would hide: it may already read
 * "Remote channel is closed" or a socket error, not the server's message. */
static int session_died(const Host *h)
{
    return !ssh_is_connected(h->s);
}

static void pump(HostPool *p, Host *h, RemoteExec *x)
{
    (void)p;
    int rc;
    switch (x->phase) {
    case X_QUEUED:
        x->ch = ssh_channel_new(h->s);
        if (!x->ch) {
            finish(x, EXEC_SSH_FAILED, "cannot create a channel");
            return;
        }
        ssh_callbacks_init(&x->cb);
        x->cb.userdata = x;
        x->cb.channel_data_function = on_data;
        x->cb.channel_exit_status_function = on_exit_status;
        x->cb.channel_exit_signal_function = on_exit_signal;
        x->cb.channel_close_function = on_close;
        ssh_add_channel_callbacks(x->ch, &x->cb);
        x->phase = X_OPENING;
        /* fall through */
    case X_OPENING:
        rc = ssh_channel_open_session(x->ch);
        x->open_unanswered = rc == SSH_AGAIN;
        if (rc == SSH_AGAIN || session_died(h))
            return;
        if (rc != SSH_OK) {
            char why[256];
            snprintf(why, sizeof why, "ssh to %s: cannot open a session channel: %s", h->conf.name,
                     ssh_get_error(h->s));
            release_channel(x);
            finish(x, EXEC_SSH_FAILED, why);
            return;
        }
        x->opened = 1;
        x->phase = X_EXECING;
        /* fall through */
    case X_EXECING:
        x->exec_sent = 1; /* an SSH_AGAIN may have sent it, its answer not read yet */
        rc = ssh_channel_request_exec(x->ch, x->command);
        if (rc == SSH_AGAIN || session_died(h))
            return;
        if (rc != SSH_OK) {
            char why[256];
            snprintf(why, sizeof why, "ssh to %s: the exec request was refused: %s", h->conf.name,
                     ssh_get_error(h->s));
            release_channel(x);
            finish(x, EXEC_SSH_FAILED, why);
            return;
        }
        x->phase = X_RUNNING;
        /* fall through */
    case X_RUNNING:
        if (!x->closed_by_peer)
            pump_input(x);
        if (!x->closed_by_peer && x->exit_status < 0 && !x->exit_signal[0] && session_died(h))
            return; /* no end of its own: its session died, and says why */
        if (x->closed_by_peer || ssh_channel_is_closed(x->ch)) {
            if (x->exit_status >= 0) {
                finish(x, EXEC_EXITED, NULL);
            } else if (x->exit_signal[0]) {
                char why[64];
                snprintf(why, sizeof why, "killed by %s", x->exit_signal);
                finish(x, EXEC_SIGNALED, why);
            } else {
                finish(x, EXEC_SSH_FAILED, "the channel closed without an exit status");
            }
            release_channel(x);
        }
        return;
    case X_DONE:
        return;
    }
}

void rexec_pump_host(HostPool *p, Host *h)
{
    chanlinger_step(h);
    for (RemoteExec *x = h->execs; x && h->state == HOST_READY; x = x->next)
        pump(p, h, x);
}

void rexec_fail_host(Host *h, const char *why)
{
    for (RemoteExec *x = h->execs; x; x = x->next) {
        /* One that had its exit status (or signal) ended by itself, which the session's
         * death after it does not change: its end stands, as the pump gives it once the
         * session is gone (ssh_channel_is_closed then). The DISCONNECT may be read in the
         * same round as that end, before the pump saw it. */
        if (x->phase != X_DONE && x->exit_status >= 0)
            finish(x, EXEC_EXITED, NULL);
        else if (x->phase != X_DONE && x->exit_signal[0]) {
            char killed[64];
            snprintf(killed, sizeof killed, "killed by %s", x->exit_signal);
            finish(x, EXEC_SIGNALED, killed);
        } else if (x->phase != X_DONE)
            finish(x, EXEC_SSH_FAILED, why);
        /* The session goes; its channels go with it (ssh_free). */
        if (x->ch)
            ssh_remove_channel_callbacks(x->ch, &x->cb);
        x->ch = NULL;
    }
}

int rexec_waiting(const Host *h)
{
    for (const RemoteExec *x = h->execs; x; x = x->next)
        if (x->phase != X_DONE)
            return 1;
    return 0;
}

RemoteExec *hostpool_exec(HostPool *p, size_t host, const char *command, const char *input,
                          size_t input_len, const ExecOptions *o, Error *err)
{
    if (host >= p->n) {
        error_set(err, "exec: no host %zu", host);
        return NULL;
    }
    RemoteExec *x = calloc(1, sizeof *x);
    char *cmd = x ? strdup(command) : NULL;
    char *in = cmd && input_len ? malloc(input_len) : NULL;
    if (!x || !cmd || (input_len && !in)) {
        free(x);
        free(cmd);
        error_set(err, "exec on host %zu: out of memory", host);
        return NULL;
    }
    x->pool = p;
    x->host = host;
    x->command = cmd;
    if (input_len) {
        x->input = in;
        memcpy(x->input, input, input_len);
        x->input_len = input_len;
    }
    if (o)
        x->opt = *o;
    size_t max_line = x->opt.max_line ? x->opt.max_line : DEFAULT_MAX_LINE;
    linebuf_init(&x->out, max_line);
    linebuf_init(&x->err, max_line);
    x->exit_status = -1;
    x->outcome = EXEC_RUNNING;
    Host *h = p->hosts[host];
    x->next = h->execs;
    h->execs = x;
    h->dirty = 1;
    host_wanted(p, h, clock_now_ms());
    return x;
}

/* The exec is queued first: a synchronous refusal of the attempt below (host_down) then fails
 * it with the host's error at once, where an exec queued after that refusal would wait for
 * the back-off's next attempt. hostpool_exec itself starts the attempt for an idle host, or a
 * down one whose retry is due: none is started twice. */
RemoteExec *hostpool_exec_now(HostPool *p, size_t host, const char *command, const char *input,
                              size_t input_len, const ExecOptions *o, Error *err)
{
    RemoteExec *x = hostpool_exec(p, host, command, input, input_len, o, err);
    if (x && !rexec_done(x) && p->hosts[host]->state == HOST_DOWN)
        hostpool_connect(p, host, 0);
    return x;
}

int64_t rexec_exited_ms(const RemoteExec *x)
{
    return x->exited_ms;
}

size_t rexec_line_len(const RemoteExec *x)
{
    return x->line_len;
}

int rexec_done(const RemoteExec *x)
{
    return x->phase == X_DONE;
}

int rexec_sent(const RemoteExec *x)
{
    return x->exec_sent;
}

ExecOutcome rexec_outcome(const RemoteExec *x)
{
    return x->phase == X_DONE ? x->outcome : EXEC_RUNNING;
}

int rexec_exit_status(const RemoteExec *x)
{
    return x->phase == X_DONE && x->outcome == EXEC_EXITED ? x->exit_status : -1;
}

const char *rexec_error(const RemoteExec *x)
{
    return x->error ? x->error : "";
}

size_t rexec_host(const RemoteExec *x)
{
    return x->host;
}

void rexec_close(RemoteExec *x)
{
    if (x->phase == X_DONE)
        return;
    release_channel(x);
    finish(x, EXEC_CLOSED, "closed");
}

void rexec_free(RemoteExec *x)
{
    if (!x)
        return;
    if (x->pool) {
        Host *h = x->pool->hosts[x->host];
        release_channel(x);
        for (RemoteExec **pp = &h->execs; *pp; pp = &(*pp)->next)
            if (*pp == x) {
                *pp = x->next;
                break;
            }
    }
    linebuf_clear(&x->out);
    linebuf_clear(&x->err);
    free(x->command);
    if (x->input)
        explicit_bzero(x->input, x->input_len); /* a trial's input holds its secret */
    free(x->input);
    free(x->error);
    free(x);
}

void rexec_drop_channels(Host *h)
{
    for (RemoteExec *x = h->execs; x; x = x->next)
        x->ch = NULL; /* ssh_free frees the channels */
    chanlinger_drop(h);
}

void rexec_release_host(Host *h)
{
    for (RemoteExec *x = h->execs; x; x = x->next)
        x->pool = NULL;
}
