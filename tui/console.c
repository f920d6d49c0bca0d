/* The console's event loop and the session it drives (after Redis ae.c: file events and
 * one timer in a few lines). Input is handled in tui/input.c; drawing in the views. */
#include "tui/console.h"

#include <curses.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "tui/draw.h"
#include "tui/input.h"
#include "tui/keys.h"
#include "tui/term.h"
#include "tui/theme.h"

enum { FRAME_MS = 33, MAX_FDS = 256 };

void console_defaults(ConsoleOptions *o)
{
    memset(o, 0, sizeof *o);
    o->budget = 60;
    o->seed = 1;
    o->pace_ms = -1;
    o->trial_timeout_s = 600;
    o->plot = NULL;  /* the config file's, else braille */
    o->theme = NULL; /* the config file's, else default */
    o->optimizer = optimizer_find("bespoke") ? "bespoke" : "random";
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

void app_log(App *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->log[a->log_n % APP_LOG_LINES], sizeof a->log[0], fmt, ap);
    va_end(ap);
    a->log_n++;
    a->dirty = 1;
}

void app_message(App *a, int bad, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    a->message_bad = bad;
    a->dirty = 1;
}

void app_rebuild_table(App *a)
{
    size_t n = a->tuner ? tuner_n_trials(a->tuner) : 0;
    const TrialRecord **recs = malloc((n ? n : 1) * sizeof *recs);
    for (size_t i = 0; i < n; i++)
        recs[i] = tuner_trial(a->tuner, i);
    size_t keep = a->sel < a->table.n_shown ? a->table.order[a->sel] : (size_t)-1;
    trials_build(&a->table, recs, n, a->sort, a->sort_desc, a->filter);
    free(recs);
    /* Follow the newest trial, or keep the selected one where it went. */
    size_t want = a->follow && n ? n - 1 : keep;
    a->sel = a->table.n_shown ? a->table.n_shown - 1 : 0;
    for (size_t i = 0; i < a->table.n_shown; i++)
        if (a->table.order[i] == want)
            a->sel = i;
    a->dirty = 1;
}

static void on_tuner_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    App *a = ud;
    if (a->journal_event)
        a->journal_event(a->journal, ev, rec); /* on disk before the screen shows it */
    if (ev == TUNER_EVENT_STARTED && a->pace_ms > 0) {
        /* The simulator answers at once: hold the next trial back so a person can watch. */
        tuner_set_paused(a->tuner, 1);
        a->next_trial_ms = clock_now_ms() + a->pace_ms;
    }
    if (ev == TUNER_EVENT_FINISHED) {
        const Observation *o = rec->obs;
        if (o->status == TRIAL_OK)
            app_log(a, "trial %d%s: %.3f s/iteration", rec->trial,
                    rec->overridden ? " (override)" : "", o->time_s);
        else
            app_log(a, "trial %d%s: %s %s", rec->trial, rec->overridden ? " (override)" : "",
                    trial_status_name(o->status), o->reason);
        view_cluster_snapshot(a);
    }
    a->table_stale = 1;
    a->dirty = 1;
}

static void on_trial_proc(void *ud, int trial, const char *machine, long pgid)
{
    App *a = ud;
    if (a->journal && a->journal_proc)
        a->journal_proc(a->journal, trial, machine, pgid);
}

static void log_line(void *ud, const char *line)
{
    app_log(ud, "%s", line);
}

static void draw_tabs(const App *a)
{
    Rect r = a->layout.rect[PANE_TABS];
    draw_fill(r, ROLE_TAB);
    int x = 0;
    for (int v = 0; v < VIEW_COUNT; v++)
        x += draw_textf(0, x, r.w - x, v == (int)a->view ? ROLE_TAB_ACTIVE : ROLE_TAB, " %d %s ",
                        v + 1, layout_view_name((ViewId)v));
    const TrialRecord *best = a->tuner ? tuner_best(a->tuner) : NULL;
    char best_s[32] = "-";
    if (best)
        snprintf(best_s, sizeof best_s, "%.2f s", best->obs->time_s);
    char right[256];
    if (!a->tuner) {
        SchedLive *l = a->ss ? simsched_live(a->ss) : NULL;
        snprintf(right, sizeof right, " %s | live scheduler | %s ", a->cluster->name,
                 l && schedlive_done(l) ? "stopped" : "running");
    } else {
        const char *state = tuner_last_error(a->tuner) ? "stopped"
                            : a->user_paused           ? "paused"
                            : tuner_done(a->tuner)     ? "done"
                                                       : "tuning";
        snprintf(right, sizeof right, " %s | %s | %zu/%d | best %s | %s ",
                 a->sim ? simcluster_spec(a->sim) : a->cluster->name,
                 tuner_optimizer_name(a->tuner), tuner_n_trials(a->tuner),
                 tuner_budget(a->tuner), best_s, state);
    }
    int len = (int)strlen(right);
    if (x + len > r.w) /* narrow: keep the state, which is at the end */
        memmove(right, right + (x + len - r.w), strlen(right + (x + len - r.w)) + 1);
    len = (int)strlen(right);
    draw_text(0, r.w - len, len, ROLE_TAB, right);
}

