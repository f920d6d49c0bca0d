/* The `local` launcher: the trial command runs as a local process through /bin/sh -c, reads
 * the schedule on standard input and answers in protocol v1 on standard output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/childsig.h"
#include "core/base/clock.h"
#include "core/base/linebuf.h"
#include "remote/launch/launcher.h"
#include "remote/launch/lifeline.h"
#include "remote/launch/rankfan.h"

/* EXIT_POLL_MS: how soon an exit is noticed while a stray descendant holds the output open;
 * OUTPUT_GRACE_MS: how long output may still arrive after the command exited. */
enum {
    MAX_LINE = 4 << 20,
    KILL_GRACE_MS = 2000,
    REAP_POLL_MS = 20,
    EXIT_POLL_MS = 200,
    OUTPUT_GRACE_MS = 500
};

typedef struct {
    LaunchConfig cfg;
    const Schedule *schedule;
    TrialAccumulator *acc;
    pid_t pid;
    int in_fd, out_fd, err_fd;
    int lifeline_fd; /* the write end only we hold: closed, or we die, the keeper stops it */
    char *input;
    size_t input_len, input_sent;
    LineBuf out, err;
    int64_t deadline_ms, kill_at_ms, exited_ms;
    int exited, status, timed_out, cancelled;
    int stop_iter;   /* the iteration at which it asked (launcher_past_stop) */
    int stop_wanted; /* on_iteration asked for a stop: cancelled once the output is read */
    int garbage_lines, events;
    char protocol_error[256];
    char last_stderr[200];
    char first_failed[160]; /* the rank fan-out's notice: the rank that failed first */
    Observation *result;
} LocalRun;

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Closes descriptors lo..hi, however high `ulimit -n` lets them go: a loop to 1024 left the
 * rest open (the soft limit is often far above it: 20,000, or a million in a container), and
 * the keeper, which never execs, kept another trial's lifeline write end for good. After
 * fork(), before exec: close_range is one system call; the loop is for kernels before 5.9. */
static void close_span(unsigned lo, unsigned hi)
{
    if (lo > hi || close_range(lo, hi, 0) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 1 << 20)
        max = 1 << 20; /* a loop past a million would take seconds; nothing opens that many */
    for (long fd = lo; fd <= (long)hi && fd < max; fd++)
        close((int)fd);
}

