/* The console: opens its session (remote/session), puts the terminal, the tuner, the hosts'
 * pool and the frame on the event loop (core/base/evloop), and closes it all when the
 * operator quits. Keys are handled in tui/input.c, what they do in tui/app.c, drawing in
 * tui/frame.c and the views. */
#include "tui/console.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/live/liverun_slurm.h"
#include "remote/live/schedlive.h"
#include "remote/slurm/slurm_inventory.h"
#include "tui/draw.h"
#include "tui/frame.h"
#include "tui/input.h"
#include "tui/term.h"
#include "tui/view.h"

/* The Slurm watch's back-off cap: a quiet cluster is asked every 16 s at most, a change
 * shows within that, and a controller back from an outage is seen within it. */
enum { FRAME_MS = 33, SLURM_WATCH_MAX_S = 16 };

void console_defaults(ConsoleOptions *o)
{
    memset(o, 0, sizeof *o);
    o->spec.budget = 60;
    o->spec.seed = 1;
    o->spec.trial_timeout_s = 600;
    o->spec.keep_hosts = SESSION_KEEP_USED; /* the hosts view shows every host in use */
    o->spec.async_suggest = 1; /* the screen stays live while the model thinks */
    o->pace_ms = -1;
    o->plot = NULL;  /* the config file's, else braille */
    o->theme = NULL; /* the config file's, else default */
    o->spec.optimizer = optimizer_find("bespoke") ? "bespoke" : "random";
    o->policy = "doubling";
    o->sched_jobs = 40;
    o->sched_speed = 60;
}

/* Logs the scheduler's new decisions and refreshes what the cluster view shows. */
static void sched_changed(App *a)
{
    const SchedState *st = simsched_state(a->ss);
    size_t n = sched_event_count(st);
    for (; a->ss_events_seen < n; a->ss_events_seen++) {
        const SchedEvent *ev = sched_event(st, a->ss_events_seen);
        if (ev->kind != SCHED_EV_RESIZE && ev->kind != SCHED_EV_STOP)
            continue; /* starts and finishes are in the timeline; the log keeps the costly ones */
        char text[160];
        simsched_event_text(a->ss, a->ss_events_seen, text, sizeof text);
        app_log(a, "sched: %s", text);
    }
    simsched_snapshot(a->ss, &a->snap);
    a->dirty = 1;
}

static void on_tuner_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    App *a = ud; /* the session's journal has it on disk already */
    if (ev == TUNER_EVENT_STARTED && a->pace_ms > 0) {
        /* The simulator answers at once: hold the next trial back so a person can watch. */
        tuner_set_paused(a->tuner, 1);
        a->next_trial_ms = clock_now_ms() + a->pace_ms;
    }
    if (ev == TUNER_EVENT_FINISHED) {
        const Observation *o = rec->obs;
        if (o->status == TRIAL_OK) /* an ok trial's reason is a note: a refused line */
            app_log(a, "trial %d%s: %.3f s/iteration%s%s%s", rec->trial,
                    rec->overridden ? " (override)" : "", o->time_s, o->reason[0] ? " (" : "",
                    o->reason, o->reason[0] ? ")" : "");
        else
            app_log(a, "trial %d%s: %s %s", rec->trial, rec->overridden ? " (override)" : "",
                    trial_status_name(o->status), o->reason);
        if (o->status != TRIAL_OK)
            slurm_trial_failed(a, o->reason);
        view_cluster_snapshot(a);
    }
    if (ev == TUNER_EVENT_CONVERGED) {
        app_log(a, "tuning stopped: %s", tuner_converged(a->tuner));
        app_message(a, 0, "tuning stopped: %s (:converge off or :budget N goes on)",
                    tuner_converged(a->tuner));
    }
    a->table_stale = 1;
    a->dirty = 1;
}

/* Drawn at once: the console's own stops run on its loop (SessionSpec.stops_on_loop), but a
 * Slurm login node's pool is not on it, and a stop there still holds the screen for seconds:
 * it says what it waits for first. */
static void log_line(void *ud, const char *line)
{
    App *a = ud;
    app_log(a, "%s", line);
    if (a->last_frame_ms) { /* the screen is up */
        frame_draw(a);
        a->last_frame_ms = clock_now_ms();
    }
}