static void draw_status(const App *a)
{
    if (!a->layout.shown[PANE_STATUS])
        return;
    Rect r = a->layout.rect[PANE_STATUS];
    draw_fill(r, ROLE_STATUS);
    if (a->confirm_quit) {
        draw_text(r.y, 0, r.w, ROLE_WARN,
                  a->ss && simsched_live(a->ss)
                      ? "Live jobs run: quitting checkpoints and stops them. Quit? (y/n)"
                      : "Tuning is running. Quit anyway? (y/n)");
    } else if (a->prompt) {
        draw_textf(r.y, 0, r.w, ROLE_STATUS, "%c%s_", a->prompt, a->input);
    } else if (a->message[0]) {
        draw_text(r.y, 0, r.w, a->message_bad ? ROLE_BAD : ROLE_STATUS, a->message);
    } else {
        static const char *const HINTS[][2] = {
            {"?", "help"}, {"1-3", "views"},   {"/", "filter"}, {":", "command"},
            {"e", "edit"}, {"Space", "pause"}, {"q", "quit"}};
        int x = 0;
        for (size_t i = 0; i < sizeof HINTS / sizeof HINTS[0]; i++) {
            x += draw_textf(r.y, x, r.w - x, ROLE_KEY, " %s", HINTS[i][0]);
            x += draw_textf(r.y, x, r.w - x, ROLE_STATUS, " %s ", HINTS[i][1]);
        }
    }
}

void app_clamp_scroll(App *a)
{
    int rows = a->layout.shown[PANE_TRIALS] ? a->layout.rect[PANE_TRIALS].h - 3 : 1;
    if (rows < 1)
        rows = 1;
    if (a->sel < a->scroll)
        a->scroll = a->sel;
    if (a->sel >= a->scroll + (size_t)rows)
        a->scroll = a->sel - (size_t)rows + 1;
    /* No empty rows below the last trial while earlier ones are scrolled away. */
    if (a->scroll + (size_t)rows > a->table.n_shown)
        a->scroll = a->table.n_shown > (size_t)rows ? a->table.n_shown - (size_t)rows : 0;
}

void app_draw(App *a)
{
    erase();
    layout_compute(COLS, LINES, a->view, a->editor ? LAYOUT_EDITOR_OPEN : 0, &a->layout);
    app_clamp_scroll(a); /* the pane may have changed size, or a trial arrived */
    draw_tabs(a);
    if (a->view == VIEW_TUNE)
        view_tune_draw(a);
    else if (a->view == VIEW_CLUSTER) {
        view_cluster_draw(&a->snap, &a->layout, a->loads_scroll);
        if (a->layout.shown[PANE_TIMELINE])
            view_timeline_draw(a, a->layout.rect[PANE_TIMELINE]);
        if (a->layout.shown[PANE_LOG])
            view_log_draw(a, a->layout.rect[PANE_LOG]);
    } else
        view_hosts_draw(a);
    draw_status(a);
    if (a->help)
        keys_draw_help(COLS, LINES);
    wnoutrefresh(stdscr);
    doupdate();
    a->frames++;
    a->dirty = 0;
}

/* The live driver's lines (decisions, starts, checkpoints, deaths) go to the log pane. */
static void live_log(void *ud, const char *line)
{
    app_log(ud, "live: %s", line);
}

/* Quitting a live session: every job checkpoints and stops (SIGTERM, SIGKILL after the
 * driver's timeout); the screen shows it until no job process is left. */
