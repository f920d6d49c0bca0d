/* The console's views as a table (after htop's panels): each has a name for its tab, draws
 * its panes from the App, answers the view-dependent actions of the key table and the mouse
 * inside its panes. A new view is a new file with its View and one line in tui/views.c. */
#ifndef TUNEDECK_VIEW_H
#define TUNEDECK_VIEW_H

#include <curses.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/app.h"

/* What a key means in the view that shows: the key table (tui/input.c) names the action,
 * the view decides what it moves or opens. */
typedef enum {
    VIEW_ACT_UP,
    VIEW_ACT_DOWN,
    VIEW_ACT_OPEN,      /* e, Enter: the tune view opens the override editor */
    VIEW_ACT_ACCEPT,    /* a: the hosts view accepts the selected host's unknown key */
    VIEW_ACT_RECONNECT, /* c: the hosts view reconnects the selected host */
    VIEW_ACT_DRAIN,     /* d: on Slurm, the hosts view offers `:drain NODE ` for the selected node */
    VIEW_ACT_UNDRAIN,   /* u: ... `:undrain NODE` */
    VIEW_ACT_PAGE_UP,   /* PgUp, PgDn, g/Home, G/End: a page of the view's long list */
    VIEW_ACT_PAGE_DOWN,
    VIEW_ACT_FIRST,
    VIEW_ACT_LAST,
} ViewAction;

typedef struct {
    const char *name;
    void (*draw)(const App *a);
    /* An action of the key table that depends on the view; NULL: the view answers none. */
    void (*key)(App *a, ViewAction action);
    /* A press or wheel inside the view's panes (not the tab bar); NULL: none. */
    void (*mouse)(App *a, const MEVENT *ev);
} View;

const View *view_get(ViewId id);

/* The views' parts that others draw or test. */
/* scroll: the first per-host load row; jobs_scroll: the first row of the job list. */
void view_cluster_draw(const ClusterSnapshot *s, const Layout *l, size_t scroll,
                       size_t jobs_scroll);
void view_timeline_draw(const App *a, Rect r);
void view_log_draw(const App *a, Rect r);
/* The tune view's trial table (tui/view_trials.c) in its pane. */
void view_trials_draw(const App *a, Rect box);
/* The trial table's rows on screen: its pane's height less the borders, the column heads and
 * the lines under the table that show the selected trial's note when its row cuts it. */
int view_trials_rows(const App *a);
/* Keeps the selected trial inside the trial pane of the current layout (with the lines a
 * cut note of the selected trial takes under it). Here, not in app.c: the rows are the
 * view's to count, and app must not include the views. */
void view_trials_clamp_scroll(App *a);
/* Where the override editor lists its rows inside its pane (shared with the mouse). */
Rect view_editor_rows(Rect box);
/* The surrogate pane for one trial record (NULL: none yet). */
void view_surrogate_draw(Rect box, const TrialRecord *rec, const Cluster *c, const char *optimizer,
                         int suggesting);
/* Fills the cluster snapshot from the newest finished trial's measurements. */
void view_cluster_snapshot(App *a);

/* The loop's plumbing to the host desk (tui/view_hosts.c), which does the network work. */
size_t hosts_pollfds(App *a, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void hosts_step(App *a, const struct pollfd *fds, size_t n, int64_t now_ms);
/* The operator confirmed accepting the selected host's unknown key. */
void hosts_accept_confirmed(App *a);

/* The Slurm panel (tui/view_slurm.c), pure: the nodes in nodes_box (the selected row kept in
 * sight), the queue in queue_box (w = 0: not drawn). Costs the visible rows only. */
void view_slurm_draw(const SlurmPanel *p, Rect nodes_box, Rect queue_box, size_t sel,
                     int64_t now_ms);
/* The counts of the panel's title, once per round (O(nodes + jobs)). */
void slurm_panel_count(SlurmPanel *p);
/* The hosts view on a Slurm cluster, and the loop's plumbing to the Slurm desk. */
void slurm_view_draw(const App *a);
size_t slurm_pollfds(App *a, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void slurm_step(App *a, const struct pollfd *fds, size_t n, int64_t now_ms);
/* A trial failed: when srun could not reach slurmctld, trials wait from now on (until the
 * watch sees it answer again and the session's nodes known). */
void slurm_trial_failed(App *a, const char *reason);
/* d/u: the `:drain NODE ` (or undrain) command line for the selected Slurm node. */
void slurm_offer_drain(App *a, int drain);
/* The operator confirmed `:drain NODE` (or undrain). */
void slurm_drain_confirmed(App *a);

#endif