/* A file's misspelt key (the session's on_warning): printed to stderr it would land under
 * the screen, so it goes to the log and the message line, which the frame shows. */
static void warn_line(void *ud, const char *line)
{
    App *a = ud;
    app_message(a, 1, "%s", line);
    log_line(ud, line);
}

/* The live driver's lines (decisions, starts, checkpoints, deaths) go to the log pane. */
static void live_log(void *ud, const char *line)
{
    app_log(ud, "live: %s", line);
}

/* Before every poll while the live jobs stop: the screen shows how far they are. */
static size_t show_stopping(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    (void)deadline_ms;
    App *a = ctx;
    sched_changed(a);
    frame_draw(a);
    return 0;
}

static int live_stopped(void *ctx)
{
    return schedlive_done(ctx);
}

/* Quitting a live session: every job checkpoints and stops (SIGTERM, SIGKILL after the
 * driver's timeout); the screen shows it until no job process is left. */
static void live_stop(App *a)
{
    SchedLive *l = simsched_live(a->ss);
    schedlive_stop_all(l);
    app_message(a, 0, "stopping the live jobs: checkpoint, then stop...");
    EvLoop *loop = evloop_new();
    if (loop && evloop_add(loop, show_stopping, NULL, a) > 0 && schedlive_attach(l, loop) > 0)
        evloop_run(loop, live_stopped, l, clock_now_ms() + 60000);
    evloop_free(loop);
}

/* A Slurm cluster: the desk watches it on the console's loop (the nodes' partition is the
 * inventory's). */
static int open_slurm_desk(App *a, const Session *s, Error *err)
{
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    if (s->cluster->extra && slurm_target_from_json(s->cluster->extra, "--cluster", &t, err) < 0)
        return -1;
    if (s->spec.slurm_partition)
        snprintf(t.partition, sizeof t.partition, "%s", s->spec.slurm_partition);
    if (!(a->slurm = slurm_desk_new(s->slurm, t.partition, SLURM_WATCH_MAX_S)))
        return error_set(err, "out of memory");
    SlurmPanel *p = &a->slurm_panel;
    snprintf(p->where, sizeof p->where, "%s", slurm_ctl_where(s->slurm));
    snprintf(p->partition, sizeof p->partition, "%s", t.partition);
    p->tuning = s->tuner != NULL;
    return 0;
}

/* --workload on Slurm: the live jobs are batch jobs submitted from this machine (a login
 * node in the inventory is refused, as for `schedule --live`), with the inventory's
 * job_command; the backend polls while idle too, so other users' jobs show in the grid. */
static int open_live_slurm(App *a, const Session *s, Error *err)
{
    const char *source = s->spec.cluster ? s->spec.cluster : "--slurm";
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    if (s->cluster->extra && slurm_target_from_json(s->cluster->extra, source, &t, err) < 0)
        return -1;
    if (t.login[0])
        return error_set(err,
                         "%s: live mode on Slurm runs sbatch and reads each job's output file "
                         "on this machine: run tunedeck on the login node %s",
                         source, t.login);
    if (!s->cluster->job_command[0])
        return error_set(err,
                         "%s: expected a \"job_command\" for the live jobs: give "
                         "--job-command TEMPLATE, or --cluster an inventory with \"backend\": "
                         "\"slurm\" and \"job_command\" (docs/slurm.md)",
                         source);
    if (liveslurm_check(s->cluster->job_command, s->cluster->job_launch_per_host,
                        s->cluster->n_machines, err) < 0)
        return error_prefix(err, "%s", source);
    if (s->spec.slurm_partition)
        snprintf(t.partition, sizeof t.partition, "%s", s->spec.slurm_partition);
    LiveSlurmOptions so = {
        .ctl = s->slurm, .partition = t.partition, .poll_idle = 1, .log = live_log, .userdata = a};
    liveslurm_options_intervals(&so, &t.every);
    return (a->live_slurm = liveslurm_new(&so, err)) ? 0 : -1;
}

/* The session (remote/session), then what only the console adds: the live scheduler on the
 * inventory's hosts, or the simulated one beside the simulator. */