static void live_stop(App *a)
{
    SchedLive *l = simsched_live(a->ss);
    schedlive_stop_all(l);
    app_message(a, 0, "stopping the live jobs: checkpoint, then stop...");
    int64_t give_up = clock_now_ms() + 60000;
    struct pollfd fds[MAX_FDS];
    while (!schedlive_done(l) && clock_now_ms() < give_up) {
        sched_changed(a);
        app_draw(a);
        int64_t dl = 0;
        size_t n = schedlive_pollfds(l, fds, MAX_FDS, &dl);
        int64_t left = dl - clock_now_ms();
        int rc = poll(fds, n, left < 0 ? 0 : (int)left);
        schedlive_step(l, fds, rc > 0 ? n : 0, clock_now_ms());
    }
}

static int open_session(App *a, const ConsoleOptions *o, Error *err)
{
    if (o->workload && !o->cluster)
        return error_set(err, "--workload: expected a --cluster FILE with it (the live scheduler "
                              "runs the workload on the inventory's hosts)");
    if (o->cluster) {
        if (!o->job && !o->workload)
            return error_set(err, "--cluster: expected a --job FILE (tuning) or a --workload "
                                  "FILE (the live scheduler) with it");
        a->owned_cluster = o->cluster_json ? cluster_from_json(o->cluster_json, o->cluster, err)
                                           : cluster_load(o->cluster, err);
        if (!a->owned_cluster)
            return -1;
        if (o->job && (o->job_json ? job_from_json(o->job_json, o->job, &a->owned_job, err)
                                   : job_load(o->job, &a->owned_job, err)) < 0)
            return -1;
        a->cluster = a->owned_cluster;
        a->job = o->job ? &a->owned_job : NULL;
    } else {
        a->sim = simcluster_new(o->sim ? o->sim : "B:googlenet", err);
        if (!a->sim)
            return -1;
        a->cluster = simcluster_cluster(a->sim);
        a->job = simcluster_job(a->sim);
    }
    if (!a->sim) {
        /* One SSH session per host, shown in the hosts view; the remote launchers and the
         * live scheduler use it. */
        HostPoolOptions po = {.accept_new_host_keys = o->accept_new_host_keys,
                              .ssh_config = getenv("TUNEDECK_SSH_CONFIG")};
        a->pool = hostpool_new(&po, err);
        if (!a->pool || hostpool_add_cluster(a->pool, a->cluster, err) < 0)
            return error_prefix(err, "--cluster");
        for (size_t m = 0; m < hostpool_size(a->pool); m++)
            hostpool_connect(a->pool, m, 1);
    }
    if (o->workload) {
        SimSchedLiveOptions lo = {.cluster = a->cluster,
                                  .pool = a->pool,
                                  .workload = o->workload,
                                  .policy = o->policy,
                                  .time_scale = o->sched_speed,
                                  .job_dir = o->job_dir,
                                  .seed = (uint64_t)o->seed,
                                  .log = live_log,
                                  .userdata = a};
        a->ss = simsched_new_live(&lo, err);
        if (!a->ss)
            return error_prefix(err, "--workload");
    }
    if (!a->job)
        return 0; /* the live scheduler only */
    const char *lname = o->launcher                   ? o->launcher
                        : a->sim                      ? "sim"
                        : a->cluster->trial.launch[0] ? a->cluster->trial.launch
                                                      : "local";
    const LauncherKind *lk = launcher_find(lname);
    if (!lk)
        return error_set(err, "--launcher: unknown launcher '%s': expected one of %s", lname,
                         launcher_names());
    if (!a->sim && strcmp(lname, "sim") == 0)
        return error_set(err,
                         "--launcher sim: expected no --cluster (the simulator brings its own)");
    const char *cmd = o->trial_cmd ? o->trial_cmd : a->cluster->trial.command;
    if (strcmp(lname, "sim") != 0 && (!cmd || !cmd[0]))
        return error_set(err,
                         "--trial-cmd: the %s launcher needs a trial command (or "
                         "trial.command in the inventory)",
                         lname);
    TunerConfig cfg = {
        .cluster = a->cluster,
        .job = a->job,
        .optimizer = o->optimizer,
        .seed = (uint64_t)o->seed,
        .budget = o->budget,
        .launcher = lk,
        .launch = {.command = cmd,
                   .timeout_s = o->trial_timeout_s,
                   .sim = a->sim,
                   .seed = (uint64_t)o->seed,
                   .remote = a->pool,
                   .on_proc = on_trial_proc,
                   .userdata = a},
        .async_suggest = 1,
        .on_event = on_tuner_event,
        .userdata = a,
    };
    a->tuner = tuner_new(&cfg, err);
    if (!a->tuner)
        return error_prefix(err, "--optimizer");
    snprintf(a->launcher, sizeof a->launcher, "%s", lname);
    a->pace_ms = o->pace_ms >= 0 ? o->pace_ms : a->sim ? 600 : 0;
    if (a->sim && !o->no_sched) {
        SimSchedOptions so;
        simsched_defaults(&so);
        so.policy = o->policy;
        so.jobs = o->sched_jobs;
        so.speed = o->sched_speed;
        so.seed = (uint64_t)o->seed;
        a->ss = simsched_new(&so, err);
        if (!a->ss)
            return error_prefix(err, "the simulated scheduler (--policy, --sched-jobs)");
    }
    return 0;
}

