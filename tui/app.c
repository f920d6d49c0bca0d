/* What the console can do to its state, shared by the keys, the `:` commands, the mouse and
 * the loop: the log and status line, the trial table and its selection, the override
 * editor, the theme, the pause, the settings file. Views only read the App. */
#include "tui/app.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "tui/queuepred.h"
#include "tui/term.h"
#include "tui/theme.h"

enum { KEY_ESC = 27 };

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
    if (!recs) { /* as trials_build does: the table shows what it had, and says why */
        app_message(a, 1, "out of memory: the trial table was not updated");
        return;
    }
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

const char *app_themes_dir(const App *a)
{
    return a->themes_dir ? a->themes_dir : "themes";
}

int app_set_theme(App *a, const char *name)
{
    Theme t;
    Error err;
    int rc = theme_load(app_themes_dir(a), name, &t, &err);
    /* A theme that does not load leaves the one on screen (a typo in :theme once reset the
     * colours to the default's); only at start is there none to keep. */
    if (rc < 0 && a->theme_applied) {
        app_message(a, 1, "theme '%s' not loaded, the current one kept: %s", name, err.msg);
        return rc;
    }
    if (rc < 0)
        app_message(a, 1, "theme '%s': %s (using the default)", name, err.msg);
    theme_apply(&t, term_colors());
    a->theme_applied = 1;
    a->dirty = 1;
    clearok(curscr, TRUE);
    return rc;
}

int app_trials_held(const App *a)
{
    return a->user_paused || a->slurm_hold || a->stop_hold;
}

void app_set_pause(App *a, int paused)
{
    a->user_paused = paused;
    if (a->tuner)
        tuner_set_paused(a->tuner, app_trials_held(a));
    if (!paused)
        a->next_trial_ms = clock_now_ms();
    app_log(a, paused ? "paused: no new trial starts" : "resumed");
}

int app_pausable(const App *a)
{
    return a->tuner || (a->ss && !simsched_live(a->ss));
}

void app_ask_pause(App *a, int paused)
{
    /* Without tuning or the simulated scheduler, a pause would only log "paused: no new
     * trial starts" while the live jobs run on and the tab bar says "running". */
    if (!app_pausable(a)) {
        app_message(a, 0, "nothing to pause: Space pauses tuning, and there is none here%s",
                    a->ss ? "; the live jobs keep running (:pause JOB stops one, q stops all)"
                          : "");
        return;
    }
    app_set_pause(a, paused);
}

int app_quit_drops_overrides(const App *a)
{
    /* derived, never a flag: a journal whose write failed (a full disk) keeps nothing more */
    return a->tuner && tuner_overrides(a->tuner) &&
           !(a->journal && !tune_journal_failed(a->journal));
}

/* Quitting while trials or live jobs run asks first (once the live run is over, nothing
 * runs: it asked "Live jobs run: quitting checkpoints and stops them" with none left). */
void app_ask_quit(App *a)
{
    SchedLive *live = a->ss ? simsched_live(a->ss) : NULL;
    if ((a->tuner && (tuner_running(a->tuner) || (!tuner_done(a->tuner) && !a->user_paused))) ||
        (live && !schedlive_done(live)) || app_quit_drops_overrides(a))
        a->confirm_quit = 1;
    else
        a->quit = 1;
}

int app_save_config(App *a)
{
    Error err;
    if (!a->config_file[0])
        return 0;
    if (a->config_bad) {
        app_message(a, 1, "settings not saved: %s has errors (said at start); fix or remove it",
                    a->config_file);
        return -1;
    }
    if (config_save(a->config_file, &a->config, &err) < 0) {
        app_message(a, 1, "settings not saved: %s", err.msg);
        return -1;
    }
    return 0;
}

const TrialRecord *app_current_trial(const App *a)
{
    size_t n = a->tuner ? tuner_n_trials(a->tuner) : 0;
    return n ? tuner_trial(a->tuner, n - 1) : NULL;
}