static int open_session(App *a, const ConsoleOptions *o, Error *err)
{
    const SessionSpec *spec = &o->spec;
    if (o->workload && !spec->cluster && !spec->slurm)
        return error_set(err, "--workload: expected a --cluster FILE (or --slurm) with it (the "
                              "live scheduler runs the workload on the inventory's hosts)");
    Session *s = o->session;
    SessionSpec with_screen = *spec;
    with_screen.on_event = on_tuner_event;
    with_screen.userdata = a;
    with_screen.on_report = log_line;
    with_screen.on_warning = warn_line;
    with_screen.report_userdata = a;
    with_screen.stops_on_loop = 1; /* keys and redraws go on while a host takes its seconds */
    if (o->workload && spec->keep_hosts)
        with_screen.keep_hosts = SESSION_KEEP_ALL; /* the live scheduler runs on them */
    /* A Slurm cluster alone is watched (its nodes, queue and drains); any other wants work. */
    if (spec->cluster && !spec->job && !o->workload && !spec->slurm &&
        !slurm_inventory_is_slurm_file(spec->cluster))
        return error_set(err, "--cluster: expected a --job FILE (tuning) or a --workload "
                              "FILE (the live scheduler) with it");
    /* --job-command is known now: checked before the controller is asked for its nodes, as
     * schedule --live does, Slurm's refusals first (an inventory's job_command is checked
     * before the live jobs' first start) */
    if (o->workload && spec->job_command) {
        SchedLiveOptions early = {.job_command_flag = 1, .checkpoint = o->checkpoint_file};
        char ck[512];
        if (liveslurm_check(spec->job_command, 0, 0, err) < 0) {
            error_prefix(err, "--slurm");
            return error_mark(err, ERROR_INPUT);
        }
        if (schedlive_check_command(spec->job_command, "--slurm", &early, ck, sizeof ck, err) < 0)
            return -1;
    }
    if (session_open(s, &with_screen, err) < 0)
        return -1;
    if (s->slurm && open_slurm_desk(a, s, err) < 0)
        return -1;
    a->sim = s->sim;
    a->cluster = s->cluster;
    a->job = s->job;
    a->pool = s->pool;
    a->tuner = s->tuner;
    snprintf(a->launcher, sizeof a->launcher, "%s", s->launcher);
    if (o->workload && s->slurm && open_live_slurm(a, s, err) < 0)
        return error_prefix(err, "--workload");
    if (o->workload) {
        SimSchedLiveOptions lo = {.cluster = a->cluster,
                                  .slurm = a->live_slurm,
                                  .pool = a->pool,
                                  .workload = o->workload,
                                  .inventory = s->spec.cluster,
                                  .job_command_flag = s->spec.job_command != NULL,
                                  .checkpoint = o->checkpoint_file,
                                  .policy = o->policy,
                                  .time_scale = o->sched_speed,
                                  .job_dir = o->job_dir,
                                  .gpus_per_node = o->gpus_per_node,
                                  .seed = (uint64_t)spec->seed,
                                  .catalogue_dir = o->catalogue_dir,
                                  .log = live_log,
                                  .userdata = a};
        a->ss = simsched_new_live(&lo, err);
        /* an error that names a flag (--job-command, --checkpoint-file) or the inventory is
         * that one's, not the workload's */
        const char *inv = s->spec.cluster;
        if (!a->ss)
            return strncmp(err->msg, "--", 2) == 0 ||
                           (inv && strncmp(err->msg, inv, strlen(inv)) == 0)
                       ? -1
                       : error_prefix(err, "--workload");
    }
    if (!a->tuner) {
        /* the live scheduler only, or Slurm watched: open on the view that shows it, not
         * on the tune view's "no tuning in this session" */
        a->view = a->ss ? VIEW_CLUSTER : VIEW_HOSTS;
        return 0;
    }
    a->pace_ms = o->pace_ms >= 0 ? o->pace_ms : a->sim ? 600 : 0;
    if (a->sim && !o->no_sched) {
        SimSchedOptions so;
        simsched_defaults(&so);
        so.policy = o->policy;
        so.jobs = o->sched_jobs;
        so.speed = o->sched_speed;
        so.seed = (uint64_t)spec->seed;
        so.catalogue_dir = o->catalogue_dir;
        a->ss = simsched_new(&so, err);
        if (!a->ss)
            return error_prefix(err, "the simulated scheduler (--policy, --sched-jobs)");
    }
    return 0;
}

