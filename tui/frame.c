/* The frame around the views: the tab bar with the session's state, the status line (a
 * question, the prompt, a message or the key hints), the help overlay; one frame is drawn
 * and flushed in one go. */
#include "tui/frame.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/draw_num.h"
#include "tui/keys.h"
#include "tui/logview.h"
#include "tui/view.h"

static void draw_tabs(const App *a)
{
    Rect r = a->layout.rect[PANE_TABS];
    draw_fill(r, ROLE_TAB);
    int x = 0;
    for (int v = 0; v < VIEW_COUNT; v++) /* each tab with its key as config.json binds it */
        x += draw_textf(0, x, r.w - x, v == (int)a->view ? ROLE_TAB_ACTIVE : ROLE_TAB, " %c %s ",
                        a->config.keys[ACT_VIEW_TUNE + v], view_get((ViewId)v)->name);
    const TrialRecord *best = a->tuner ? tuner_best(a->tuner) : NULL;
    char best_s[32] = "-";
    if (best) {
        char v[24];
        draw_seconds(v, sizeof v, best->obs->time_s);
        snprintf(best_s, sizeof best_s, "%s s", v);
    }
    char right[256];
    if (!a->tuner && !a->ss && a->slurm) {
        snprintf(right, sizeof right, " %s | watching Slurm | %s ", a->cluster->name,
                 a->slurm_panel.down_since_ms ? "slurmctld down" : "answering");
    } else if (!a->tuner) {
        SchedLive *l = a->ss ? simsched_live(a->ss) : NULL;
        snprintf(right, sizeof right, " %s | live scheduler | %s ", a->cluster->name,
                 l && schedlive_done(l) ? "stopped" : "running");
    } else {
        const char *state = tuner_last_error(a->tuner)  ? "stopped"
                            : a->slurm_hold             ? "waiting for slurmctld"
                            : a->user_paused            ? "paused"
                            : tuner_converged(a->tuner) ? "converged"
                            : tuner_done(a->tuner)      ? "done"
                                                        : "tuning";
        char queued[32] = ""; /* the operator's overrides waiting to run */
        if (tuner_overrides(a->tuner))
            snprintf(queued, sizeof queued, " | %zu queued", tuner_overrides(a->tuner));
        snprintf(right, sizeof right, " %s | %s | %zu/%d | best %s%s | %s ",
                 a->sim ? simcluster_spec(a->sim) : a->cluster->name,
                 tuner_optimizer_name(a->tuner), tuner_n_trials(a->tuner), tuner_budget(a->tuner),
                 best_s, queued, state);
    }
    /* narrow: keep the state, which is at the end, and whole fields before it */
    const char *fit = draw_fit_tail(right, r.w - x);
    int cols = draw_width(fit); /* columns: the cluster's name may be in any script */
    draw_text(0, r.w - cols, cols, ROLE_TAB, fit);
}