void app_refresh_prediction(App *a)
{
    Editor *e = a->editor;
    a->edit_valid = editor_check(e, &a->edit_err) == 0;
    suggestion_clear(&a->pred);
    memset(&a->pred, 0, sizeof a->pred);
    Error err;
    int rc = tuner_predict(a->tuner, e->s, &a->pred, &err);
    if (rc == 0) {
        a->pred_ok = 1;
        a->pred_why[0] = 0;
        if (!a->pred.has_prediction)
            snprintf(a->pred_why, sizeof a->pred_why, "%s has no model",
                     tuner_optimizer_name(a->tuner));
    } else {
        /* a retry while busy shows what the last one did: no redraw every 50 ms for it */
        int shown = !a->pred_ok && strcmp(a->pred_why, err.msg) == 0;
        a->pred_ok = 0;
        suggestion_clear(&a->pred);
        memset(&a->pred, 0, sizeof a->pred);
        snprintf(a->pred_why, sizeof a->pred_why, "%s", err.msg);
        if (rc == TUNER_PREDICT_BUSY) {
            a->dirty |= !shown;
            return; /* stays stale: the loop asks again in 50 ms */
        }
    }
    a->pred_version = e->version;
    a->pred_stale = 0;
    a->dirty = 1;
}

void app_refresh_queue_predictions(App *a)
{
    if (queuepred_update(&a->queue_pred, a->tuner) > 0)
        a->dirty = 1;
    a->queue_pred_stale = a->queue_pred.busy;
}

int app_prediction_retry_due(const App *a)
{
    return (a->editor && a->pred_stale) || a->queue_pred_stale;
}

void app_open_editor(App *a)
{
    const TrialRecord *rec = NULL;
    if (a->sel < a->table.n_shown)
        rec = a->table.rows[a->table.order[a->sel]].rec;
    if (!rec)
        rec = app_current_trial(a);
    if (!rec) {
        app_message(a, 1, "no schedule to edit yet: wait for the first suggestion");
        return;
    }
    editor_free(a->editor);
    a->editor = editor_new(rec->suggestion.schedule);
    a->pred_stale = 1;
    a->view = VIEW_TUNE;
    app_message(a, 0,
                "editing trial %d's schedule: + - move inputs, m source, w/p roles, "
                "Enter launch, Esc discard",
                rec->trial);
}

void app_close_editor(App *a)
{
    editor_free(a->editor);
    a->editor = NULL;
    a->pred_stale = 0; /* no editor's prediction is left to ask for */
    suggestion_clear(&a->pred);
    memset(&a->pred, 0, sizeof a->pred);
    a->dirty = 1;
}

static void launch_edit(App *a)
{
    Error err;
    if (editor_check(a->editor, &err) < 0) {
        app_message(a, 1, "not launched: %s", err.msg);
        return;
    }
    /* Overrides queue in order behind those made before (while paused, or before the running
     * trial ends): each is promised its own trial, and none takes another's place. */
    /* The budget raised for it (given back if it is dropped) in the same journal line. */
    if (tuner_override_fitted(a->tuner, a->editor->s, &err) < 0) {
        app_message(a, 1, "not launched: %s", err.msg);
        return;
    }
    size_t queued = tuner_overrides(a->tuner);
    int trial = tuner_override_trial(a->tuner, queued - 1);
    a->next_trial_ms = clock_now_ms(); /* no pacing wait for the operator's own trial */
    app_log(a, "override queued as trial %d (%zu queued)", trial, queued);
    app_message(a, 0, "override launches as trial %d (%zu queued, %c drops the last)%s", trial,
                queued, a->config.keys[ACT_DROP], a->user_paused ? " (paused: Space resumes)" : "");
    app_close_editor(a);
}