static void close_session(App *a)
{
    editor_free(a->editor);
    suggestion_clear(&a->pred);
    tuner_free(a->tuner); /* before the pool its runs use */
    simsched_free(a->ss); /* the live driver too */
    a->ss = NULL;
    hostdesk_free(a->desk);
    hostpool_free(a->pool);
    trials_free(&a->table);
    free(a->snap.hosts);
    free(a->snap.jobs);
    free(a->snap.grid);
    simcluster_free(a->sim);
    cluster_free(a->owned_cluster);
    job_clear(&a->owned_job);
}

const char *app_themes_dir(void)
{
    static char dir[1024];
    const char *home = getenv("TUNEDECK_HOME");
    snprintf(dir, sizeof dir, "%s/themes", home && home[0] ? home : TUNEDECK_SOURCE_DIR);
    return dir;
}

int app_set_theme(App *a, const char *name)
{
    Theme t;
    Error err;
    int rc = theme_load(app_themes_dir(), name, &t, &err);
    if (rc < 0)
        app_message(a, 1, "theme '%s': %s (using the default)", name, err.msg);
    theme_apply(&t, term_colors());
    a->dirty = 1;
    clearok(curscr, TRUE);
    return rc;
}

void app_set_pause(App *a, int paused)
{
    a->user_paused = paused;
    if (a->tuner)
        tuner_set_paused(a->tuner, paused);
    if (!paused)
        a->next_trial_ms = clock_now_ms();
    app_log(a, paused ? "paused: no new trial starts" : "resumed");
}

void app_save_config(App *a)
{
    Error err;
    if (!a->config_file[0])
        return;
    if (config_save(a->config_file, &a->config, &err) < 0)
        app_message(a, 1, "settings not saved: %s", err.msg);
}