static void close_session(App *a, Session *s)
{
    editor_free(a->editor);
    suggestion_clear(&a->pred);
    simsched_free(a->ss); /* the live driver too, before the pool it uses */
    a->ss = NULL;
    liveslurm_free(a->live_slurm); /* after the driver, before the session's controller */
    a->live_slurm = NULL;
    hostdesk_free(a->desk); /* the pool stays the session's */
    a->desk = NULL;
    slurm_desk_free(a->slurm); /* before the session frees its controller */
    a->slurm = NULL;
    session_close(s); /* the tuner before the pool its runs use */
    a->tuner = NULL;
    a->pool = NULL;
    trials_free(&a->table);
    free(a->snap.hosts);
    free(a->snap.jobs);
    free(a->snap.grid);
}

/* The journal begins once the screen is ours (a console that never ran leaves none); a
 * resumed session's trials are in the tuner after it. Returns -1 only when it had to. */
static int begin_journal(App *a, const ConsoleOptions *o, Error *err)
{
    Session *s = o->session;
    if (!s->with_journal || !a->tuner)
        return 0;
    tune_journal_set_quiet(s->journal, 1); /* a failed write is shown as a stopped session */
    Error jerr;
    if (session_journal_begin(s, &jerr) == 0) {
        a->table_stale = 1;
        a->journal = s->journal;
        return 0;
    }
    if (o->journal_required)
        return error_set(err, "--resume: %s", jerr.msg);
    snprintf(a->journal_note, sizeof a->journal_note, "no session journal: %s", jerr.msg);
    return 0;
}

/* Resume: what the killed session's unfinished trials left running is stopped first: begun
 * here, run by the loop (stop_step), and the first trial waits for it. */
static void stop_interrupted(App *a, Session *s)
{
    if (a->pool)
        session_stop_interrupted(s, log_line, a);
}

static int64_t min_deadline(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* The console's sources on the loop, in the order they step: the terminal (keys, signals,
 * the pacing of simulated trials), the tuner, the hosts' pool, then the frame (the scheduler's
 * tick, the trial table, the editor's prediction, the redraw at most every FRAME_MS). */
static size_t terminal_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    App *a = ctx;
    int64_t now = clock_now_ms();
    if (a->tuner && a->pace_ms > 0 && !app_trials_held(a) && tuner_paused(a->tuner) &&
        now >= a->next_trial_ms)
        tuner_set_paused(a->tuner, 0);
    if (a->tuner && a->user_paused)
        tuner_set_paused(a->tuner, 1);
    if (a->tuner && a->pace_ms > 0 && !app_trials_held(a) && tuner_paused(a->tuner) &&
        !tuner_done(a->tuner))
        *deadline_ms = min_deadline(*deadline_ms, a->next_trial_ms);
    if (a->ss) {
        simsched_set_paused(a->ss, a->user_paused);
        *deadline_ms = min_deadline(*deadline_ms, simsched_deadline(a->ss));
    }
    if (cap < 2)
        return 0;
    /* A hung-up terminal polls readable forever: once it has (SIGHUP, or poll said so),
     * the quit's wait (StopWatch) must not spin on it, whichever signal asked the quit (a
     * Ctrl-C, then the window closed). The signal pipe stays first either way. */
    fds[0] = (struct pollfd){.fd = term_signal_fd(), .events = POLLIN};
    if (term_hung_up())
        a->tty_gone = 1;
    if (a->tty_gone)
        return 1;
    fds[1] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    return 2;
}

/* SIGTERM, SIGHUP, SIGINT (a Ctrl-C with no prompt open): as `q` then `y` (the same stops
 * and waits, in stop_step and console_run), the journal kept to resume; the exit status says
 * which signal (cmd/cmd_console.c). A second signal changes nothing: SIGKILL is the way to
 * cut the wait. */
static void quit_on_signal(App *a, int signo, const char *why)
{
    if (a->quit_signal)
        return;
    a->quit = 1;
    a->quit_signal = signo;
    app_log(a, "%s%s: quitting as q does (the journal is kept: --resume goes on)",
            signo == SIGHUP   ? "SIGHUP"
            : signo == SIGINT ? "SIGINT"
                              : "SIGTERM",
            why);
}

