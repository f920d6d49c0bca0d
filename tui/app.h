/* The console's state and what can be done to it (tui/app.c), shared by the loop, the
 * keys, the commands and the views. Views read it and never change the model. */
#ifndef TUNEDECK_APP_H
#define TUNEDECK_APP_H

#include <stdint.h>

#include "core/sim/simcluster.h"
#include "remote/live/hostdesk.h"
#include "remote/slurm/slurm_desk.h"
#include "remote/ssh/hostpool.h"
#include "remote/launch/tuner.h"
#include "remote/session/tune_journal.h"
#include "tui/config.h"
#include "tui/editor.h"
#include "tui/layout.h"
#include "tui/plot.h"
#include "tui/queuepred.h"
#include "tui/simsched.h"
#include "tui/snapshot.h"
#include "tui/trials.h"

enum { APP_LOG_LINES = 256 };

typedef struct {
    Tuner *tuner;
    /* The session's (remote/session/session.h), for the views; the session owns them. */
    SimCluster *sim; /* NULL on a real cluster */
    const Cluster *cluster;
    const JobSpec *job;
    char journal_note[256]; /* why there is no journal, for the log */
    char launcher[32];      /* the trial launcher's name */

    int quit;
    int quit_signal; /* SIGTERM, SIGHUP or SIGINT that asked the quit; 0: the operator did */
    int tty_gone;    /* the terminal hung up (SIGHUP, POLLHUP...), whatever asked the quit:
                        no longer polled */
    int dirty;       /* something changed since the last frame */
    int table_stale; /* tuner events since the table was built */
    int pred_stale;  /* the editor's prediction must be asked again */
    int pace_ms;     /* pause between trials on the simulator */
    int64_t next_trial_ms;
    int64_t last_frame_ms; /* when the screen was last drawn */
    unsigned long frames;

    ViewId view;
    Layout layout;
    int cols, rows;

    /* the trial table */
    TrialTable table;
    QueuePredictions queue_pred; /* the queued overrides' rows' predicted times */
    int queue_pred_stale; /* an override was queued or dropped, or a trial finished */
    TrialColumn sort;
    int sort_desc;
    char filter[64];
    size_t sel; /* index into table.order */
    size_t scroll;
    int follow; /* selection follows the newest trial */

    /* prompt: 0, '/' or ':' */
    int prompt;
    char input[128];
    int input_full; /* the last key typed there did not fit (the `/` prompt holds a filter's
                       bytes, the `:` one input's): said above the prompt until the next key */
    char message[256];
    int message_bad;

    Editor *editor;
    Suggestion pred; /* the prediction for the edited schedule */
    int pred_ok;
    char pred_why[256];
    unsigned pred_version;
    Error edit_err;
    int edit_valid;

    int help;     /* help overlay open */
    int help_top; /* its first row shown, when it scrolls */
    int log_view;    /* log overlay open (L, logview.h) */
    size_t log_back; /* its lines of the log left out below the newest */
    int confirm_quit;
    /* the session's journal, once begun (NULL none): while its writes succeed it keeps the
     * queued overrides for a --resume; without one, or after a write failed, quitting with
     * overrides queued asks first (app_quit_drops_overrides) */
    TuneJournal *journal;
    int user_paused;
    /* The resume's stop of leftover process groups holds trials until it ends, so trial 1's
     * `started` line follows the stop's lines in the journal (tui/console_stops.h's StopWatch). */
    int stop_hold;
    const PlotStyle *plot_style;

    const char *themes_dir; /* ConsoleOptions.themes_dir */
    int theme_applied;      /* a theme is on screen: a bad :theme keeps it */
    ConsoleConfig config;
    char config_file[1024]; /* empty: nowhere to save */
    int config_bad;         /* config_file holds what could not be read: never written over */

    char log[APP_LOG_LINES][512]; /* whole enough for the log overlay (logview.h) */
    size_t log_n; /* lines ever written */

    SimSched *ss;          /* the simulated cluster scheduler, NULL when none */
    LiveSlurm *live_slurm; /* --workload on Slurm: the live jobs' backend (outlives ss) */
    size_t ss_events_seen; /* scheduler events already logged */
    int ss_stale;          /* a key may have changed the scheduler: read it at the next frame */

    HostPool *pool;          /* SSH sessions to the inventory's hosts; NULL on the simulator */
    size_t host_sel;         /* selected row of the hosts view */
    HostDesk *desk;          /* drives the pool and key acceptance (remote/live/hostdesk.h) */
    /* While the next trial waits for refused hosts, the session's line saying which and what
     * lets it go on (session_refused_hold): the status line shows it when it says nothing
     * else. "" or NULL otherwise. */
    const char *refused_hold;
    /* accepting an unknown host key: the prompt shows accept_fp, the key host accept_host
     * offered; y accepts exactly that key */
    int confirm_accept;
    long accept_host;
    char accept_fp[128];
    char accept_where[300]; /* "ADDRESS port N": where that key will be trusted */

    ClusterSnapshot snap;
    size_t loads_scroll;
    size_t jobs_scroll; /* first row of the cluster view's job list */

    /* A Slurm cluster (NULL: none): the watch and the operator's node updates; the hosts
     * view draws slurm_panel. slurm_hold: trials wait while the controller is away. */
    SlurmDesk *slurm;
    SlurmPanel slurm_panel;
    int slurm_hold;
    long slurm_back_round; /* the round the controller answered again in (0: none) */
    /* `:drain NODE` asks first: y runs scontrol update (drain_on: DRAIN, else RESUME) */
    int confirm_drain;
    int drain_on;
    char drain_node[64];
    char drain_reason[96];
} App;