static void *start(const LaunchConfig *cfg, const Schedule *s, Error *err)
{
    if (!cfg->command || !cfg->command[0]) {
        error_set(err, "local launcher: expected a trial command (--trial-cmd)");
        return NULL;
    }
    /* Marked close-on-exec at birth so no other child forked meanwhile inherits them; dup2
     * clears the flag on the child's 0, 1 and 2. */
    int fds[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int *pin = fds, *pout = fds + 2, *perr = fds + 4, *life = fds + 6;
    LocalRun *r = NULL;
    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0 ||
        pipe2(life, O_CLOEXEC) < 0) {
        error_set(err, "local launcher: pipe: %s", strerror(errno));
        goto fail;
    }
    /* Everything that can fail is done before the fork, so no child is left behind. */
    r = calloc(1, sizeof *r);
    if (!r) {
        error_set(err, "local launcher: out of memory");
        goto fail;
    }
    if (!(r->input = launcher_trial_input(s, &r->input_len, err))) {
        error_prefix(err, "local launcher");
        goto fail;
    }
    /* per-device ranks: every rank of the schedule runs here, under one fan-out */
    int fan_out = rankfan_wanted(s) && !cfg->ranks_elsewhere;
    char *fan = fan_out ? rankfan_script(s, 0, 1, cfg->command, err) : NULL;
    if (fan_out && !fan)
        goto fail;
    r->acc = trial_accumulator_new(s);
    char trial[32];
    snprintf(trial, sizeof trial, "%d", s->trial);
    pid_t pid = childsig_fork();
    if (pid < 0) {
        error_set(err, "local launcher: fork: %s", strerror(errno));
        free(fan);
        goto fail;
    }
    if (pid == 0) {
        /* Its own process group, so a stop reaches everything the command started. This
         * process leads it and keeps the command (lifeline.h): the command is its child, and
         * what the command leaves outside the group becomes its child too. */
        setpgid(0, 0);
        lifeline_adopt();
        pid_t cmd = childsig_fork();
        if (cmd < 0)
            _exit(127);
        if (cmd > 0) {
            /* the lifeline and the trial's stderr (for the note on leftovers) kept, no
             * other descriptor of tunedeck's */
            unsigned lo = (unsigned)(life[0] < perr[1] ? life[0] : perr[1]);
            unsigned hi = (unsigned)(life[0] < perr[1] ? perr[1] : life[0]);
            if (lo > 0)
                close_span(0, lo - 1);
            close_span(lo + 1, hi - 1);
            close_span(hi + 1, ~0U);
            int null = open("/dev/null", O_RDWR); /* 0, 1, 2: nothing of tunedeck's held */
            if (null == 0) {
                dup2(0, 1);
                dup2(0, 2);
            }
            lifeline_keep(cmd, life[0], perr[1], KILL_GRACE_MS);
        }
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        for (int fd = 0; fd < 3; fd++) /* dup2 onto itself keeps close-on-exec */
            fcntl(fd, F_SETFD, 0);
        close_span(3, ~0U);
        lifeline_command();
        setenv("TUNEDECK_TRIAL", trial, 1);
        setenv("TUNEDECK_MACHINE", "", 1);
        /* childsig_fork: the trial starts with no handler of tunedeck's, with SIGPIPE and
         * SIGXFSZ (ignored in tunedeck) at default, and no signal blocked */
        execl("/bin/sh", "sh", "-c", fan ? fan : cfg->command, (char *)NULL);
        _exit(127);
    }
    free(fan);
    setpgid(pid, pid);
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    close(life[0]);
    r->lifeline_fd = life[1];
    r->cfg = *cfg;
    r->schedule = s;
    r->pid = pid;
    r->in_fd = pin[1];
    r->out_fd = pout[0];
    r->err_fd = perr[0];
    set_nonblock(r->in_fd);
    set_nonblock(r->out_fd);
    set_nonblock(r->err_fd);
    linebuf_init(&r->out, MAX_LINE);
    linebuf_init(&r->err, 64 << 10);
    double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 600;
    r->deadline_ms = clock_now_ms() + (int64_t)(timeout_s * 1000);
    return r;
fail:
    for (int i = 0; i < 8; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (r) {
        trial_accumulator_free(r->acc);
        launcher_input_free(r->input, r->input_len);
        free(r);
    }
    return NULL;
}

static void stop_group(LocalRun *r, int64_t now_ms)
{
    if (r->exited || r->kill_at_ms)
        return;
    kill(-r->pid, SIGTERM);
    r->kill_at_ms = now_ms + KILL_GRACE_MS;
    close_fd(&r->in_fd);
}

/* len: the line's bytes, a NUL in it counted (the protocol reader refuses such a line). */
static void handle_line(LocalRun *r, const char *line, size_t len, StreamKind stream,
                        int truncated)
{
    const char *given = line;
    if (r->cfg.on_line && !(line = r->cfg.on_line(r->cfg.userdata, stream, line)))
        return;
    if (line != given) /* the hook's own text */
        len = strlen(line);
    if (stream == STREAM_STDERR) {
        /* the keeper's note on leftovers is for the log, not the trial's reason */
        if (strncmp(line, LIFELINE_NOTE, strlen(LIFELINE_NOTE)) != 0)
            snprintf(r->last_stderr, sizeof r->last_stderr, "%s", line);
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, "local", stream, line);
        return;
    }
    TrialEvent ev;
    Error perr;
    if (truncated || protocol_parse_line_n(line, len, &ev, &perr) < 0) {
        r->garbage_lines++;
        if (!r->protocol_error[0])
            snprintf(r->protocol_error, sizeof r->protocol_error, "%s",
                     truncated ? "a line longer than 4 MiB" : perr.msg);
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, "local", stream, line);
        return;
    }
    if (r->stop_wanted && launcher_past_stop(r->stop_iter, &ev)) {
        trial_event_clear(&ev);
        return;
    }
    if (ev.kind == EVENT_LOG) {
        r->garbage_lines++;
        if (!r->first_failed[0])
            rankfan_notice(line, r->first_failed, sizeof r->first_failed);
        if (r->cfg.on_log)
            r->cfg.on_log(r->cfg.userdata, "local", stream, line);
    } else if (trial_accumulator_add(r->acc, &ev, &perr) < 0) {
        if (!r->protocol_error[0])
            snprintf(r->protocol_error, sizeof r->protocol_error, "%s", perr.msg);
    } else {
        r->events++;
        if (launcher_iteration_stop(&r->cfg, &ev) && !r->stop_wanted) {
            r->stop_wanted = 1;
            r->stop_iter = ev.iter;
        }
    }
    trial_event_clear(&ev);
}