static int64_t min_deadline(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

int console_run(const ConsoleOptions *o, Error *err)
{
    err->msg[0] = 0;
    App *a = calloc(1, sizeof *a);
    a->follow = 1;
    a->sort = TRIAL_COL_NUMBER;
    Error cerr;
    int config_bad = 0;
    if (config_path(a->config_file, sizeof a->config_file))
        config_bad = config_load(a->config_file, &a->config, &cerr) < 0;
    else
        config_defaults(&a->config);
    const char *plot = o->plot ? o->plot : a->config.plot[0] ? a->config.plot : "braille";
    a->plot_style = plot_style_find(plot);
    if (!a->plot_style && !o->plot) {
        a->plot_style = plot_style_find("braille");
        config_bad = 1;
        error_set(&cerr, "%s: plot: expected braille, block or ascii, found '%s'", a->config_file,
                  plot);
    }
    if (!a->plot_style) {
        free(a);
        return error_set(err, "--plot: unknown style '%s': expected braille, block or ascii",
                         o->plot);
    }
    if (open_session(a, o, err) < 0 || term_open(err) < 0) {
        close_session(a);
        free(a);
        return -1;
    }
    /* The journal starts once the screen is ours: a console that never ran leaves none. */
    if (o->journal && o->journal_start && a->tuner) {
        Error jerr;
        if (o->journal_start(o->journal, a->tuner, a->cluster, a->launcher, &jerr) == 0) {
            a->journal = o->journal;
            a->journal_event = o->journal_event;
            a->journal_proc = o->journal_proc;
            a->table_stale = 1; /* a resumed session's trials are in the tuner now */
        } else if (o->journal_required) {
            term_close();
            close_session(a);
            free(a);
            return error_set(err, "--resume: %s", jerr.msg);
        } else {
            snprintf(a->journal_note, sizeof a->journal_note, "no session journal: %s", jerr.msg);
        }
    }
    draw_init(o->ascii);
    if (!draw_unicode() && strcmp(a->plot_style->name, "braille") == 0)
        a->plot_style = plot_style_find("ascii");
    app_set_theme(a, o->theme ? o->theme : a->config.theme[0] ? a->config.theme : "default");
    if (config_bad)
        app_message(a, 1, "settings ignored: %s", cerr.msg);
    if (a->journal_note[0])
        app_log(a, "%s", a->journal_note);
    if (a->journal && a->pool && o->journal_hosts)
        o->journal_hosts(a->journal, a->pool, log_line, a); /* before the first trial */
    view_cluster_snapshot(a);
    if (a->ss)
        sched_changed(a);
    if (a->tuner)
        app_log(a, "session: %s on %s, optimizer %s, budget %d", a->job->name,
                a->sim ? simcluster_spec(a->sim) : a->cluster->name,
                tuner_optimizer_name(a->tuner), tuner_budget(a->tuner));
    if (a->ss && simsched_live(a->ss))
        app_log(a, "live scheduler: %s on %s (%zu machines), policy %s, time x%g", o->workload,
                a->cluster->name, a->cluster->n_machines, o->policy, o->sched_speed);
    a->dirty = 1;
    int64_t last_frame = 0;
    struct pollfd fds[MAX_FDS];
    while (!a->quit) {
        int64_t now = clock_now_ms();
        if (a->tuner && a->pace_ms > 0 && !a->user_paused && tuner_paused(a->tuner) &&
            now >= a->next_trial_ms)
            tuner_set_paused(a->tuner, 0);
        if (a->tuner && a->user_paused)
            tuner_set_paused(a->tuner, 1);
        fds[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = term_signal_fd(), .events = POLLIN};
        int64_t deadline = -1;
        size_t tn = a->tuner ? tuner_pollfds(a->tuner, fds + 2, MAX_FDS - 2, &deadline) : 0;
        size_t hn = hosts_pollfds(a, fds + 2 + tn, MAX_FDS - 2 - tn, &deadline);
        if (a->tuner && a->pace_ms > 0 && !a->user_paused && tuner_paused(a->tuner) &&
            !tuner_done(a->tuner))
            deadline = min_deadline(deadline, a->next_trial_ms);
        if (a->ss) {
            simsched_set_paused(a->ss, a->user_paused);
            deadline = min_deadline(deadline, simsched_deadline(a->ss));
        }
        if (a->table_stale || a->pred_stale)
            deadline = min_deadline(deadline, now + (a->pred_stale ? 50 : 0));
        if (a->dirty)
            deadline = min_deadline(deadline, last_frame + FRAME_MS);
        int timeout = -1;
        if (deadline >= 0)
            timeout = deadline <= now ? 0 : deadline - now > 60000 ? 60000 : (int)(deadline - now);
        int rc = poll(fds, 2 + tn + hn, timeout);
        if (rc < 0 && errno != EINTR) {
            error_set(err, "poll: %s", strerror(errno));
            break;
        }
        now = clock_now_ms();
        if (rc > 0 && (fds[1].revents & POLLIN)) {
            int winch = 0;
            TermSignal s = term_take_signals(&winch);
            if (s == TERM_SIG_QUIT)
                a->quit = 1;
            if (s == TERM_SIG_STOP)
                term_suspend();
            if (winch || s == TERM_SIG_CONT || s == TERM_SIG_STOP)
                term_resize();
            a->dirty = 1;
        }
        if (rc > 0 && (fds[0].revents & (POLLIN | POLLHUP)))
            input_handle(a);
        if (a->tuner)
            tuner_step(a->tuner, fds + 2, rc > 0 ? tn : 0, now);
        hosts_step(a, fds + 2 + tn, rc > 0 ? hn : 0, now);
        if (a->ss && simsched_live(a->ss))
            sched_changed(a); /* the driver stepped with the pool (hosts_step) */
        if (a->ss && !a->user_paused) {
            int64_t due = simsched_deadline(a->ss);
            if (due >= 0 && now >= due) {
                Error serr;
                if (simsched_tick(a->ss, now, &serr) < 0)
                    app_log(a, "sched: %s", serr.msg);
                sched_changed(a);
            }
        }
        if (a->table_stale) {
            a->table_stale = 0;
            app_rebuild_table(a);
        }
        if (a->editor && a->pred_stale)
            input_refresh_prediction(a);
        if (a->dirty && clock_now_ms() - last_frame >= FRAME_MS) {
            app_draw(a);
            last_frame = clock_now_ms();
        }
    }
    int failed = !a->quit;
    if (a->journal && o->journal_end)
        o->journal_end(a->journal, a->tuner);
    if (a->ss && simsched_live(a->ss))
        live_stop(a);
    term_close();
    close_session(a);
    free(a);
    return failed ? -1 : 0;
}