static void draw_status(const App *a)
{
    if (!a->layout.shown[PANE_STATUS])
        return;
    Rect r = a->layout.rect[PANE_STATUS];
    draw_fill(r, ROLE_STATUS);
    if (a->confirm_quit) {
        SchedLive *live = a->ss ? simsched_live(a->ss) : NULL;
        const char *q =
            live && !schedlive_done(live)
                ? "Live jobs run: quitting checkpoints and stops them. Quit? (y/n)"
            : app_quit_drops_overrides(a)
                ? "Overrides are queued and no journal keeps them: quitting drops them. Quit? (y/n)"
                : "Tuning is running. Quit anyway? (y/n)";
        /* too narrow for why: the question and its answers stay whole */
        draw_text(r.y, 0, r.w, ROLE_WARN, (int)strlen(q) <= r.w ? q : "Quit? (y/n)");
    } else if (a->confirm_drain) {
        char q[512], shortq[128];
        if (a->drain_on) {
            snprintf(q, sizeof q,
                     "Drain %s in Slurm (scontrol update NodeName=%s State=DRAIN "
                     "Reason=\"tunedeck: %s\"): no new job starts there. Drain? (y/n)",
                     a->drain_node, a->drain_node,
                     a->drain_reason[0] ? a->drain_reason : "drained from the console");
            snprintf(shortq, sizeof shortq, "Drain %s? (y/n)", a->drain_node);
        } else {
            snprintf(q, sizeof q,
                     "Return %s to service in Slurm (scontrol update NodeName=%s "
                     "State=RESUME)? (y/n)",
                     a->drain_node, a->drain_node);
            snprintf(shortq, sizeof shortq, "Undrain %s? (y/n)", a->drain_node);
        }
        /* The question ends in its answers, which must show: longer than the line, it
         * takes the row above too, as a long message does; longer than two rows (a long
         * reason, a narrow screen), the short form (the 100-column default cut "Drain?
         * (y/n)" off a drain with a reason). */
        if (draw_width(q) <= r.w) {
            draw_text(r.y, 0, r.w, ROLE_WARN, q);
        } else if (r.y >= 2 && draw_wrapped_lines(r.w, 3, q) <= 2) {
            draw_fill((Rect){0, r.y - 1, r.w, 1}, ROLE_STATUS);
            draw_wrapped(r.y - 1, 0, r.w, 2, ROLE_WARN, q);
        } else {
            draw_text(r.y, 0, r.w, ROLE_WARN, draw_width(shortq) <= r.w ? shortq : "(y/n)");
        }
    } else if (a->prompt) {
        /* What is being typed stays in sight: a line longer than the screen shows its end. */
        int room = r.w - 3; /* the prompt's character, the ellipsis, the cursor */
        if (draw_width(a->input) + 2 > r.w && room > 0)
            draw_textf(r.y, 0, r.w, ROLE_STATUS, "%c%s%s_", a->prompt,
                       draw_unicode() ? "\xe2\x80\xa6" : "~", draw_tail_cols(a->input, room));
        else
            draw_textf(r.y, 0, r.w, ROLE_STATUS, "%c%s_", a->prompt, a->input);
        /* a key that did not fit is said on the row above (as a long message takes it): the
         * line stopped taking keys without a word */
        if (a->input_full && r.y >= 2) {
            draw_fill((Rect){0, r.y - 1, r.w, 1}, ROLE_STATUS);
            if (a->prompt == '/')
                draw_textf(r.y - 1, 0, r.w, ROLE_WARN,
                           "the filter is full (%zu bytes): Enter keeps it, Esc drops it",
                           sizeof a->filter - 1);
            else
                draw_textf(r.y - 1, 0, r.w, ROLE_WARN,
                           "the command line is full (%zu bytes, the longest command): Enter "
                           "runs it, Esc drops it",
                           sizeof a->input - 1);
        }
    } else if (a->message[0] || (a->refused_hold && a->refused_hold[0])) {
        /* a message the operator has not read yet first; then, while trials wait for refused
         * hosts, why and what lets them go on, which no key clears */
        const char *m = a->message[0] ? a->message : a->refused_hold;
        Role role = a->message_bad || !a->message[0] ? ROLE_BAD : ROLE_STATUS;
        if (draw_width(m) > r.w && r.y >= 2) {
            /* Longer than the line: it takes the row above too (over a pane's border, until
             * the next key), so that an error's list of what was expected reads whole. */
            draw_fill((Rect){0, r.y - 1, r.w, 1}, ROLE_STATUS);
            draw_wrapped(r.y - 1, 0, r.w, 2, role, m);
        } else {
            draw_text(r.y, 0, r.w, role, m);
        }
    } else {
        /* The keys of the view that shows, each hint whole or not at all; on a narrow
         * screen the least needed go first, so that how to quit and how to get help always
         * show. */
        enum { ALL = 0, TUNE = 1, CLUSTER = 2, HOSTS = 4, SSH = 8, SLURM = 16, PAUSE = 32 };
        /* act: the config.json action whose key the hint shows (a rebound "quit": "x" says
         * "x quit", not a q that no longer quits); -1 for the keys that cannot be rebound,
         * VIEWS for the three view keys. */
        enum { FIXED = -1, VIEWS = -2 };
        static const struct {
            const char *key, *what;
            int rank; /* 0: the last to go */
            int where;
            int act;
        } HINTS[] = {{"?", "help", 0, ALL, ACT_HELP},
                     {"1-3", "views", 2, ALL, VIEWS},
                     {"/", "filter", 6, TUNE, ACT_FILTER},
                     {":", "command", 3, ALL, ACT_COMMAND},
                     {"e", "edit", 5, TUNE, ACT_EDIT},
                     {"PgUp/PgDn", "jobs", 5, CLUSTER, FIXED},
                     {"a", "accept key", 5, HOSTS | SSH, FIXED},
                     {"c", "reconnect", 6, HOSTS | SSH, FIXED},
                     {"d/u", "drain/undrain", 5, HOSTS | SLURM, FIXED},
                     {"Space", "pause", 4, TUNE | CLUSTER | HOSTS | PAUSE, ACT_PAUSE},
                     {"q", "quit", 1, ALL, ACT_QUIT}};
        enum { N_HINTS = sizeof HINTS / sizeof HINTS[0] };
        char bound[N_HINTS][8];
        const char *key[N_HINTS];
        const char *v = a->config.keys + ACT_VIEW_TUNE;
        for (int i = 0; i < N_HINTS; i++) {
            int act = HINTS[i].act;
            key[i] = bound[i];
            if (act == VIEWS && (v[0] != '1' || v[1] != '2' || v[2] != '3'))
                snprintf(bound[i], sizeof bound[i], "%c/%c/%c", v[0], v[1], v[2]);
            else if (act >= 0 && a->config.keys[act] != HINTS[i].key[0])
                snprintf(bound[i], sizeof bound[i], "%s",
                         a->config.keys[act] == ' ' ? "Space" : (char[]){a->config.keys[act], 0});
            else
                key[i] = HINTS[i].key;
        }
        /* without tuning (the live scheduler only) the tune view has no trial to filter
         * or edit */
        int here = a->view == VIEW_TUNE      ? (a->tuner ? TUNE : 0)
                   : a->view == VIEW_CLUSTER ? CLUSTER
                                             : HOSTS;
        /* Space pauses tuning and the simulated scheduler: not offered without either */
        int has = (a->slurm ? SLURM : 0) | (a->pool && !a->slurm ? SSH : 0) |
                  (app_pausable(a) ? PAUSE : 0);
        /* Paused, Space resumes: the hint says what the key does now (the help says both). */
        const char *what[N_HINTS];
        for (int i = 0; i < N_HINTS; i++)
            what[i] = HINTS[i].where & PAUSE && a->user_paused ? "resume" : HINTS[i].what;
        int shown[N_HINTS] = {0}, used = 0;
        for (int rank = 0; rank < N_HINTS; rank++)
            for (int i = 0; i < N_HINTS; i++) {
                int where = HINTS[i].where, needs = where & (SSH | SLURM | PAUSE);
                int w = 3 + (int)strlen(key[i]) + (int)strlen(what[i]);
                int applies = where == ALL || ((where & here) && (needs & has) == needs);
                if (applies && HINTS[i].rank == rank && used + w <= r.w) {
                    shown[i] = 1;
                    used += w;
                }
            }
        int x = 0;
        for (int i = 0; i < N_HINTS; i++) {
            if (!shown[i])
                continue;
            x += draw_textf(r.y, x, r.w - x, ROLE_KEY, " %s", key[i]);
            x += draw_textf(r.y, x, r.w - x, ROLE_STATUS, " %s ", what[i]);
        }
    }
}