static void terminal_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)now_ms;
    App *a = ctx;
    if (n >= 1 && (fds[0].revents & POLLIN)) {
        TermSignals s = term_take_signals();
        if (s.quit)
            quit_on_signal(a, term_quit_signal(), "");
        for (int k = 0; k < s.ints; k++)
            if (!input_interrupt(a)) { /* no prompt (left) to cancel */
                quit_on_signal(a, SIGINT, "");
                break;
            }
        if (s.stop && !a->quit_signal) /* a quit asked for in the same breath goes first */
            term_suspend();
        if (s.winch || s.cont || s.stop)
            term_resize();
        a->dirty = 1;
    }
    if (n == 2 && (fds[1].revents & (POLLIN | POLLHUP))) {
        input_handle(a);
        a->ss_stale = a->ss != NULL; /* a pin or a pause shows without waiting for a tick */
    }
    /* A closed terminal whose SIGHUP went elsewhere (to a session leader that outlives us,
     * say) is the same hang-up: otherwise nothing would ever end the loop, which would
     * spin on it. */
    if (n == 2 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
        a->tty_gone = 1;
        quit_on_signal(a, SIGHUP, " (the terminal closed)");
    }
}

static size_t pool_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return hosts_pollfds(ctx, fds, cap, deadline_ms);
}

static void pool_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    hosts_step(ctx, fds, n, now_ms);
}

static size_t slurm_source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_pollfds(ctx, fds, cap, deadline_ms);
}

static void slurm_source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_step(ctx, fds, n, now_ms);
}

static size_t frame_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    App *a = ctx;
    if (a->table_stale || a->pred_stale)
        *deadline_ms = min_deadline(*deadline_ms, clock_now_ms() + (a->pred_stale ? 50 : 0));
    if (a->dirty)
        *deadline_ms = min_deadline(*deadline_ms, a->last_frame_ms + FRAME_MS);
    return 0;
}

static void frame_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now)
{
    (void)fds;
    (void)n;
    App *a = ctx;
    if (a->ss) {
        /* The simulated scheduler advances every tick; the live driver steps with the pool
         * (hosts_step) on every poll, and is read every tick too: a snapshot of every job
         * and a redraw on each poll was the console's whole idle CPU with thousands of jobs.
         * A new decision, or a key that may have changed the scheduler (a pin, a pause),
         * shows at once. */
        Error serr;
        int ticked = a->user_paused && !simsched_live(a->ss) ? 0 : simsched_tick(a->ss, now, &serr);
        if (ticked < 0)
            app_log(a, "sched: %s", serr.msg);
        if (ticked || a->ss_stale ||
            sched_event_count(simsched_state(a->ss)) != a->ss_events_seen) {
            a->ss_stale = 0;
            sched_changed(a);
        }
    }
    if (a->table_stale) {
        a->table_stale = 0;
        app_rebuild_table(a);
    }
    if (a->editor && a->pred_stale)
        app_refresh_prediction(a);
    if (a->dirty && clock_now_ms() - a->last_frame_ms >= FRAME_MS) {
        frame_draw(a);
        a->last_frame_ms = clock_now_ms();
    }
}

/* The session's leftover stop (before a trial, or the resume's) on the loop, after the pool
 * that carries its commands. A quit while it runs waits for its end, on screen, keys read,
 * then stops what dropped connections left that no stop has ended (session_stop_lost), the
 * same way: every result must reach the journal. Leaving it to the next resume would not
 * do: a resume stops only the groups of trials the journal never saw finish, and a dropped
 * connection's leftover belongs to a trial that did finish (failed), so nothing would ever
 * stop it; and closing its SSH channel mid-way could cut the stop between TERM and KILL.
 * The wait is bounded by the stops' own deadlines (a host's connect timeout plus 3 s a
 * group; 15 s). The tuner leaves the loop first, so the trial that waited is not launched
 * at the end: it stays started and unfinished, as a trial running at a quit does
 * (interrupted on resume). */