static void drain(LocalRun *r, int *fd, LineBuf *b, StreamKind stream)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            linebuf_append(b, buf, (size_t)n);
            int cut;
            char *line;
            while ((line = linebuf_pop(b, &cut))) {
                handle_line(r, line, b->last_len, stream, cut);
                free(line);
            }
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            int cut;
            char *line = linebuf_finish(b, &cut);
            if (line) {
                handle_line(r, line, b->last_len, stream, cut);
                free(line);
            }
            close_fd(fd);
        }
        return;
    }
}

static void pump_input(LocalRun *r)
{
    while (r->in_fd >= 0 && r->input_sent < r->input_len) {
        ssize_t n = write(r->in_fd, r->input + r->input_sent, r->input_len - r->input_sent);
        if (n > 0) {
            r->input_sent += (size_t)n;
        } else if (n < 0 && errno == EAGAIN) {
            return;
        } else if (n < 0 && errno != EINTR) {
            close_fd(&r->in_fd); /* the command does not read its input: its choice */
            return;
        }
    }
    if (r->input_sent >= r->input_len)
        close_fd(&r->in_fd);
}

static size_t pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    LocalRun *r = run;
    size_t n = 0;
    if (r->in_fd >= 0 && n < cap)
        fds[n++] = (struct pollfd){.fd = r->in_fd, .events = POLLOUT};
    if (r->out_fd >= 0 && n < cap)
        fds[n++] = (struct pollfd){.fd = r->out_fd, .events = POLLIN};
    if (r->err_fd >= 0 && n < cap)
        fds[n++] = (struct pollfd){.fd = r->err_fd, .events = POLLIN};
    int64_t next = r->kill_at_ms ? r->kill_at_ms : r->deadline_ms;
    if (r->kill_at_ms && clock_now_ms() >= r->kill_at_ms)
        next = r->kill_at_ms + KILL_GRACE_MS; /* the keeper's KILL asked for: its end polled */
    /* Once output has closed, the exit status is collected by polling waitpid. */
    if (r->out_fd < 0 && r->err_fd < 0) {
        int64_t reap = clock_now_ms() + REAP_POLL_MS;
        next = next < reap ? next : reap;
    } else {
        int64_t check = clock_now_ms() + (r->exited ? REAP_POLL_MS : EXIT_POLL_MS);
        next = next < check ? next : check;
    }
    if (*deadline_ms < 0 || next < *deadline_ms)
        *deadline_ms = next;
    return n;
}

/* What the command's own end says about the trial. */
static void command_outcome(const LocalRun *r, Observation *o)
{
    if (WIFSIGNALED(r->status)) {
        o->status = TRIAL_FAILED;
        snprintf(o->reason, sizeof o->reason, "the command was killed by signal %d",
                 WTERMSIG(r->status));
    } else if (WEXITSTATUS(r->status) != 0) {
        /* With per-device ranks, the rank that failed first (its status is the command's):
         * one that died without a word is named even when a peer's error event follows. */
        char ended[200];
        if (r->first_failed[0])
            snprintf(ended, sizeof ended, "the command exited: %s", r->first_failed);
        else
            snprintf(ended, sizeof ended, "the command exited with status %d",
                     WEXITSTATUS(r->status));
        if (o->status == TRIAL_OK) {
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s%s%s", ended,
                     r->last_stderr[0] ? ": " : "", r->last_stderr);
        } else {
            /* A trial that said why in an error event needs no last stderr line: with
             * per-device ranks that line is another rank's, one that lost its peer
             * ("Connection closed by peer"), and it would read as the cause. */
            int said = strncmp(o->reason, "error event: ", 13) == 0;
            const char *tail = said ? "" : r->last_stderr;
            char prior[256];
            snprintf(prior, sizeof prior, "%s", o->reason);
            snprintf(o->reason, sizeof o->reason, "%s (%s)%s%s", ended, prior,
                     tail[0] ? ": " : "", tail);
        }
    } else {
        launcher_note_bad_line(o, r->protocol_error);
    }
}

static void finish(LocalRun *r)
{
    Observation *o = trial_accumulator_finish(r->acc);
    if (!launcher_end_by_us(o, r->cancelled, r->timed_out, r->cfg.timeout_s))
        command_outcome(r, o);
    r->result = o;
}