/* No pane of the view fits: say so where something shows, instead of a blank screen. */
static void draw_too_small(const App *a)
{
    for (int i = 0; i < a->layout.n; i++) {
        PaneId p = a->layout.id[i];
        if (p != PANE_TABS && p != PANE_STATUS && a->layout.shown[p])
            return;
    }
    int y = LINES > 2 ? 1 : 0;
    char text[64]; /* the quit key as config.json binds it */
    snprintf(text, sizeof text, "Terminal too small: enlarge it (%s quits)",
             a->config.keys[ACT_QUIT] == ' ' ? "Space" : (char[]){a->config.keys[ACT_QUIT], 0});
    draw_wrapped(y, 0, COLS, LINES - y - (LINES > 2), ROLE_WARN, text);
}

/* A pane this size hides is said on the bottom border, with the size that shows it (a
 * small screen dropped panes without a word): " log hidden: 36 rows show it ", the names left
 * out where they do not fit, nothing where that does not either. Not on a screen too small
 * for any pane: draw_too_small says that. */
static void draw_hidden(const App *a, unsigned flags)
{
    int y = LINES - 2, any = 0;
    for (int p = PANE_TABS; p < PANE_COUNT; p++)
        any |= p != PANE_TABS && p != PANE_STATUS && a->layout.shown[p];
    int need_cols, need_rows;
    int n = layout_hidden(&a->layout, flags, &need_cols, &need_rows);
    if (!any || !n || y < 2)
        return;
    char names[160] = "", need[48] = "", text[240];
    for (int i = 0, used = 0; i < a->layout.n; i++) {
        PaneId p = a->layout.id[i];
        if (p != PANE_TABS && p != PANE_STATUS && !a->layout.shown[p])
            used += snprintf(names + used, sizeof names - (size_t)used, "%s%s", used ? ", " : "",
                             layout_pane_name(p));
    }
    const char *them = n == 1 ? "it" : "them";
    if (!need_cols)
        snprintf(need, sizeof need, "no size up to %dx%d shows %s", LAYOUT_FIT_MAX_COLS,
                 LAYOUT_FIT_MAX_ROWS, them);
    else if (need_cols == COLS)
        snprintf(need, sizeof need, "%d rows show %s", need_rows, them);
    else if (need_rows == LINES)
        snprintf(need, sizeof need, "%d columns show %s", need_cols, them);
    else
        snprintf(need, sizeof need, "%dx%d shows %s", need_cols, need_rows, them);
    snprintf(text, sizeof text, " %s hidden: %s ", names, need);
    if (draw_width(text) + 4 > COLS)
        snprintf(text, sizeof text, " %d pane%s hidden: %s ", n, n == 1 ? "" : "s", need);
    int w = draw_width(text);
    if (w + 4 <= COLS) /* whole, off the corners */
        draw_text(y, COLS - 2 - w, w, ROLE_DIM, text);
}