void app_editor_key(App *a, int ch)
{
    Editor *e = a->editor;
    unsigned before = e->version;
    switch (ch) {
    case KEY_UP:
    case 'k':
        editor_cursor_move(e, -1);
        break;
    case KEY_DOWN:
    case 'j':
        editor_cursor_move(e, 1);
        break;
    case KEY_PPAGE:
        editor_cursor_move(e, -10);
        break;
    case KEY_NPAGE:
        editor_cursor_move(e, 10);
        break;
    case '+':
    case '=':
    case KEY_RIGHT:
    case 'l':
        if (editor_adjust(e, 1) == 0)
            app_message(a, 1,
                        e->rows[e->cursor].device < 0 ? "select a device row to move inputs"
                                                      : "the source device has no input left");
        break;
    case '-':
    case KEY_LEFT:
    case 'h':
        if (editor_adjust(e, -1) == 0)
            app_message(a, 1,
                        e->rows[e->cursor].device < 0 ? "select a device row to move inputs"
                                                      : "this device has no input to give");
        break;
    case 'm':
        if (editor_toggle_mark(e) < 0)
            app_message(a, 1, "the source must be a device row");
        break;
    case 'w':
        editor_toggle_worker(e);
        break;
    case 'p':
        editor_toggle_ps(e);
        break;
    case '[':
        editor_cycle_step(e, -1);
        break;
    case ']':
        editor_cycle_step(e, 1);
        break;
    case '\r':
    case '\n':
    case KEY_ENTER:
        launch_edit(a);
        return;
    case KEY_ESC:
    case 'd':
        app_close_editor(a);
        app_message(a, 0, "edit discarded");
        return;
    default:
        return;
    }
    if (e->version != before)
        a->pred_stale = 1;
    a->dirty = 1;
}

/* Takes the i-th queued override out (the tuner journals it: override_dropped); those after
 * it run one trial earlier. */
static void drop_queued(App *a, size_t i, size_t n)
{
    int trial = tuner_override_trial(a->tuner, i), was = tuner_budget(a->tuner);
    tuner_override_drop(a->tuner, i);
    const char *after = i + 1 < n ? " (those after it run one trial earlier)" : "";
    /* the raise made for it given back (tuner_override_drop): said, as :budget N says it */
    char budget[64] = "";
    if (tuner_budget(a->tuner) != was)
        snprintf(budget, sizeof budget, "; budget %d -> %d", was, tuner_budget(a->tuner));
    app_log(a, "override queued as trial %d dropped (%zu queued)%s%s", trial, n - 1, after, budget);
    app_message(a, 0, "override queued as trial %d dropped; %zu still queued%s%s", trial, n - 1,
                after, budget);
    a->dirty = 1;
}

void app_drop_override(App *a)
{
    size_t n = a->tuner ? tuner_overrides(a->tuner) : 0;
    if (n == 0) {
        app_message(a, 1, "no override is queued (e edits a trial's schedule as one)");
        return;
    }
    drop_queued(a, n - 1, n);
}

int app_unqueue_override(App *a, long trial)
{
    size_t n = a->tuner ? tuner_overrides(a->tuner) : 0;
    if (n == 0) {
        app_message(a, 1, ":unqueue: no override is queued (e edits a trial's schedule as one)");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (tuner_override_trial(a->tuner, i) == trial) {
            drop_queued(a, i, n);
            return 0;
        }
    int first = tuner_override_trial(a->tuner, 0), last = tuner_override_trial(a->tuner, n - 1);
    if (n == 1)
        app_message(a, 1, ":unqueue: trial %ld is not queued; the queued override is trial %d",
                    trial, first);
    else
        app_message(a, 1,
                    ":unqueue: trial %ld is not queued; the queued overrides are trials %d-%d",
                    trial, first, last);
    return -1;
}

void app_select_trial(App *a, long delta)
{
    if (a->table.n_shown == 0)
        return;
    long s = (long)a->sel + delta;
    if (s < 0)
        s = 0;
    if (s >= (long)a->table.n_shown)
        s = (long)a->table.n_shown - 1;
    a->sel = (size_t)s;
    a->follow = a->sel + 1 == a->table.n_shown && a->sort == TRIAL_COL_NUMBER && !a->sort_desc;
    a->dirty = 1;
}
