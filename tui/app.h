/* The console's state, shared by the loop (tui/console.c) and the views. Views read it and
 * never change the model; the loop owns every change. */
#ifndef TUNEDECK_APP_H
#define TUNEDECK_APP_H

#include <stdint.h>

#include "core/sim/simcluster.h"
#include "remote/live/hostdesk.h"
#include "remote/ssh/hostpool.h"
#include "remote/launch/tuner.h"
#include "tui/config.h"
#include "tui/editor.h"
#include "tui/layout.h"
#include "tui/plot.h"
#include "tui/simsched.h"
#include "tui/snapshot.h"
#include "tui/trials.h"

enum { APP_LOG_LINES = 256 };

typedef struct {
    Tuner *tuner;
    SimCluster *sim; /* NULL on a real cluster */
    const Cluster *cluster;
    const JobSpec *job;
    Cluster *owned_cluster; /* a loaded inventory (NULL on the simulator) */
    JobSpec owned_job;

    void *journal; /* the caller's session journal (ConsoleOptions) */
    TunerEventFn journal_event;
    /* the journal's hook for remote process groups */
    LaunchProcFn journal_proc;
    char journal_note[256]; /* how the journal started, for the log */
    char launcher[32];      /* the trial launcher's name */

    int quit;
    int dirty;       /* something changed since the last frame */
    int table_stale; /* tuner events since the table was built */
    int pred_stale;  /* the editor's prediction must be asked again */
    int pace_ms;     /* pause between trials on the simulator */
    int64_t next_trial_ms;
    unsigned long frames;

    ViewId view;
    Layout layout;
    int cols, rows;

    /* the trial table */
    TrialTable table;
    TrialColumn sort;
    int sort_desc;
    char filter[64];
    size_t sel; /* index into table.order */
    size_t scroll;
    int follow; /* selection follows the newest trial */

    /* prompt: 0, '/' or ':' */
    int prompt;
    char input[128];
    char message[256];
    int message_bad;

    Editor *editor;
    Suggestion pred; /* the prediction for the edited schedule */
    int pred_ok;
    char pred_why[256];
    unsigned pred_version;
    Error edit_err;
    int edit_valid;

    int help; /* help overlay open */
    int confirm_quit;
    int user_paused;
    const PlotStyle *plot_style;

    ConsoleConfig config;
    char config_file[1024]; /* empty: nowhere to save */

    char log[APP_LOG_LINES][160];
    size_t log_n; /* lines ever written */

    SimSched *ss;          /* the simulated cluster scheduler, NULL when none */
    size_t ss_events_seen; /* scheduler events already logged */

    HostPool *pool;          /* SSH sessions to the inventory's hosts; NULL on the simulator */
    size_t host_sel;         /* selected row of the hosts view */
    HostDesk *desk;          /* drives the pool and key acceptance (remote/live/hostdesk.h) */
    /* accepting an unknown host key: the prompt shows accept_fp, the key host accept_host
     * offered; y accepts exactly that key */
    int confirm_accept;
    long accept_host;
    char accept_fp[128];

    ClusterSnapshot snap;
    size_t loads_scroll;
} App;

void app_rebuild_table(App *a);
void app_draw(App *a);
/* Keeps the selected trial inside the trial pane of the current layout. */
void app_clamp_scroll(App *a);
const char *app_themes_dir(void);
int app_set_theme(App *a, const char *name);
/* Writes the settings file (atomically); reports a failure in the status line. */
void app_save_config(App *a);
/* The operator's pause (Space, :pause): no new trial starts, the scheduler stops. */
void app_set_pause(App *a, int paused);
void app_log(App *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_message(App *a, int bad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Views (tui/view_tune.c, tui/view_cluster.c); each draws its panes inside the layout. */
void view_tune_draw(const App *a);
void view_cluster_draw(const ClusterSnapshot *s, const Layout *l, size_t scroll);
void view_hosts_draw(const App *a);
/* The loop's plumbing to the host desk (tui/view_hosts.c), which does the network work. */
size_t hosts_pollfds(App *a, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void hosts_step(App *a, const struct pollfd *fds, size_t n, int64_t now_ms);
/* The operator asked to accept the selected host's unknown key (after confirming). */
void hosts_accept_selected(App *a);
void hosts_accept_confirmed(App *a);
void view_timeline_draw(const App *a, Rect r);
void view_log_draw(const App *a, Rect r);
/* Where the override editor lists its rows inside its pane (shared with the mouse). */
Rect view_editor_rows(Rect box);
/* The surrogate pane for one trial record (NULL: none yet). */
void view_surrogate_draw(Rect box, const TrialRecord *rec, const Cluster *c, const char *optimizer,
                         int suggesting);
/* The schedule the surrogate pane shows: the newest trial's, or NULL before the first. */
const TrialRecord *view_tune_current(const App *a);
/* Fills the cluster snapshot from the newest finished trial's measurements. */
void view_cluster_snapshot(App *a);

#endif