void frame_draw(App *a)
{
    erase();
    unsigned flags = (a->editor ? LAYOUT_EDITOR_OPEN : 0) | (a->slurm ? LAYOUT_SLURM : 0) |
                     (a->tuner ? 0 : LAYOUT_NO_TUNE);
    layout_compute(COLS, LINES, a->view, flags, &a->layout);
    view_trials_clamp_scroll(a); /* the pane may have changed size, or a trial arrived */
    draw_tabs(a);
    view_get(a->view)->draw(a);
    draw_hidden(a, flags);
    draw_too_small(a);
    draw_status(a);
    if (a->help) {
        /* The help lists the default keys; the ones config.json moved are named in its title. */
        char rebound[160] = "";
        ConsoleConfig defaults;
        config_defaults(&defaults);
        for (int i = 0, n = 0; i < ACT_COUNT; i++)
            if (a->config.keys[i] != defaults.keys[i] && n < (int)sizeof rebound)
                n += snprintf(rebound + n, sizeof rebound - (size_t)n, "%s%s %s", n ? ", " : "",
                              a->config.keys[i] == ' ' ? "Space"
                                                       : (char[]){a->config.keys[i], 0},
                              config_action_name((KeyAction)i));
        a->help_top = keys_draw_help(COLS, LINES, a->help_top, rebound);
    }
    else if (a->log_view)
        a->log_back = logview_draw(a, COLS, LINES, a->log_back);
    wnoutrefresh(stdscr);
    doupdate();
    a->frames++;
    a->dirty = 0;
}