void app_rebuild_table(App *a);
/* Moves the trial selection (clamped); the selection follows new trials again at the end. */
void app_select_trial(App *a, long delta);
/* The schedule the surrogate pane shows: the newest trial's, or NULL before the first. */
const TrialRecord *app_current_trial(const App *a);
const char *app_themes_dir(const App *a);
int app_set_theme(App *a, const char *name);
/* Writes the settings file (atomically); 0, or -1 after saying in the status line why not
 * (a write failed, or the file is one that was refused at start, kept for its owner to fix). */
int app_save_config(App *a);
/* The operator's pause (Space, :pause): no new trial starts, the scheduler stops. Trials stay
 * held while another hold (slurm_hold, stop_hold) is on. */
/* Whether Space has something to pause: tuning, or the simulated scheduler (not the live
 * scheduler's real jobs, nor Slurm watched). */
int app_pausable(const App *a);
/* Space and :pause/:resume: app_set_pause, or where nothing pauses, a message saying so. */
void app_ask_pause(App *a, int paused);
void app_set_pause(App *a, int paused);
/* q, F10 and :quit: quits, or while trials or live jobs run, asks first (:quit! does not); so
 * it does while overrides wait that no journal keeps (app_quit_drops_overrides). */
int app_quit_drops_overrides(const App *a);
void app_ask_quit(App *a);
/* Whether new trials wait: the operator's pause or a hold. The tuner is paused exactly then. */
int app_trials_held(const App *a);
void app_log(App *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_message(App *a, int bad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The override editor: opened on the selected trial's schedule (or the newest), a key edits
 * it, Enter launches it as the next trial, Esc discards it. */
void app_open_editor(App *a);
void app_close_editor(App *a);
void app_editor_key(App *a, int ch);
/* X: takes the override queued last out of the queue, unrun (the tuner's queue; the budget
 * raised for it, if any, is given back as tuner_override_drop does, and said). */
void app_drop_override(App *a);
/* :unqueue N: takes the override queued as trial N (the number its queued row shows) out,
 * unrun, as X does the last; -1 after saying why on the message line when no override is
 * queued as trial N. */
int app_unqueue_override(App *a, long trial);
/* Asks the tuner's model about the edited schedule (and checks it) after an edit; while a
 * suggestion holds the model it stays stale (asked again), redrawn only when what it shows
 * changed. */
void app_refresh_prediction(App *a);
/* Brings the queued rows' predictions up to the tuner's queue (queuepred.h); while the model is
 * busy they stay stale (asked again), redrawn only when a row changed. */
void app_refresh_queue_predictions(App *a);
/* Whether a prediction the busy model refused is to be asked again soon (the loop wakes in
 * 50 ms for it): the editor's only while the editor is open, since nothing asks it after. */
int app_prediction_retry_due(const App *a);

#endif