typedef struct {
    App *a;
    Session *s;
    EvLoop *loop;
    long tuner_source; /* -1: not on the loop (none, or removed at the quit) */
    int quitting;      /* a quit waits for the stop */
    int swept;         /* the quit's own stop of what dropped connections left was begun */
} StopWatch;

static size_t stop_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    (void)fds;
    (void)cap;
    StopWatch *w = ctx;
    if (session_stop_busy(w->s))
        *deadline_ms = min_deadline(*deadline_ms, session_stop_deadline(w->s));
    return 0;
}

static void stop_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    (void)fds;
    (void)n;
    StopWatch *w = ctx;
    App *a = w->a;
    int busy = session_stop_step(w->s, now_ms);
    if (a->quit) {
        a->quit = 0; /* not yet: see StopWatch */
        w->quitting = 1;
        if (w->tuner_source > 0)
            evloop_remove(w->loop, w->tuner_source);
        w->tuner_source = -1;
    }
    if (w->quitting && !busy && !w->swept) {
        /* Then what dropped connections left and no stop has ended yet (a host that did not
         * answer in time, or that no later trial used): stopped now, each result journaled,
         * rather than left running with nothing on record. */
        w->swept = 1;
        session_stop_lost(w->s, log_line, a);
        busy = session_stop_busy(w->s);
    }
    if (w->quitting && busy && !a->message[0]) { /* said again after a key cleared it */
        int64_t left_ms = session_stop_deadline(w->s) - now_ms;
        app_message(a, 0,
                    "quitting once the leftover process group stop ends (up to %.0f s): its "
                    "result goes to the journal",
                    left_ms > 0 ? (double)left_ms / 1000.0 + 0.5 : 0.0);
        a->dirty = 1;
    }
    if (w->quitting && !busy)
        a->quit = 1;
    if (a->stop_hold && !busy) {
        a->stop_hold = 0;
        tuner_set_paused(a->tuner, app_trials_held(a));
    }
}

static int quit_asked(void *ctx)
{
    return ((App *)ctx)->quit;
}

/* The settings file and the plot style; NULL with err on a bad --plot. cerr, *config_bad:
 * what was wrong with the settings file (said once the screen is up). */
static App *app_new(const ConsoleOptions *o, Error *cerr, int *config_bad, Error *err)
{
    App *a = calloc(1, sizeof *a);
    if (!a) {
        error_set(err, "out of memory");
        return NULL;
    }
    a->follow = 1;
    a->themes_dir = o->themes_dir;
    a->sort = TRIAL_COL_NUMBER;
    *config_bad = 0;
    if (config_path(a->config_file, sizeof a->config_file))
        *config_bad = a->config_bad = config_load(a->config_file, &a->config, cerr) < 0;
    else
        config_defaults(&a->config);
    const char *plot = o->plot ? o->plot : a->config.plot[0] ? a->config.plot : "braille";
    a->plot_style = plot_style_find(plot);
    if (!a->plot_style && !o->plot) {
        a->plot_style = plot_style_find("braille");
        *config_bad = a->config_bad = 1;
        error_set(cerr, "%s: plot: expected braille, block or ascii, found '%s'", a->config_file,
                  plot);
    }
    if (!a->plot_style) {
        free(a);
        error_set(err, "--plot: unknown style '%s': expected braille, block or ascii", o->plot);
        return NULL;
    }
    return a;
}