/* 1 when the keeper has ended, its status in r->status. Whatever it left in its group is
 * KILLed first, while the keeper is still a zombie: its pid, the group's id, can name no
 * other group until it is reaped (once reaped and its group empty, a KILL of -pid could reach
 * a new group that reused the id). */
static int keeper_reaped(LocalRun *r)
{
    siginfo_t info;
    info.si_pid = 0; /* what WNOHANG leaves when the keeper runs on (waitid(2)) */
    if (waitid(P_PID, (id_t)r->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
        return 0;
    kill(-r->pid, SIGKILL);
    waitpid(r->pid, &r->status, 0);
    return 1;
}

static void step(void *run, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    LocalRun *r = run;
    for (size_t i = 0; i < n; i++) {
        if (!fds[i].revents)
            continue;
        if (fds[i].fd == r->in_fd)
            pump_input(r);
        else if (fds[i].fd == r->out_fd)
            drain(r, &r->out_fd, &r->out, STREAM_STDOUT);
        else if (fds[i].fd == r->err_fd)
            drain(r, &r->err_fd, &r->err, STREAM_STDERR);
    }
    if (r->result)
        return;
    if (r->stop_wanted && !r->cancelled) {
        r->cancelled = 1;
        stop_group(r, now_ms);
    }
    if (!r->exited && now_ms >= r->deadline_ms && !r->kill_at_ms) {
        r->timed_out = 1;
        stop_group(r, now_ms);
    }
    /* The KILL is the keeper's (lifeline.h): a KILL of the group would end the keeper first,
     * and what it adopted from outside the group would run on. Closing the lifeline after
     * the TERM asks it for the KILL now; a keeper that has not ended a grace later goes with
     * its group. */
    if (!r->exited && r->kill_at_ms && now_ms >= r->kill_at_ms) {
        close_fd(&r->lifeline_fd);
        if (now_ms >= r->kill_at_ms + KILL_GRACE_MS)
            kill(-r->pid, SIGKILL);
    }
    if (!r->exited && keeper_reaped(r)) {
        r->exited = 1;
        r->exited_ms = now_ms;
    }
    /* An exited command is over once its output closes, or soon after its exit when a stray
     * descendant (outside its group) still holds the output open. */
    if (r->exited && (r->kill_at_ms || (r->out_fd < 0 && r->err_fd < 0) ||
                      now_ms >= r->deadline_ms || now_ms >= r->exited_ms + OUTPUT_GRACE_MS)) {
        if (r->out_fd >= 0)
            drain(r, &r->out_fd, &r->out, STREAM_STDOUT);
        if (r->err_fd >= 0)
            drain(r, &r->err_fd, &r->err, STREAM_STDERR);
        close_fd(&r->in_fd);
        close_fd(&r->out_fd);
        close_fd(&r->err_fd);
        finish(r);
    }
}

static int finished(const void *run)
{
    return ((const LocalRun *)run)->result != NULL;
}

static Observation *result(void *run)
{
    LocalRun *r = run;
    Observation *o = r->result;
    r->result = NULL;
    return o;
}

static void cancel(void *run)
{
    LocalRun *r = run;
    if (r->result)
        return;
    r->cancelled = 1;
    stop_group(r, clock_now_ms());
}

static void run_free(void *run)
{
    LocalRun *r = run;
    if (!r)
        return;
    if (!r->exited) {
        /* the keeper's stop at once (its TERM, then the lifeline closed: KILL now), so what
         * it adopted goes too; then the group's KILL, before the keeper is reaped when it
         * ends (keeper_reaped), else once the grace is over */
        kill(-r->pid, SIGTERM);
        close_fd(&r->lifeline_fd);
        int64_t give_up = clock_now_ms() + KILL_GRACE_MS;
        int reaped;
        while (!(reaped = keeper_reaped(r)) && clock_now_ms() < give_up)
            nanosleep(&(struct timespec){0, REAP_POLL_MS * 1000000L}, NULL);
        if (!reaped) {
            kill(-r->pid, SIGKILL);
            waitpid(r->pid, &r->status, 0);
        }
    }
    close_fd(&r->in_fd);
    close_fd(&r->out_fd);
    close_fd(&r->err_fd);
    close_fd(&r->lifeline_fd);
    linebuf_clear(&r->out);
    linebuf_clear(&r->err);
    trial_accumulator_free(r->acc);
    observation_free(r->result);
    launcher_input_free(r->input, r->input_len);
    free(r);
}

const LauncherKind LAUNCHER_LOCAL = {"local", start,  pollfds, step,
                                     finished, result, cancel,  run_free};