/* The first frame's setup: glyphs, theme, and the log's opening lines. */
static void app_start(App *a, const ConsoleOptions *o, int config_bad, const Error *cerr)
{
    draw_init(o->ascii); /* without Unicode the plot is drawn in ascii (plot_style_shown) */
    app_set_theme(a, o->theme ? o->theme : a->config.theme[0] ? a->config.theme : "default");
    if (config_bad)
        app_message(a, 1, "settings ignored: %s", cerr->msg);
    if (a->journal_note[0])
        app_log(a, "%s", a->journal_note);
    stop_interrupted(a, o->session); /* before the first trial */
    view_cluster_snapshot(a);
    if (a->ss)
        sched_changed(a);
    if (a->tuner)
        app_log(a, "session: %s on %s, optimizer %s, budget %d", a->job->name,
                a->sim ? simcluster_spec(a->sim) : a->cluster->name, tuner_optimizer_name(a->tuner),
                tuner_budget(a->tuner));
    size_t queued = a->tuner ? tuner_overrides(a->tuner) : 0;
    if (queued == 1) /* a resume's: the journal kept the queue */
        app_log(a,
                "1 override queued before the session ended runs first as trial %d (%c drops it)",
                tuner_override_trial(a->tuner, 0), a->config.keys[ACT_DROP]);
    else if (queued > 1)
        app_log(a,
                "%zu overrides queued before the session ended run first as trials %d-%d (%c "
                "drops the last)",
                queued, tuner_override_trial(a->tuner, 0),
                tuner_override_trial(a->tuner, queued - 1), a->config.keys[ACT_DROP]);
    if (a->slurm)
        app_log(a,
                "slurm: watching %s%s%s through the controller (%s); the hosts view (3) "
                "shows the nodes and the queue",
                a->cluster->name, a->slurm_panel.partition[0] ? ", partition " : "",
                a->slurm_panel.partition, a->slurm_panel.where);
    if (a->ss && simsched_live(a->ss))
        app_log(a, "live scheduler: %s on %s (%zu machines), policy %s, time x%g", o->workload,
                a->cluster->name, a->cluster->n_machines, o->policy, o->sched_speed);
    a->dirty = 1;
}

/* The loop until the operator quits; -1 with err when the terminal could not be polled. */
static int app_loop(App *a, Session *s, Error *err)
{
    EvLoop *loop = evloop_new();
    /* The resume's stop (begun in app_start) ends before the first trial starts: held
     * paused, its `started` line comes after the stop's lines in the journal, as with `tune`. */
    StopWatch watch = {.a = a, .s = s, .loop = loop, .tuner_source = -1};
    a->stop_hold = a->tuner && session_stop_busy(s);
    if (a->stop_hold) /* app_set_pause and the Slurm hold keep it: app_trials_held */
        tuner_set_paused(a->tuner, 1);
    int failed = !loop || evloop_add(loop, terminal_pollfds, terminal_step, a) < 0 ||
                 (a->tuner && (watch.tuner_source = tuner_attach(a->tuner, loop)) < 0) ||
                 evloop_add(loop, pool_pollfds, pool_step, a) < 0 ||
                 evloop_add(loop, stop_pollfds, stop_step, &watch) < 0 ||
                 (a->slurm && evloop_add(loop, slurm_source_pollfds, slurm_source_step, a) < 0) ||
                 /* on Slurm no pool drives the live driver (hosts_step does over SSH) */
                 (a->live_slurm && schedlive_attach(simsched_live(a->ss), loop) < 0) ||
                 evloop_add(loop, frame_pollfds, frame_step, a) < 0;
    if (failed)
        error_set(err, "out of memory");
    else if (evloop_run(loop, quit_asked, a, -1) < 0)
        error_set(err, "poll: %s", strerror(errno));
    evloop_free(loop);
    return a->quit ? 0 : -1;
}

int console_run(const ConsoleOptions *o, Error *err)
{
    err->msg[0] = 0;
    Error cerr;
    int config_bad;
    App *a = app_new(o, &cerr, &config_bad, err);
    if (!a)
        return -1;
    int rc = open_session(a, o, err);
    if (rc == 0 && (rc = term_open(err)) == 0 && (rc = begin_journal(a, o, err)) < 0)
        term_close();
    if (rc < 0) {
        close_session(a, o->session);
        free(a);
        return -1;
    }
    app_start(a, o, config_bad, &cerr);
    rc = app_loop(a, o->session, err);
    /* On a loop error a stop may still run: this waits for it (its lines drawn, journaled
     * before `ended`), before the terminal and the session close. */
    session_journal_end(o->session);
    if (a->ss && simsched_live(a->ss))
        live_stop(a);
    term_close();
    /* The screen is gone: what the session reports while it closes (a trial log that cannot
     * be written, the running trial's end) is kept in the log, never drawn; drawing it read
     * the tuner session_close had freed (a crash at the quit on a full disk). cmd_console
     * says on stderr what failed. */
    a->last_frame_ms = 0;
    close_session(a, o->session);
    int quit_signal = a->quit_signal;
    free(a);
    return rc == 0 && quit_signal ? quit_signal : rc;
}
